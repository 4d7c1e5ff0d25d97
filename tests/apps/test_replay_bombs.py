"""Decompression bombs replayed by a real ``webark serve`` (hardening issue, item 1).

A 1 MB gzip body (16 members of 64 MiB of zeros each) inflates to 1 GiB, a 48 kB brotli
body to 256 MiB. Before the rewrite limit the server inflated them whole in every
rewriting mode (peak RSS above 2 GiB for one request; a 10 MB one killed the server).
Now a body whose decoded size passes the limit is sent as stored, not rewritten, with
``X-Webark-Not-Rewritten``; the server's peak RSS (``VmHWM``) stays far below the bomb's
size and it goes on serving.
"""

from __future__ import annotations

import gzip
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import brotli
import httpx
import pytest
from replay_support import _capture, _ok, when

from http_wait import WEBARK, webark_serve_process
from webark.index.collection import Collection
from webark.warc.writer import WarcWriter

MiB = 1 << 20
#: 16 gzip members of 64 MiB of zeros: 1 MB stored, 1 GiB decoded.
GZIP_BOMB = gzip.compress(b"<html><body>" + bytes(64 * MiB - 12), compresslevel=9) * 16
BROTLI_BOMB = brotli.compress(b"a{}" + bytes(256 * MiB - 3), quality=1)
#: a small gzipped page under the limit: still rewritten
SMALL = b'<html><head><title>small</title></head><body><a href="/x.html">x</a></body></html>'
T = when("2022-01-01 00:00:00")
RSS_CAP = 400 * MiB  # the bombs are 1 GiB and 256 MiB decoded


@pytest.fixture(scope="module")
def colls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bombs")
    with WarcWriter(root / "w", prefix="BOMB") as w:
        _capture(w, "http://bomb.test/gzip.html",
                 _ok(GZIP_BOMB, extra=[("Content-Encoding", "gzip")]), T)  # fmt: skip
        _capture(w, "http://bomb.test/br.css",
                 _ok(BROTLI_BOMB, "text/css", [("Content-Encoding", "br")]), T)  # fmt: skip
        _capture(w, "http://bomb.test/js.js",
                 _ok(GZIP_BOMB, "text/javascript", [("Content-Encoding", "gzip")]), T)  # fmt: skip
        _capture(w, "http://bomb.test/small.html",
                 _ok(gzip.compress(SMALL), extra=[("Content-Encoding", "gzip")]), T)  # fmt: skip
    warcs = sorted((root / "w").glob("*.warc.gz"))
    coll = Collection.init(root / "colls" / "bombs")
    with coll:
        assert all(res.status == "indexed" for res in coll.add(warcs))
    return root / "colls"


@pytest.fixture(scope="module")
def server(colls: Path) -> Iterator[tuple[str, int]]:
    """A real ``webark serve`` (one worker): (base URL, pid)."""
    with webark_serve_process(str(colls)) as (base, proc):
        yield base, proc.pid


def peak_rss(pid: int) -> int:
    """Peak resident set size of process ``pid`` in bytes (``VmHWM``)."""
    text = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"^VmHWM:\s+(\d+) kB", text, re.M)
    assert m, text
    return int(m.group(1)) * 1024


@pytest.mark.parametrize(("path", "stored", "modes"), [
    ("gzip.html", GZIP_BOMB, ["", "mp_", "if_"]),
    ("br.css", BROTLI_BOMB, ["", "cs_"]),
    ("js.js", GZIP_BOMB, ["", "js_"]),
])  # fmt: skip
def test_bomb_is_sent_as_stored_and_the_server_stays_small(
    server: tuple[str, int], path: str, stored: bytes, modes: list[str]
) -> None:
    base, pid = server
    for mode in modes:
        url = f"{base}bombs/20220101000000{mode}/http://bomb.test/{path}"
        with httpx.stream("GET", url, timeout=60) as r:  # raw bytes: httpx would inflate
            body = b"".join(r.iter_raw())
        assert r.status_code == 200, (mode, body[:300])
        assert "x-webark-not-rewritten" in r.headers, (mode, dict(r.headers))
        assert r.headers["content-encoding"] in ("gzip", "br")
        assert int(r.headers["content-length"]) == len(stored)
        assert body == stored
        assert peak_rss(pid) < RSS_CAP, f"{mode}: peak RSS {peak_rss(pid) / MiB:.0f} MiB"
    # and the server still rewrites what is under the limit
    r = httpx.get(f"{base}bombs/20220101000000/http://bomb.test/small.html", timeout=30)
    assert r.status_code == 200 and "x-webark-not-rewritten" not in r.headers
    assert "/bombs/20220101000000/http://bomb.test/x.html" in r.text


def test_diff_of_a_bomb_is_413_not_an_inflated_page(server: tuple[str, int]) -> None:
    base, pid = server
    r = httpx.get(f"{base}bombs/diff/2022/2022/http://bomb.test/gzip.html", timeout=60)
    assert r.status_code == 413 and "Too large to compare" in r.text
    assert peak_rss(pid) < RSS_CAP


def test_rewrite_limit_is_a_serve_option(colls: Path) -> None:
    """A limit of 1,000 bytes: the 90-byte page is rewritten, the bomb sent as stored;
    ``webark serve --rewrite-limit MIB`` sets it."""
    from starlette.testclient import TestClient

    from webark.apps.replay.app import create_server

    with TestClient(create_server(colls, rewrite_limit=1000)) as c:
        r = c.get("/bombs/20220101000000/http://bomb.test/small.html")
        assert r.status_code == 200 and "x-webark-not-rewritten" not in r.headers
        with c.stream("GET", "/bombs/20220101000000cs_/http://bomb.test/br.css") as big:
            assert big.headers["x-webark-not-rewritten"].endswith("limit of 1000 bytes")
    out = subprocess.run(
        [*WEBARK, "serve", "--help"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "--rewrite-limit" in out
