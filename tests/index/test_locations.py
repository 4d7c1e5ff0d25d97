"""WARC location resolution: pywb path index (binary search), prefixes, the chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webark.index.locations import LocationResolver, PathIndex, PrefixLocator, WarcNotFound


def test_path_index_lookup_and_update(tmp_path: Path) -> None:
    pi = PathIndex(tmp_path / "paths.loc")
    assert pi.locate("a.warc.gz") == []  # missing file = empty index
    pi.update(
        {
            "b.warc.gz": ["/mnt/x/b.warc.gz", "https://store.example.org/b.warc.gz"],
            "a.warc.gz": ["rel/a.warc.gz"],
            "a.warc.gz.1": ["/elsewhere/a1"],
        }
    )
    text = (tmp_path / "paths.loc").read_text()
    assert text == (
        "a.warc.gz\trel/a.warc.gz\na.warc.gz.1\t/elsewhere/a1\n"
        "b.warc.gz\t/mnt/x/b.warc.gz\thttps://store.example.org/b.warc.gz\n"
    )
    assert pi.locate("a.warc.gz") == [str(tmp_path / "rel/a.warc.gz")]  # not a.warc.gz.1
    assert pi.locate("b.warc.gz") == ["/mnt/x/b.warc.gz", "https://store.example.org/b.warc.gz"]
    assert pi.locate("c.warc.gz") == []
    pi.update({"b.warc.gz": ["/new/b.warc.gz"]}, remove=["a.warc.gz"])
    assert dict(pi.entries()) == {"a.warc.gz.1": ["/elsewhere/a1"], "b.warc.gz": ["/new/b.warc.gz"]}
    with pytest.raises(ValueError):
        pi.update({"bad\tname": ["/x"]})


def test_big_path_index_is_searched_not_loaded(tmp_path: Path) -> None:
    p = tmp_path / "big.loc"
    with p.open("w") as f:
        for i in range(200_000):
            f.write(f"WEB-{i:07d}.warc.gz\t/data/{i % 97}/WEB-{i:07d}.warc.gz\n")
    pi = PathIndex(p)
    assert pi.locate("WEB-0123456.warc.gz") == ["/data/72/WEB-0123456.warc.gz"]
    assert pi._lines.stats.bytes_read < 200_000  # of ~9 MB


def test_resolver_chain(tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    (warcs / "here.warc.gz").write_bytes(b"x")
    moved = tmp_path / "moved.warc.gz"
    moved.write_bytes(b"y")
    pi = PathIndex(tmp_path / "locations.loc")
    pi.update(
        {
            "here.warc.gz": [str(moved)],
            "gone.warc.gz": ["/no/such/file"],
            "remote.warc.gz": ["/no/such", "https://warcs.example.org/remote.warc.gz"],
        }
    )
    r = LocationResolver([pi, PrefixLocator(warcs), PrefixLocator("https://mirror.example.org/w/")])
    assert r.resolve("here.warc.gz") == str(moved)  # the path index wins over warcs/
    assert r.candidates("here.warc.gz") == [
        str(moved),
        str(warcs / "here.warc.gz"),
        "https://mirror.example.org/w/here.warc.gz",
    ]
    assert r.resolve("remote.warc.gz") == "https://warcs.example.org/remote.warc.gz"
    assert r.resolve("other.warc.gz") == "https://mirror.example.org/w/other.warc.gz"
    local = LocationResolver([pi, PrefixLocator(warcs)])
    with pytest.raises(WarcNotFound) as e:
        local.resolve("gone.warc.gz")
    assert e.value.filename == "gone.warc.gz" and e.value.tried == ["/no/such/file"]
    with pytest.raises(LookupError):
        local.resolve("unknown.warc.gz")
    assert os.path.isabs(local.resolve("here.warc.gz"))
