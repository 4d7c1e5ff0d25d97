"""Index lines of screenshot records (issue 13: Browsertrix's ``urn:view:`` PNG and
``urn:thumbnail:`` JPEG ``resource`` records, WARC 1.1 §6.4): webark's CDXJ is
byte-identical to pywb's cdxj-indexer (run here on the same WARC), and the index stores
give the same lines back for the URN queries replay makes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cdx_support import index_text

from index_stores import StoreChoice
from screenshot_site import OVERLAP, PAGE, write_screenshot_warc
from webark.cdx.indexer import IndexOptions
from webark.index.source import key_range

CDXJ_INDEXER = Path(sys.executable).parent / "cdxj-indexer"


@pytest.fixture(scope="module")
def warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_screenshot_warc(tmp_path_factory.mktemp("shots"))


def test_cdxj_is_cdxj_indexer_s(warc: Path) -> None:
    assert CDXJ_INDEXER.exists(), "cdxj-indexer comes with the test extra (wacz)"
    peer = subprocess.run([str(CDXJ_INDEXER), str(warc)], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    ours = index_text(warc, "cdxj", IndexOptions(compat="cdxj-indexer"))
    assert ours == peer
    shots = [x for x in ours.splitlines() if x.startswith("urn:")]
    assert len(shots) == 2 * 2 + 2 + 3  # PAGE twice (view + thumbnail), 2 overlap, 3 more
    overlap = [x.split(" ", 2) for x in shots if f"urn:view:{OVERLAP}" in x]
    # the whole URN is the key, lowercased, query sorted; no HTTP status
    assert [k for k, _, _ in overlap] == ["urn:view:http://shots.test/overlap?a=1&b=2"] * 2
    assert all("status" not in json.loads(js) for _, _, js in overlap)
    views = [json.loads(x.split(" ", 2)[2]) for x in shots if x.startswith("urn:view:")]
    assert {v["mime"] for v in views} == {"image/png"}
    assert f"urn:view:{PAGE}" in {v["url"] for v in views}


def test_cdx11_has_no_status(warc: Path) -> None:
    """pywb's CDX11 convention: ``-`` in the status field of a resource record."""
    text = index_text(warc, "cdx11", IndexOptions(compat="pywb"))
    view = next(x for x in text.splitlines() if x.startswith("urn:view:http://shots.test/art"))
    parts = view.split(" ")
    assert parts[3] == "image/png" and parts[4] == "-", parts


def test_index_stores_answer_urn_queries(warc: Path, tmp_path: Path,
                                         index_store: StoreChoice) -> None:  # fmt: skip
    coll = index_store.init(tmp_path / "shots")
    with coll:
        assert [r.status for r in coll.add([warc])] == ["indexed"]
        got = list(coll.source().scan(key_range(f"urn:view:{PAGE}", "exact")))
    assert [x.url for x in got] == [f"urn:view:{PAGE}"] * 2
    assert [x.mime for x in got] == ["image/png"] * 2
    assert [x.timestamp for x in got] == ["20240501120002", "20240501120022"]
