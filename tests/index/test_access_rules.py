"""Access rules (webark.index.access_rules): longest SURT prefix wins, time-limited rules,
embargoes, plain URLs, IDNs, clear errors; applied to pywb's iana.warc.gz crawl
(2014-01-26) through closest()."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.index.access_rules import AccessRules, AccessRulesError, Embargo, load_access_rules
from webark.index.capture_select import captures, closest
from webark.index.collection import Collection

RULES = """\
# rules for the iana.org crawl of 2014-01-26
- surt: "http://(org,iana,"
  policy: block
  note: whole domain blocked
- surt: "http://(org,iana,www,)/_img/"
  policy: allow
- url: "https://www.iana.org/domains/"
  policy: exclude
- surt: "http://(org,iana,www,)/_css/2013.1/fonts/opensans-bold.ttf"
  policy: allow
- surt: "http://(org,iana,www,)/_css/2013.1/fonts/opensans-bold.ttf"
  policy: exclude
  capture_from: "20140126200700"
  capture_to: 2014-01-26T20:10:00Z
- surt: "http://(org,iana,www,)/_js/"
  policy: exclude
  embargo: P1Y
"""

NOW_2014 = datetime(2014, 6, 1, tzinfo=UTC)


@pytest.fixture
def rules(tmp_path: Path) -> AccessRules:
    p = tmp_path / "access.yaml"
    p.write_text(RULES, encoding="utf-8")
    return AccessRules.load(p)


@pytest.mark.parametrize(
    ("url", "ts", "policy", "rule"),
    [
        ("http://www.iana.org/", "20140126200624", "block", 1),
        ("http://iana.org/", "20140126200624", "block", 1),
        ("http://www.iana.org/_img/2013.1/iana-logo-homepage.png", "20140126200625", "allow", 2),
        ("http://www.iana.org/domains/example", "20140126200706", "exclude", 3),
        ("http://www.iana.org/domains", "20140126200706", "block", 1),  # no final /
        # same prefix: the time-limited rule inside its range, the plain one outside
        ("http://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf", "20140126200706",
         "exclude", 5),
        ("https://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf", "20140126201000",
         "exclude", 5),
        ("http://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf", "20140126201001",
         "allow", 4),
        ("http://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf", "20140126200625",
         "allow", 4),
        # embargo P1Y from 2014-06-01: the 2014-01-26 capture is embargoed
        ("http://www.iana.org/_js/2013.1/iana.js", "20140126200625", "exclude", 6),
        ("http://example.com/", "20140126200625", "allow", None),
    ],
)
def test_decisions(rules: AccessRules, url: str, ts: str, policy: str, rule: int | None) -> None:
    d = rules.decide(url, ts, now=NOW_2014)
    assert d.policy == policy
    assert (d.rule.index if d.rule else None) == rule


def test_embargo_ends(rules: AccessRules) -> None:
    js = "http://www.iana.org/_js/2013.1/iana.js"
    assert rules.decide(js, "20140126200625", now=NOW_2014).policy == "exclude"
    later = rules.decide(js, "20140126200625", now=datetime(2015, 1, 27, tzinfo=UTC))
    assert (later.policy, later.rule and later.rule.index) == ("block", 1)
    assert len(rules) == 6 and rules.rules[0].note == "whole domain blocked"


def test_on_the_iana_crawl(tmp_path: Path, corpus: Path, rules: AccessRules) -> None:
    coll = Collection.init(tmp_path / "c")
    (r,) = coll.add([corpus / "pywb/warcs/iana.warc.gz"])
    assert r.status == "indexed", r.message
    src = coll.source()
    bold = "http://www.iana.org/_css/2013.1/fonts/OpenSans-Bold.ttf"
    ex = rules.excluder(NOW_2014)
    got = closest(src, bold, "20140126200800", exclude=ex)
    # iana.cdx: 8 captures (200706 … 200930) are in the excluded window 2007-2010
    assert all(not ("20140126200700" <= x.timestamp <= "20140126201000") for x in got)
    assert [x.timestamp for x in got[:2]] == ["20140126200654", "20140126200625"]
    assert len(got) == len(closest(src, bold, "20140126200800")) - 8
    all_lines = list(captures(src, "http://www.iana.org/", "host"))
    kept = list(rules.filter_lines(all_lines, NOW_2014))
    excluded = {x.url for x in all_lines} - {x.url for x in kept}
    assert any("/domains/" in u for u in excluded) and any(u.endswith("iana.js") for u in excluded)
    assert len(kept) < len(all_lines)


def test_idn_prefix_matches_both_forms() -> None:
    rules = AccessRules.loads('- {surt: "http://(is,landsbókasafn,", policy: exclude}\n')
    assert rules.decide("http://xn--landsbkasafn-5hb.is/x", "2020").policy == "exclude"
    assert rules.decide("https://www.landsbókasafn.is/", "2020").policy == "exclude"
    assert rules.decide("http://landsbokasafn.is/", "2020").policy == "allow"


def test_plain_url_and_host_forms() -> None:
    rules = AccessRules.loads(
        "rules:\n"
        "  - {url: example.org/private, policy: block}\n"
        "  - {surt: '(org,example,)/public', policy: allow}\n"
    )
    assert [r.prefix for r in rules.rules] == [
        "http://(org,example,)/private", "http://(org,example,)/public"]
    assert rules.decide("https://example.org/private/x.html", "2021").policy == "block"
    assert rules.decide("https://example.org/privateer", "2021").policy == "block"
    assert rules.decide("https://www.example.org/private", "2021").policy == "allow"
    assert AccessRules.loads("").rules == [] and len(load_access_rules(None)) == 0


def test_embargo_parsing() -> None:
    leap = datetime(2024, 2, 29, 12, tzinfo=UTC)
    assert Embargo.parse("P1Y").since(leap) == datetime(2023, 2, 28, 12, tzinfo=UTC)
    assert Embargo.parse("P6M").since(leap) == datetime(2023, 8, 29, 12, tzinfo=UTC)
    assert Embargo.parse("p1m").since(datetime(2024, 3, 31, tzinfo=UTC)) == datetime(
        2024, 2, 29, tzinfo=UTC)
    assert Embargo.parse("P30D").since(leap) == datetime(2024, 1, 30, 12, tzinfo=UTC)
    assert Embargo.parse(30) == Embargo.parse("30") == Embargo(days=30, text="P30D")
    assert Embargo.parse("P1W").days == 7 and Embargo.parse("PT12H").seconds == 43200
    for bad in ("P", "PT", "1Y", "P1.5Y", -3, True, "P1H"):
        with pytest.raises(ValueError):
            Embargo.parse(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- {surt: 'http://(org,a,', policy: allow}\n- {surt: 'http://(org,b,', policy: deny}",
         r"rule 2, key 'policy': expected one of allow, block, exclude, got 'deny'"),
        ("- {surt: 'http://(org,a,', policy: block, embargo: P1X}",
         r"rule 1, key 'embargo': not an ISO 8601 duration"),
        ("- {surt: 'http://(org,a,', policy: block, capture_from: '2015-13'}",
         r"rule 1, key 'capture_from'"),
        ("- {surt: 'http://(org,a,', policy: block, capture_from: 2016, capture_to: 2015}",
         r"rule 1, key 'capture_to': is before capture_from"),
        ("- {surt: 'http://(org,a,', policy: block, captureto: 2015}",
         r"rule 1, key 'captureto': unknown key"),
        ("- {policy: block}", r"rule 1, key 'url': missing or empty"),
        ("- just a string", r"rule 1: expected a mapping"),
        ("surt: x", r"unknown top-level key 'surt'"),
        ("- [unclosed", r"not valid YAML"),
        ("42", r"expected a list of rules"),
    ],
)
def test_errors_name_rule_and_key(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(AccessRulesError, match=message) as e:
        AccessRules.load(p)
    assert str(p) in str(e.value)


def test_time_bounds_forms() -> None:
    rules = AccessRules.loads(
        "- {surt: 'http://(org,a,', policy: block, capture_from: 2015-06-30,"
        " capture_to: '2015-07'}\n"
        "- {surt: 'http://(org,b,', policy: block, capture_from: 2015,"
        " capture_to: '2015-06-30T12:00:00+02:00'}\n"
    )
    a, b = rules.rules
    assert (a.capture_from, a.capture_to) == ("20150630000000", "20150731235959")
    assert (b.capture_from, b.capture_to) == ("20150101000000", "20150630100000")
    assert rules.decide("http://a.org/", "20150629235959").policy == "allow"
    assert rules.decide("http://a.org/", "20150731").policy == "block"
    assert rules.decide("http://b.org/", "20150630100001").policy == "allow"
