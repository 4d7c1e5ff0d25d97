"""The SQLite dedup index: exact-URL vs digest-only lookups, which original is preferred,
last capture per URL, persistence and crash safety."""

from __future__ import annotations

import itertools
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from webark.dedup import DedupHit, DedupIndex, LastCapture
from webark.dedup.sqlite_dedup import SqliteDedupIndex, date_micros, digest_bytes, open_index
from webark.warc.builders import Original

D1 = "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A"
D2 = "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB"
D1_HEX = digest_bytes(D1).hex()


@pytest.fixture
def idx(tmp_path: Path) -> SqliteDedupIndex:
    return open_index(tmp_path / "dedup.sqlite")


def test_is_a_dedup_index(idx: SqliteDedupIndex) -> None:
    as_protocol: DedupIndex = idx  # checked by mypy: signatures match the protocol
    assert isinstance(as_protocol, DedupIndex)


def test_exact_url_preferred_over_digest_only(idx: SqliteDedupIndex) -> None:
    idx.add("http://other.example/a", D1, "2014-01-01T00:00:00Z")  # earlier, other URL
    idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z", "<urn:uuid:x>", "a.warc.gz", 334)
    hit = idx.lookup("http://example.com/", D1)
    assert hit == DedupHit(
        Original("http://example.com/", "2014-01-27T17:12:00Z", "<urn:uuid:x>", D1),
        exact_url=True,
        warc_filename="a.warc.gz",
        offset=334,
    )
    # another URL with the same payload: digest-only hit on the preferred (earliest) one
    other = idx.lookup("http://third.example/", D1)
    assert other is not None
    assert not other.exact_url
    assert other.original.target_uri == "http://other.example/a"
    assert other.original.record_id is None
    assert other.warc_filename is None and other.offset is None


def test_exact_means_same_canonical_key(idx: SqliteDedupIndex) -> None:
    idx.add("http://www.Example.com/p?b=2&a=1", D1, "2014-01-27T17:12:00Z")
    hit = idx.lookup("HTTP://example.com/p?a=1&b=2", D1)
    assert hit is not None and hit.exact_url
    assert hit.original.target_uri == "http://www.Example.com/p?b=2&a=1"  # as captured
    assert hit.kind("HTTP://example.com/p?a=1&b=2") == "canonical-url"
    assert hit.kind("http://www.Example.com/p?b=2&a=1") == "exact-url"
    other = idx.lookup("http://elsewhere.example/", D1)
    assert other is not None and other.kind("http://elsewhere.example/") == "digest-only"


def test_digest_only_hit_can_be_exact_when_keys_match(idx: SqliteDedupIndex) -> None:
    # the by_digest row points at the looked-up URL's own key
    idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z")
    hit = idx.lookup("http://example.com", D1)
    assert hit is not None and hit.exact_url


def test_any_digest_encoding_finds_the_same_original(idx: SqliteDedupIndex) -> None:
    idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z")
    for form in (D1, D1.removeprefix("sha1:"), D1_HEX, f"sha1:{D1_HEX}", D1.lower()):
        hit = idx.lookup("http://example.com/", form)
        assert hit is not None, form
        assert hit.original.payload_digest == D1


def test_misses(idx: SqliteDedupIndex) -> None:
    assert idx.lookup("http://example.com/", D1) is None
    idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z")
    assert idx.lookup("http://example.com/", D2) is None
    assert idx.lookup("http://example.com/", "not-a-digest") is None
    assert idx.lookup("http://example.com/", "-") is None


def test_add_rejects_bad_digest_and_date(idx: SqliteDedupIndex) -> None:
    with pytest.raises(ValueError):
        idx.add("http://example.com/", "sha1:XYZ", "2014-01-27T17:12:00Z")
    with pytest.raises(ValueError):
        idx.add("http://example.com/", D1, "yesterday")


CAPTURES = [
    ("http://a.example/", "2014-03-01T00:00:00Z"),
    ("http://b.example/", "2014-01-01T00:00:00Z"),
    ("http://c.example/", "2014-02-01T00:00:00Z"),
]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_earliest_original_whatever_the_load_order(tmp_path: Path, order: tuple[int, ...]) -> None:
    with open_index(tmp_path / "e.sqlite") as idx:
        for i in order:
            idx.add(CAPTURES[i][0], D1, CAPTURES[i][1])
            idx.add("http://same.example/", D2, CAPTURES[i][1])
        hit = idx.lookup("http://elsewhere.example/", D1)
        assert hit is not None and not hit.exact_url
        assert (hit.original.target_uri, hit.original.date) == CAPTURES[1]
        same = idx.lookup("http://same.example/", D2)
        assert same is not None and same.exact_url
        assert same.original.date == "2014-01-01T00:00:00Z"


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_latest_original_when_asked(tmp_path: Path, order: tuple[int, ...]) -> None:
    with open_index(tmp_path / "l.sqlite", prefer="latest") as idx:
        for i in order:
            idx.add(CAPTURES[i][0], D1, CAPTURES[i][1])
            idx.add("http://same.example/", D2, CAPTURES[i][1])
        hit = idx.lookup("http://elsewhere.example/", D1)
        assert hit is not None
        assert (hit.original.target_uri, hit.original.date) == CAPTURES[0]
        same = idx.lookup("http://same.example/", D2)
        assert same is not None and same.original.date == "2014-03-01T00:00:00Z"


def test_ties_keep_the_first_stored(idx: SqliteDedupIndex) -> None:
    idx.add("http://a.example/", D1, "2014-01-01T00:00:00Z")
    idx.add("http://b.example/", D1, "2014-01-01T00:00:00Z")
    hit = idx.lookup("http://z.example/", D1)
    assert hit is not None and hit.original.target_uri == "http://a.example/"


def test_preference_is_stored_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite"
    open_index(path, prefer="latest").close()
    with open_index(path) as again:
        assert again.prefer == "latest"
    with pytest.raises(ValueError, match="latest"):
        open_index(path, prefer="earliest")


def test_dates_kept_verbatim_and_in_other_forms(idx: SqliteDedupIndex) -> None:
    idx.add("http://a.example/", D1, "2020-04-12T18:42:50.696509Z")
    idx.add("http://b.example/", D2, datetime(2014, 1, 27, 17, 12, tzinfo=UTC))
    idx.add("http://c.example/", D2, "20140101000000")
    a = idx.lookup("http://a.example/", D1)
    assert a is not None and a.original.date == "2020-04-12T18:42:50.696509Z"
    b = idx.lookup("http://b.example/", D2)
    assert b is not None and b.original.date == "2014-01-27T17:12:00Z"
    c = idx.lookup("http://c.example/", D2)
    assert c is not None and c.original.date == "20140101000000"
    assert date_micros("2014-01-27T17:12:00Z") == 1390842720 * 10**6
    assert date_micros("2014-01-27T18:12:00+01:00") == date_micros("20140127171200")


def test_last_capture_is_the_most_recent(idx: SqliteDedupIndex) -> None:
    assert idx.last_capture("http://example.com/") is None
    idx.add(
        "http://example.com/",
        D2,
        "2014-02-01T00:00:00Z",
        etag='"v2"',
        last_modified="Sat, 01 Feb 2014 00:00:00 GMT",
    )
    idx.add("http://example.com/", D1, "2014-01-01T00:00:00Z", etag='"v1"')  # older
    last = idx.last_capture("http://www.example.com")
    assert last == LastCapture(
        "http://example.com/", D2, "2014-02-01T00:00:00Z", '"v2"', "Sat, 01 Feb 2014 00:00:00 GMT"
    )
    # a revisit is the newest capture but not an original
    idx.note_capture("http://example.com/", D1, "2014-03-01T00:00:00Z", etag='"v1"')
    last = idx.last_capture("http://example.com/")
    assert last is not None and (last.digest, last.etag) == (D1, '"v1"')
    assert idx.counts()["by_url"] == 2


def test_survives_reopen_and_reads_readonly(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with open_index(path, commit_every=10**6) as idx:
        idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z", "<urn:uuid:x>")
    with open_index(path, readonly=True) as ro:
        hit = ro.lookup("http://example.com/", D1)
        assert hit is not None and hit.original.record_id == "<urn:uuid:x>"
        with pytest.raises(sqlite3.OperationalError):
            ro.add("http://example.com/", D2, "2014-01-27T17:12:00Z")
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0


def test_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "w.sqlite"
    open_index(path).close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_kill_9_keeps_committed_entries(tmp_path: Path) -> None:
    """A writer killed mid-run leaves a consistent file with every committed entry."""
    path = tmp_path / "k.sqlite"
    script = textwrap.dedent(f"""
        import hashlib, base64, os, signal, sys
        from webark.dedup.sqlite_dedup import open_index
        idx = open_index({str(path)!r}, commit_every=100)
        for i in range(100_000):
            d = "sha1:" + base64.b32encode(hashlib.sha1(str(i).encode()).digest()).decode()
            idx.add(f"http://h{{i}}.example/", d, "2014-01-27T17:12:00Z")
            if i == 5_049:
                print("ready", flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    with open_index(path) as idx:
        counts = idx.counts()
        assert counts["by_url"] == counts["by_digest"] == counts["last"] == 5_000
        assert idx.lookup("http://h0.example/", _d(0)) is not None
        assert idx.lookup("http://h4999.example/", _d(4999)) is not None
        assert idx.lookup("http://h5000.example/", _d(5000)) is None
        idx.add("http://h5000.example/", _d(5000), "2014-01-27T17:12:00Z")  # still writable


def _d(i: int) -> str:
    import base64
    import hashlib

    return "sha1:" + base64.b32encode(hashlib.sha1(str(i).encode()).digest()).decode()


def test_file_names_stored_once(idx: SqliteDedupIndex) -> None:
    for i in range(50):
        idx.add(f"http://h{i}.example/", _d(i), "2014-01-27T17:12:00Z", None, "one.warc.gz", i)
    assert idx.counts()["files"] == 1
    hit = idx.lookup("http://h7.example/", _d(7))
    assert hit is not None and (hit.warc_filename, hit.offset) == ("one.warc.gz", 7)


@pytest.mark.parametrize(
    "record_id",
    [
        "<urn:uuid:4eec4942-a541-410a-99f4-50de39b62118>",  # stored as 16 bytes
        "<urn:uuid:4EEC4942-A541-410A-99F4-50DE39B62118>",  # kept as text: case preserved
        "<urn:uuid:not-a-uuid-at-all-but-47-chars-long-xxxx>",
        "<urn:x-webark:12345>",
        None,
    ],
)
def test_record_ids_round_trip(idx: SqliteDedupIndex, record_id: str | None) -> None:
    idx.add("http://example.com/", D1, "2014-01-27T17:12:00Z", record_id)
    hit = idx.lookup("http://example.com/", D1)
    assert hit is not None and hit.original.record_id == record_id
