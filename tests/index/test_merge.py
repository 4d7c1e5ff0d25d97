"""MergedSource: streaming k-way merge, reverse, ties, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from webark.cdx.line import CdxLine
from webark.index.merge import MergedSource
from webark.index.source import IndexSource, IndexUnavailable, KeyRange, key_range


class ListSource:
    """An in-memory IndexSource that records how far it was read."""

    def __init__(self, tag: str, keys: list[tuple[str, str]], fail: bool = False):
        self.lines = [CdxLine(k, t, f"http://{tag}/", filename=tag) for k, t in sorted(keys)]
        self.fail = fail
        self.pulled = 0

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        if self.fail:
            raise IndexUnavailable("down")
        sel = [
            x
            for x in self.lines
            if rng.start <= f"{x.urlkey} {x.timestamp}"
            and (rng.end is None or f"{x.urlkey} {x.timestamp}" < rng.end)
        ]
        for x in reversed(sel) if reverse else sel:
            self.pulled += 1
            yield x

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        return iter(())


def test_protocol() -> None:
    assert isinstance(ListSource("a", []), IndexSource)
    assert isinstance(MergedSource([]), IndexSource)


def test_merge_order_ties_and_reverse() -> None:
    a = ListSource("a", [("com,a)/", "2001"), ("com,b)/", "2001"), ("com,c)/", "2003")])
    b = ListSource("b", [("com,a)/", "2002"), ("com,b)/", "2001"), ("com,d)/", "2000")])
    m = MergedSource([a, b])
    got = [(x.urlkey, x.timestamp, x.filename) for x in m.scan(KeyRange("", None))]
    assert got == [
        ("com,a)/", "2001", "a"),
        ("com,a)/", "2002", "b"),
        ("com,b)/", "2001", "a"),
        ("com,b)/", "2001", "b"),
        ("com,c)/", "2003", "a"),
        ("com,d)/", "2000", "b"),
    ]
    rev = [(x.urlkey, x.timestamp, x.filename) for x in m.scan(KeyRange("", None), True)]
    assert rev == got[::-1]


def test_merge_is_streaming() -> None:
    a = ListSource("a", [(f"com,x)/{i:05d}", "2000") for i in range(10000)])
    b = ListSource("b", [(f"com,y)/{i:05d}", "2000") for i in range(10000)])
    it = MergedSource([a, b]).scan(KeyRange("", None))
    first = [next(it) for _ in range(5)]
    assert [x.filename for x in first] == ["a"] * 5
    assert a.pulled <= 6 and b.pulled <= 1


def test_byte_order_not_tuple_order() -> None:
    """The order is that of the "urlkey timestamp" bytes (as in every CDX file): urlkey
    'a\\t' sorts before 'a' ('a\\t 1' < 'a 2' as '\\t' < ' '); tuples would not."""
    a = ListSource("a", [("a", "2")])
    b = ListSource("b", [("a\t", "1")])
    got = [x.urlkey for x in MergedSource([a, b]).scan(KeyRange("", None))]
    assert got == ["a\t", "a"]


def test_unavailable_source_is_not_hidden() -> None:
    m = MergedSource([ListSource("a", [("com,a)/", "2001")]), ListSource("b", [], fail=True)])
    with pytest.raises(IndexUnavailable):
        list(m.scan(key_range("http://a.com/")))
