"""robots.txt (RFC 9309) on damaged and hostile bodies: real robots.txt files of the
corpus (protego's real-world set) with bytes replaced, random bytes, and very long
rules. :class:`RobotsPolicy` never raises on a body ("decoded leniently … never
raises"), ``allowed`` is a bool for any URL path, and the answers obey RFC 9309 §2.2.2
where the rule set is known: a body without rules allows everything."""

from __future__ import annotations

import pytest
from fuzz_support import FUZZ, TIMEOUT
from hypothesis import given
from hypothesis import strategies as st

from corpus_location import CORPUS
from webark.robots.policy import RobotsPolicy

pytestmark = pytest.mark.timeout(TIMEOUT)

REAL = [p.read_bytes() for p in sorted((CORPUS / "robots/protego-real-world").iterdir())[:12]]


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["real", "random", "rules"]))
    if kind == "random":
        return draw(st.binary(max_size=2000))
    if kind == "rules":
        rule = st.builds(lambda k, v: k + b":" + v,
                         st.sampled_from([b"User-agent", b"Disallow", b"Allow", b"Crawl-delay",
                                          b"Sitemap", b"Request-rate", b"Visit-time", b"x"]),
                         st.binary(max_size=80))  # fmt: skip
        return b"\n".join(draw(st.lists(rule, max_size=40)))
    data = bytearray(draw(st.sampled_from(REAL)))
    for _ in range(draw(st.integers(1, 8))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


PATHS = st.text(max_size=120).map(lambda p: "https://site.test/" + p.lstrip("/"))
AGENTS = st.sampled_from(["webark", "Googlebot", "*", "", "web ark/1.0"])


@FUZZ
@given(bodies(), st.lists(PATHS, min_size=1, max_size=5), AGENTS)
def test_any_body_gives_bool_answers(body: bytes, urls: list[str], agent: str) -> None:
    policy = RobotsPolicy(body)
    for url in urls:
        assert isinstance(policy.allowed(url, agent), bool)
    delay = policy.crawl_delay(agent)
    assert delay is None or delay >= 0
    assert all(isinstance(s, str) for s in policy.sitemaps)


@FUZZ
@given(st.binary(max_size=500).filter(lambda b: b":" not in b), PATHS)
def test_a_body_without_rules_allows_everything(body: bytes, url: str) -> None:
    assert RobotsPolicy(body).allowed(url, "webark")
