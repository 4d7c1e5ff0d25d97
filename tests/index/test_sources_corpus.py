"""The same queries on the index store (SQLite, and PostgreSQL: the ``index_store``
fixture), on a sorted CDXJ file and on the merge of both (half of the WARCs in each) give
the same captures; values from the real corpus (pywb/warcs/*.warc.gz, 199 lines;
iana.warc.gz = pywb's iana.cdx, 171 lines)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from index_stores import StoreChoice
from webark.cdx.formats import format_cdx11
from webark.cdx.line import CdxLine
from webark.index.merge import MergedSource
from webark.index.sorted_file import SortedCdxFile, write_sorted_cdxj
from webark.index.source import IndexSource, KeyRange, key_range
from webark.index.sqlite_store import AlreadyIndexed, SqliteStore

Proj = Callable[[CdxLine], tuple[object, ...]]

QUERIES: list[tuple[str, str | None, str | None, str | None]] = [
    # url, matchType, from, to
    ("http://www.iana.org/", None, None, None),
    ("http://iana.org/", "exact", None, None),
    ("iana.org/_css/2013.1/fonts/inconsolata.otf", None, None, None),
    ("iana.org/_css/2013.1/fonts/inconsolata.otf", None, "201401262009", "20140126200912"),
    ("iana.org/_css/2013.1/fonts/inconsolata.otf", None, "2014012620091", None),
    ("iana.org/_css/2013.1/fonts/inconsolata.otf", None, None, "20140126200912"),
    ("http://example.com/", None, None, None),
    ("http://iana.org/domains/*", None, None, None),
    ("iana.org/_css/", "prefix", None, None),
    ("iana.org/_css/", "prefix", "20140126201", "20140126201059"),
    ("http://www.iana.org/about", "host", None, None),
    ("example.com", "host", None, None),
    ("*.iana.org", None, None, None),
    ("*.iana.org", None, "20140127", None),
    ("example.com", "domain", None, None),
    ("com", "domain", None, None),
    ("org", "domain", "2014", "2014"),
    ("http://not-archived.example.net/", None, None, None),
]

# (url, matchType, from, to) → captures in the whole corpus (pywb/warcs/*.warc.gz)
EXPECTED_COUNTS = {
    0: 3,  # org,iana)/: iana.warc.gz + the 302 and the revisit in dupes.warc.gz
    1: 3,
    2: 5,  # Inconsolata.otf: 200826 (200), then revisits 200912 200930 201055 201249
    3: 1,  # from 200900 to 200912
    4: 4,  # from 200910
    5: 2,  # to 200912
}


def _check_order(lines: list[CdxLine], reverse: bool) -> None:
    keys = [f"{x.urlkey} {x.timestamp}".encode() for x in lines]
    assert keys == sorted(keys, reverse=reverse)


def _norm(
    lines: Iterable[CdxLine], proj: Proj, reverse: bool | None = False
) -> list[tuple[object, ...]]:
    """Results in key order, ties (same "urlkey timestamp") in a fixed order: sources
    order ties differently (file order, line text, source order). The input must be in
    order (reversed if ``reverse``) unless ``reverse`` is None (brute-force lists)."""
    lines = list(lines)
    if reverse is not None:
        _check_order(lines, reverse)
    return sorted(
        (proj(x) for x in lines), key=lambda t: (t[0], t[1], repr(t)), reverse=bool(reverse)
    )


@pytest.fixture(scope="module")
def sources(
    tmp_path_factory: pytest.TempPathFactory, corpus_lines: dict[str, list[CdxLine]],
    index_store: StoreChoice,
) -> dict[str, IndexSource]:
    d = tmp_path_factory.mktemp("sources")
    names = sorted(corpus_lines)
    store = index_store.new_store(d / "all.sqlite3")
    for n in names:
        store.add_file(n, corpus_lines[n])
    write_sorted_cdxj((x for n in names for x in corpus_lines[n]), d / "all.cdxj")
    half_a, half_b = names[::2], names[1::2]
    sa = index_store.new_store(d / "a.sqlite3")
    for n in half_a:
        sa.add_file(n, corpus_lines[n])
    write_sorted_cdxj((x for n in half_b for x in corpus_lines[n]), d / "b.cdxj")
    return {
        "store": store,
        "sorted": SortedCdxFile(d / "all.cdxj"),
        "merged": MergedSource([sa, SortedCdxFile(d / "b.cdxj")]),
    }


@pytest.mark.parametrize("reverse", [False, True], ids=["fwd", "rev"])
@pytest.mark.parametrize("qi", range(len(QUERIES)))
def test_same_results_from_every_source(
    sources: dict[str, IndexSource],
    corpus_lines: dict[str, list[CdxLine]],
    proj: Proj,
    qi: int,
    reverse: bool,
) -> None:
    url, match, f, t = QUERIES[qi]
    rng = key_range(url, match, f, t)  # type: ignore[arg-type]
    # brute force over every line of the corpus
    every = [x for ls in corpus_lines.values() for x in ls]
    want = [x for x in every if _in(rng, x)]
    expect = _norm(want, proj, None)[:: -1 if reverse else 1]
    if qi in EXPECTED_COUNTS:
        assert len(want) == EXPECTED_COUNTS[qi]
    for name, src in sources.items():
        got = list(src.scan(rng, reverse))
        assert _norm(got, proj, reverse) == expect, name


def _in(rng: KeyRange, x: CdxLine) -> bool:
    k = f"{x.urlkey} {x.timestamp}"
    if k < rng.start or (rng.end is not None and k >= rng.end):
        return False
    ts = x.timestamp[:14]
    return (rng.from_ts is None or ts >= rng.from_ts) and (rng.to_ts is None or ts <= rng.to_ts)


def test_reverse_is_forward_reversed_exactly(sources: dict[str, IndexSource]) -> None:
    """Including the order of ties, each source's reverse scan is its forward scan
    backwards."""
    rng = key_range("*.iana.org")
    for name, src in sources.items():
        fwd = [dataclasses.astuple(x) for x in src.scan(rng)]
        rev = [dataclasses.astuple(x) for x in src.scan(rng, reverse=True)]
        assert rev == fwd[::-1], name
        # iana + dupes + example.warc.gz + example.iana.org of example-url-agnostic-orig
        assert len(fwd) == 171 + 10 + 1 + 1, name


def test_full_scan_and_range_match_type(sources: dict[str, IndexSource], proj: Proj) -> None:
    full = {n: _norm(s.scan(KeyRange("", None)), proj) for n, s in sources.items()}
    assert len(full["store"]) == 199
    assert full["store"] == full["sorted"] == full["merged"]
    rng = key_range("org,iana)/_css", "range", end="org,iana)/domains")
    got = {n: _norm(s.scan(rng), proj) for n, s in sources.items()}
    assert got["store"] == got["sorted"] == got["merged"]
    assert len(got["store"]) == 164  # 156 of iana.warc.gz, 8 of dupes.warc.gz
    assert all("org,iana)/_css" <= str(t[0]) < "org,iana)/domains" for t in got["store"])


def test_by_digest_on_every_source(
    sources: dict[str, IndexSource], proj: Proj, corpus_lines: dict[str, list[CdxLine]]
) -> None:
    every = [x for ls in corpus_lines.values() for x in ls]
    # url-agnostic revisit: same payload as example.com in another WARC and URL
    for digest in (
        "sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A",
        "LNMEDYOENSOEI5VPADCKL3CB6N3GWXPR",
        "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
    ):
        label = digest if digest.startswith("sha1:") else "sha1:" + digest
        want = _norm((x for x in every if x.digest == label), proj, None)
        assert want
        for name, src in sources.items():
            assert _norm(src.by_digest(digest), proj) == want, name
    assert list(sources["store"].by_digest("sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")) == []


def test_iana_pywb_flavour_matches_gold(
    tmp_path: Path, corpus: Path, iana_pywb_lines: list[CdxLine], index_store: StoreChoice
) -> None:
    """iana.warc.gz indexed the pywb way into the store, read back as CDX11: exactly
    pywb's iana.cdx (171 lines); and the same as querying iana.cdx itself as a sorted
    file."""
    store = index_store.new_store(tmp_path / "i.sqlite3")
    assert store.add_file("iana.warc.gz", iana_pywb_lines) == 171
    gold = (corpus / "pywb/cdx/iana.cdx").read_text().splitlines()[1:]
    assert [format_cdx11(x) for x in store.scan(KeyRange("", None))] == gold
    cdx = SortedCdxFile(corpus / "pywb/cdx/iana.cdx")
    for url, match, f, t in QUERIES:
        rng = key_range(url, match, f, t)  # type: ignore[arg-type]
        for rev in (False, True):
            a = [format_cdx11(x) for x in store.scan(rng, rev)]
            assert a == [format_cdx11(x) for x in cdx.scan(rng, rev)], (url, rev)


def test_store_round_trips_every_field(
    tmp_path: Path, corpus_lines: dict[str, list[CdxLine]], index_store: StoreChoice
) -> None:
    store = index_store.new_store(tmp_path / "rt.sqlite3")
    lines = corpus_lines["post-test.warc.gz"] + corpus_lines["iana.warc.gz"][:5]
    lines.append(
        dataclasses.replace(
            lines[0],
            extra={"requestBody": "a=1", "x": [1, 2]},
            method="POST",
            surt="http://(com,example,)/",
        )
    )
    store.add_file("mixed.warc.gz", lines)
    back = list(store.scan(KeyRange("", None)))
    want = sorted(
        (dataclasses.replace(x, filename="mixed.warc.gz") for x in lines),
        key=lambda x: f"{x.urlkey} {x.timestamp}".encode(),
    )
    assert [dataclasses.asdict(x) for x in back] == [dataclasses.asdict(x) for x in want]


def test_store_files_add_remove_replace(
    tmp_path: Path, corpus_lines: dict[str, list[CdxLine]], index_store: StoreChoice
) -> None:
    store = index_store.new_store(tmp_path / "f.sqlite3")
    store.add_file("example.warc.gz", corpus_lines["example.warc.gz"], size=3484)
    store.add_file("dupes.warc.gz", corpus_lines["dupes.warc.gz"])
    assert [(f.name, f.lines, f.size) for f in store.files()] == [
        ("dupes.warc.gz", 12, None),
        ("example.warc.gz", 3, 3484),
    ]
    with pytest.raises(AlreadyIndexed):
        store.add_file("example.warc.gz", corpus_lines["example.warc.gz"])
    assert store.add_file("example.warc.gz", corpus_lines["example.warc.gz"][:1], replace=True) == 1
    assert store.count() == 13
    assert store.remove_file("dupes.warc.gz") == 12
    assert store.remove_file("dupes.warc.gz") == 0
    assert store.count() == 1 and [f.name for f in store.files()] == ["example.warc.gz"]
    assert list(store.by_digest("B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A")) != []


def test_store_failed_add_leaves_nothing(
    tmp_path: Path, corpus_lines: dict[str, list[CdxLine]], index_store: StoreChoice
) -> None:
    store = index_store.new_store(tmp_path / "x.sqlite3")

    def broken() -> Iterable[CdxLine]:
        yield from corpus_lines["iana.warc.gz"][:100]
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        store.add_file("iana.warc.gz", broken())
    assert store.files() == [] and store.count() == 0


def test_sqlite_unavailable(tmp_path: Path) -> None:
    from webark.index.source import IndexUnavailable

    with pytest.raises(IndexUnavailable):
        SqliteStore(tmp_path / "missing.sqlite3", create=False)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexUnavailable):
        SqliteStore(junk)


def test_sqlite_readers_are_not_blocked_by_a_writer(
    tmp_path: Path, corpus_lines: dict[str, list[CdxLine]]
) -> None:
    """WAL: a scan in progress keeps its snapshot while another connection commits a
    WARC; the next scan sees it. Threads get their own connections."""
    import threading

    path = tmp_path / "wal.sqlite3"
    reader, writer = SqliteStore(path), SqliteStore(path)
    writer.add_file("iana.warc.gz", corpus_lines["iana.warc.gz"])
    it = reader.scan(KeyRange("", None))
    first = [next(it) for _ in range(10)]
    errors: list[BaseException] = []

    def add() -> None:
        try:
            writer.add_file("dupes.warc.gz", corpus_lines["dupes.warc.gz"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=add)
    t.start()
    t.join(30)
    assert not errors
    rest = list(it)
    assert len(first) + len(rest) == 171  # the snapshot of before the commit
    assert sum(1 for _ in reader.scan(KeyRange("", None))) == 171 + 12
    reader.close()
    writer.close()
