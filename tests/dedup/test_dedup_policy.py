"""DedupPolicy: plain data in, a decision out."""

from __future__ import annotations

import pytest

from webark.dedup.policy import Decision, DedupPolicy, is_empty_digest

D = "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"
EMPTY = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


def test_default_dedups_everything_with_status_200() -> None:
    p = DedupPolicy()
    assert p.decide(200, "text/html; charset=utf-8", 1234, D) == Decision("lookup", "ok")
    assert p.decide(None, "image/png", None, D).action == "lookup"  # resource record
    assert p.decide(404, "text/html", 1234, D) == Decision("store", "status")
    assert p.decide(-5003, None, None, None).reason == "status"
    assert p.decide(200, "text/html", 10, None) == Decision("store", "no-digest")
    assert p.decide(200, "text/html", 10, "-").reason == "no-digest"


def test_statuses() -> None:
    p = DedupPolicy(statuses=frozenset({200, 404}))
    assert p.decide(404, "text/html", 10, D).dedup
    assert not p.decide(301, "text/html", 10, D).dedup


@pytest.mark.parametrize(
    ("mime", "skipped"),
    [
        ("text/html", True),
        ("Text/HTML; charset=UTF-8", True),
        ("text/plain", False),
        ("video/mp4", True),
        ("audio/mpeg", True),
        ("image/png", False),
        (None, False),
    ],
)
def test_skip_mime_types(mime: str | None, skipped: bool) -> None:
    p = DedupPolicy(skip_mime_types=("text/html", "video/", "audio/*"))
    d = p.decide(200, mime, 100, D)
    assert d == (Decision("store", "mime") if skipped else Decision("lookup", "ok"))


def test_only_mime_types() -> None:
    p = DedupPolicy(only_mime_types=("image/",))
    assert p.decide(200, "image/jpeg", 100, D).dedup
    assert p.decide(200, "text/css", 100, D).reason == "mime"
    assert p.decide(200, None, 100, D).reason == "mime"


def test_min_size_in_bytes() -> None:
    p = DedupPolicy(min_size=1024)
    assert p.decide(200, "text/css", 1023, D) == Decision("store", "size")
    assert p.decide(200, "text/css", 1024, D).dedup
    assert p.decide(200, "text/css", None, D).dedup  # unknown size passes


def test_empty_payload() -> None:
    assert is_empty_digest(EMPTY)
    assert is_empty_digest("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
    assert is_empty_digest("sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709")
    assert is_empty_digest(
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert not is_empty_digest(D)
    assert not is_empty_digest("garbage")
    assert DedupPolicy().decide(200, "text/html", 0, EMPTY) == Decision("store", "empty")
    d = DedupPolicy(empty_payload="revisit").decide(200, "text/html", 0, EMPTY)
    assert d == Decision("revisit-without-original", "empty")
    assert d.dedup
    # status is checked first: an empty 404 is a status skip
    assert DedupPolicy().decide(404, "text/html", 0, EMPTY).reason == "status"


def test_check_capture_looks_up_only_when_the_policy_says_so() -> None:
    from webark.dedup.policy import check_capture
    from webark.dedup.sqlite_dedup import open_index

    with open_index(":memory:") as idx:
        p = DedupPolicy(skip_mime_types=("text/html",))
        assert check_capture(idx, p, "http://a.example/", 200, "image/png", 10, D) == (
            Decision("lookup", "ok"),
            None,
        )
        idx.add("http://a.example/", D, "2024-01-01T00:00:00Z")
        decision, hit = check_capture(idx, p, "http://b.example/", 200, "image/png", 10, D)
        assert decision.action == "lookup" and hit is not None and not hit.exact_url
        assert check_capture(idx, p, "http://a.example/", 200, "text/html", 10, D) == (
            Decision("store", "mime"),
            None,
        )
        assert check_capture(idx, p, "http://a.example/", 200, "image/png", 0, EMPTY)[0] == (
            Decision("store", "empty")
        )
