"""``webark proxy`` over plain HTTP with real clients (curl) and real servers on
127.0.0.1: every exchange is archived once with the exact bytes the server sent,
replays from a collection while the proxy still runs, hop-by-hop fields stay on their
hop, and upstream failures answer 502/504 without a record."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import httpx
from proxy_support import crawl_log_lines, curl, proxy_process

from http_wait import WEBARK, webark_serve_process
from sites import HTML, PNG, PNG_BYTES, TestSite, chunked, html
from webark.warc.reader import ArchiveReader

CHUNKED_BODY = b"".join(b"line %d of a chunked page\n" % i for i in range(40))


def _site() -> TestSite:
    return TestSite({
        "/": (200, HTML, html('<img src="/logo.png"><p>home page</p>')),
        "/logo.png": (200, PNG, PNG_BYTES),
        "/chunked": (200, (("Content-Type", "text/plain"), ("X-MiXeD-CaSe", "yes"),
                           ("Transfer-Encoding", "chunked")), chunked(CHUNKED_BODY, 97)),
    })  # fmt: skip


def _records(folder: Path) -> list:
    out = []
    for p in sorted(folder.iterdir()):
        if ".warc" in p.name:
            out += list(ArchiveReader(str(p)))
    return out


def _init_collection(colls: Path, name: str) -> Path:
    subprocess.run([*WEBARK, "collection", "init", str(colls / name)], check=True,
                   capture_output=True)  # fmt: skip
    return colls / name


def test_curl_through_the_proxy_is_archived_once_and_replays_at_once(tmp_path: Path) -> None:
    coll = _init_collection(tmp_path / "colls", "c1")
    with _site() as site, proxy_process("--collection", str(coll)) as (port, _):
        assert curl(port, site.url("/")).stdout == html('<img src="/logo.png"><p>home page</p>')
        assert curl(port, site.url("/logo.png")).stdout == PNG_BYTES
        assert curl(port, site.url("/chunked")).stdout == CHUNKED_BODY
        # an HTTP/1.0 client gets the chunked body de-chunked (the WARC keeps the framing)
        old = curl(port, site.url("/chunked"), "--http1.0", "-i").stdout
        assert old.split(b"\r\n\r\n", 1)[1] == CHUNKED_BODY
        assert b"transfer-encoding" not in old.split(b"\r\n\r\n", 1)[0].lower()
        lines = crawl_log_lines(coll / "proxy" / "crawl.log", 4)
        assert [ln.split()[1] for ln in lines] == ["200", "200", "200", "200"]
        assert [ln.split()[3] for ln in lines] == [site.url(p) for p in ("/", "/logo.png",
                                                                         "/chunked", "/chunked")]
        # replay from the collection while the WARC is still being written
        with webark_serve_process(str(tmp_path / "colls")) as (base, _):
            got = httpx.get(f"{base}c1/2030id_/{site.url('/logo.png')}", follow_redirects=True)
            assert got.status_code == 200 and got.content == PNG_BYTES
            got = httpx.get(f"{base}c1/2030id_/{site.url('/chunked')}", follow_redirects=True)
            assert got.status_code == 200 and got.content == CHUNKED_BODY
        assert [h.path for h in site.snapshot()] == ["/", "/logo.png", "/chunked", "/chunked"]
    warcs = sorted(str(p) for p in (coll / "warcs").iterdir())
    assert warcs and not any(w.endswith(".open") for w in warcs)
    check = subprocess.run([*WEBARK, "warc", "check", *warcs], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "0 errors" in check.stdout
    recs = _records(coll / "warcs")
    responses = [r for r in recs if r.type == "response"]  # the second /chunked: a revisit
    assert sorted(r.target_uri for r in responses) == sorted(
        site.url(p) for p in ("/", "/logo.png", "/chunked"))
    assert [r.target_uri for r in recs if r.type == "revisit"] == [site.url("/chunked")]
    assert len([r for r in recs if r.type == "request"]) == 4
    raw = next(r for r in responses if r.target_uri.endswith("/chunked")).block.read_all()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"\r\nX-MiXeD-CaSe: yes" in head  # the server's case, as sent
    assert body == chunked(CHUNKED_BODY, 97)  # the chunk framing, as sent
    # indexed as it went: the collection's store has the three captures
    from webark.index.collection import Collection

    with Collection.open(coll) as c:
        files = c.store().files()
        assert [f.complete for f in files] == [True]
        assert files[0].lines >= 4


def test_hop_by_hop_fields_stay_on_their_hop(tmp_path: Path) -> None:
    site = TestSite({"/h": (200, (("Content-Type", "text/plain"), ("X-Private", "p"),
                                  ("Connection", "keep-alive, X-Private"),
                                  ("Keep-Alive", "timeout=5")), b"hop")})  # fmt: skip
    ca = tmp_path / "ca.pem"
    with site, proxy_process("--job", str(tmp_path / "job"), "--ca-file", str(ca)) as (port, _):
        out = curl(port, site.url("/h"), "-i", "-H", "Connection: X-Hop", "-H", "X-Hop: 1",
                   "-H", 'Warcprox-Meta: {"warc-prefix": "x"}', "-H", "X-End: 2")  # fmt: skip
        crawl_log_lines(tmp_path / "job" / "logs" / "crawl.log", 1)
    assert not ca.exists()  # the CA is made on first CONNECT, not for plain HTTP
    head = out.stdout.split(b"\r\n\r\n", 1)[0].lower()
    assert out.stdout.endswith(b"hop")
    assert b"x-private" not in head and b"keep-alive" not in head
    sent = site.snapshot()[0].headers
    assert "x-hop" not in sent and "proxy-connection" not in sent
    assert "warcprox-meta" not in sent and sent["x-end"] == "2"
    recs = _records(tmp_path / "job" / "warcs")
    req = next(r for r in recs if r.type == "request").block.read_all().lower()
    assert b"x-hop" not in req and b"warcprox-meta" not in req and b"x-end: 2" in req
    resp = next(r for r in recs if r.type == "response").block.read_all()
    assert b"X-Private: p\r\n" in resp  # the WARC keeps what the server sent
    # the peer agrees (a body without chunk framing: warcio digests chunked payloads
    # with their framing, webark without, warc-specifications issue 22)
    warcs = [str(p) for p in (tmp_path / "job" / "warcs").iterdir()]
    peer = subprocess.run([str(Path(sys.executable).parent / "warcio"), "check", "-v", *warcs],
                          capture_output=True, text=True)  # fmt: skip
    assert peer.returncode == 0 and "digest pass" in peer.stdout, peer.stdout + peer.stderr


def test_upstream_failures_answer_502_and_504_and_write_nothing(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
    job = tmp_path / "job"
    try:
        with proxy_process("--job", str(job), "--read-timeout", "1") as (port, _):
            refused = curl(port, f"http://127.0.0.1:{dead_port}/x", "-w", "%{http_code}")
            assert refused.stdout.endswith(b"502")
            slow = curl(port, f"http://127.0.0.1:{silent.getsockname()[1]}/y",
                        "-w", "%{http_code}")  # fmt: skip
            assert slow.stdout.endswith(b"504")
            lines = crawl_log_lines(job / "logs" / "crawl.log", 2)
    finally:
        silent.close()
        for s in accepted:
            s.close()
    assert [ln.split()[1] for ln in lines] == ["-2", "-4"]
    assert [r for r in _records(job / "warcs") if r.type != "warcinfo"] == []


def test_a_head_over_64_kib_is_431_and_goes_nowhere(tmp_path: Path) -> None:
    """One header of 66,000 bytes, or two of 40,000 (each short enough for the
    upstream): the proxy answers 431 itself, relays nothing and archives nothing."""
    job = tmp_path / "job"
    with _site() as site, proxy_process("--job", str(job)) as (port, _):
        for headers in (["-H", "X-Big: " + "a" * 66_000],
                        ["-H", "X-A: " + "a" * 40_000, "-H", "X-B: " + "b" * 40_000]):
            got = curl(port, site.url("/chunked"), *headers, "-w", "%{http_code}")
            assert got.stdout.endswith(b"431"), got.stdout[-200:]
        ok = curl(port, site.url("/chunked"), "-H", "X-Small: " + "c" * 1000)
        assert ok.stdout == CHUNKED_BODY
        crawl_log_lines(job / "logs" / "crawl.log", 1)
        assert len(site.snapshot()) == 1  # only the small one went upstream
    assert [r.type for r in _records(job / "warcs")] == ["warcinfo", "response", "request"]


def test_wget_through_the_proxy(tmp_path: Path) -> None:
    job = tmp_path / "job"
    with _site() as site, proxy_process("--job", str(job)) as (port, _):
        got = subprocess.run(
            ["wget", "-q", "-O", "-", "-e", "use_proxy=yes", "-e",
             f"http_proxy=http://127.0.0.1:{port}", site.url("/chunked")],
            capture_output=True, timeout=60, check=True,
        )  # fmt: skip
        assert got.stdout == CHUNKED_BODY
        (line,) = crawl_log_lines(job / "logs" / "crawl.log", 1)
    assert line.split()[1] == "200" and "Wget" in site.snapshot()[0].user_agent
    assert [r.type for r in _records(job / "warcs")] == ["warcinfo", "response", "request"]
