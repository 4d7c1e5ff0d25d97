"""The ``Warcprox-Meta`` request header through ``webark proxy``, with warcprox's
semantics: warc-prefix, stats buckets, limits (420) and soft limits (430) with the
``Warcprox-Meta`` response header, blocks (403), metadata (crawl.log source tag,
warcinfo), accept capture-metadata, dedup-ok, and webark's dedup-policy; malformed
headers get a 400 that says what is wrong, unknown keys are ignored. The schema in
docs/proxy-api.md is the one the code validates against."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from proxy_support import crawl_log_lines, proxy_process

from http_wait import WEBARK, webark_child
from sites import HTML, PNG_BYTES, TestSite, html
from webark.apps.proxy.meta import schema
from webark.warc.reader import ArchiveReader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site() -> Iterator[TestSite]:
    pages = {f"/p{i}.html": (200, HTML, html(f"page {i}")) for i in range(8)}
    pages["/same-a.html"] = pages["/same-b.html"] = (200, HTML, html("same payload"))
    with TestSite(pages) as s:
        yield s


def _get(port: int, url: str, meta: object | None) -> httpx.Response:
    headers = {}
    if meta is not None:
        headers["Warcprox-Meta"] = meta if isinstance(meta, str) else json.dumps(meta)
    with httpx.Client(proxy=f"http://127.0.0.1:{port}", timeout=20) as c:
        return c.get(url, headers=headers)


def _records(job: Path) -> list:
    return [r for p in sorted((job / "warcs").iterdir()) for r in ArchiveReader(str(p))]


def _capture_kinds(site: TestSite, job: Path, steps: list[tuple[str, object | None]]) -> list[str]:
    """Fetch each ``(path, Warcprox-Meta)`` through a proxy into ``job``, one after the
    other (each logged before the next), and return the response/revisit record types."""
    with proxy_process("--job", str(job)) as (port, _):
        for n, (path, meta) in enumerate(steps, 1):
            assert _get(port, site.url(path), meta).status_code == 200
            crawl_log_lines(job / "logs" / "crawl.log", n)
    return [r.type for r in _records(job) if r.type in ("response", "revisit")]


def _response_meta(r: httpx.Response) -> dict:
    return json.loads(r.headers["warcprox-meta"])


def test_limits_stats_and_blocks(site: TestSite, tmp_path: Path) -> None:
    job = tmp_path / "job"
    limits = {"stats": {"buckets": ["job1"]}, "limits": {"job1/total/urls": 2}}
    soft = {"stats": {"buckets": [{"bucket": "job2"}]}, "soft-limits": {"job2/new/urls": 1}}
    with proxy_process("--job", str(job)) as (port, _):
        assert [_get(port, site.url(f"/p{i}.html"), limits).status_code
                for i in range(2)] == [200, 200]  # fmt: skip
        crawl_log_lines(job / "logs" / "crawl.log", 2)
        over = _get(port, site.url("/p2.html"), limits)
        assert over.status_code == 420 and over.reason_phrase == "Reached limit"
        info = _response_meta(over)
        assert info["reached-limit"] == {"job1/total/urls": 2}
        assert info["stats"]["job1"]["total"]["urls"] == 2
        assert _get(port, site.url("/p3.html"), soft).status_code == 200
        crawl_log_lines(job / "logs" / "crawl.log", 3)
        over = _get(port, site.url("/p4.html"), soft)
        assert over.status_code == 430
        assert _response_meta(over)["reached-soft-limit"] == {"job2/new/urls": 1}
        blocked = _get(port, site.url("/p5.html"), {"blocks": [{"substring": "/p5"}]})
        assert blocked.status_code == 403
        assert _response_meta(blocked) == {"blocked-by-rule": {"substring": "/p5"}}
        by_domain = _get(port, site.url("/p6.html"), {"blocks": [{"domain": "127.0.0.1"}]})
        assert by_domain.status_code == 403
        by_surt = _get(port, site.url("/p7.html"),
                       {"blocks": [{"surt": f"http://(127.0.0.1:{site.port})/p7"}]})  # fmt: skip
        assert by_surt.status_code == 403
    fetched = [h.path for h in site.snapshot()]
    for path in ("/p2.html", "/p4.html", "/p5.html", "/p6.html", "/p7.html"):
        assert path not in fetched  # refused before anything went upstream


def test_prefix_metadata_capture_metadata_and_dedup_ok(site: TestSite, tmp_path: Path) -> None:
    job = tmp_path / "job"
    with proxy_process("--job", str(job)) as (port, _):
        r = _get(port, site.url("/same-a.html"),
                 {"warc-prefix": "special", "metadata": {"seed": "http://seed.test/"},
                  "accept": ["capture-metadata"], "dedup-ok": False})  # fmt: skip
        assert r.status_code == 200
        stamp = _response_meta(r)["capture-metadata"]["timestamp"]
        assert _get(port, site.url("/same-b.html"), {"warc-prefix": "special"}).status_code == 200
        assert _get(port, site.url("/same-a.html"), None).status_code == 200
        assert _get(port, site.url("/same-b.html"), None).status_code == 200
        assert _get(port, site.url("/p0.html"), {"warc-prefix": "-"}).status_code == 200
        lines = crawl_log_lines(job / "logs" / "crawl.log", 4)
    names = sorted(p.name for p in (job / "warcs").iterdir())
    assert len(names) == 2 and names[1].startswith("special-") and names[0].startswith("WEBARK-")
    special = [r for r in ArchiveReader(str(job / "warcs" / names[1]))]
    info = special[0].block.read_all().decode()
    assert special[0].type == "warcinfo"
    assert 'json-metadata: {"seed":"http://seed.test/"}' in info
    first = special[1]
    assert first.type == "response" and first.headers.get("warc-date") == stamp
    # dedup-ok false: the first capture is no original, so the second is in full
    assert [r.type for r in special if r.type in ("response", "revisit")] == ["response",
                                                                             "response"]
    # metadata.seed: a metadata record with the source tag beside the first capture
    assert [r.type for r in special].count("metadata") == 1
    default = [r.type for r in ArchiveReader(str(job / "warcs" / names[0]))
               if r.type in ("response", "revisit")]  # fmt: skip
    assert default == ["revisit", "revisit"]  # the same payload, deduplicated
    assert len(lines) == 4 and lines[0].split()[10] == "http://seed.test/"
    assert all(site.url("/p0.html") not in ln for ln in lines)  # "-": not archived


def test_dedup_buckets_are_looked_up_in_order_and_stored_into_rw_ones(
    site: TestSite, tmp_path: Path
) -> None:
    job = tmp_path / "job"
    steps = [
        ("/same-a.html", {"dedup-buckets": {"A": "rw"}}),  # A gets the original
        ("/same-b.html", {"dedup-buckets": {"B": "ro", "A": "ro"}}),  # found in A
        ("/same-b.html", {"dedup-buckets": {"C": "rw"}}),  # C is empty
        ("/same-a.html", {"dedup-buckets": {"D": "ro"}}),  # D empty; ro: not stored
        ("/same-a.html", {"dedup-buckets": {"D": "rw"}}),  # D still empty: stored now
        ("/same-b.html", {"dedup-bucket": "D"}),  # legacy form: found in D
    ]
    kinds = _capture_kinds(site, job, steps)
    assert kinds == ["response", "revisit", "response", "response", "response", "revisit"]
    assert sorted(p.name for p in (job / "state" / "dedup-buckets").glob("*.sqlite3")) == [
        "A.sqlite3", "B.sqlite3", "C.sqlite3", "D.sqlite3"]


def test_dedup_policy_per_request(site: TestSite, tmp_path: Path) -> None:
    """webark's ``dedup-policy`` key: the job file's dedup_policy for one capture."""
    job = tmp_path / "job"
    steps = [
        ("/same-a.html", None),  # the original
        ("/same-b.html", {"dedup-policy": {"skip_mime_types": ["text/html"]}}),  # in full
        ("/same-b.html", {"dedup-policy": {"min_size": 10**6}}),  # too small: in full
        ("/same-b.html", {"dedup-policy": {"only_mime_types": ["text/*"], "statuses": [200]}}),
        ("/same-a.html", {"dedup-policy": {"statuses": [404]}}),  # a 200: in full
        ("/same-a.html", None),  # the proxy's policy: a revisit
    ]
    kinds = _capture_kinds(site, job, steps)
    assert kinds == ["response", "response", "response", "revisit", "response", "revisit"]


@pytest.mark.parametrize(("value", "says"), [
    ('{"dedup-buckets": {"x": "rx"}}', "dedup-buckets"),
    ("{not json", "not JSON"),
    ("[1, 2]", "(top level)"),
    ('{"limits": {"job1/total/pages": 3}}', "limits"),
    ('{"warc-prefix": "a/b"}', "warc-prefix"),
    ('{"blocks": [{"regex": "("}]}', "bad regex"),
    ('{"dedup-ok": "no"}', "dedup-ok"),
    ('{"dedup-policy": {"min_size": -1}}', "dedup-policy"),
    ('{"dedup-policy": {"statuses": [200], "mime": "text/html"}}', "dedup-policy"),
])  # fmt: skip
def test_malformed_header_is_a_400_that_says_why(site: TestSite, tmp_path: Path, value: str,
                                                 says: str) -> None:  # fmt: skip
    with proxy_process("--job", str(tmp_path / "job")) as (port, _):
        r = _get(port, site.url("/p1.html"), value)
        assert r.status_code == 400 and says in r.text, r.text
        ok = _get(port, site.url("/p1.html"), {"unknown-key": {"x": 1}, "warc-prefix": "k"})
        assert ok.status_code == 200


def test_the_documented_schema_is_the_one_validated() -> None:
    doc = (ROOT / "docs" / "proxy-api.md").read_text()
    block = re.search(r"```json\n(\{\n  \"\$schema\".*?)\n```", doc, re.S)
    assert block is not None
    assert json.loads(block.group(1)) == schema()


def _raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        out = b""
        while b"\r\n\r\n" not in out:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out


def test_warcprox_write_record_writes_the_clients_record(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shot = PNG_BYTES * 3
    meta = json.dumps({"warc-prefix": "shots"})
    with proxy_process("--job", str(job)) as (port, _):
        ok = _raw(port, b"WARCPROX_WRITE_RECORD screenshot:http://example.test/ HTTP/1.1\r\n"
                  b"Host: example.test\r\nWARC-Type: resource\r\nContent-Type: image/png\r\n"
                  b"Warcprox-Meta: " + meta.encode() + b"\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(shot) + shot)
        assert ok.startswith(b"HTTP/1.1 204 ")
        bad = _raw(port, b"WARCPROX_WRITE_RECORD screenshot:http://example.test/ HTTP/1.1\r\n"
                   b"Host: example.test\r\nWARC-Type: response\r\nContent-Type: image/png\r\n"
                   b"Content-Length: 1\r\nConnection: close\r\n\r\nx")
        assert bad.startswith(b"HTTP/1.1 400 ") and b"WARC-Type: resource" in bad
        no_type = _raw(port, b"WARCPROX_WRITE_RECORD screenshot:http://example.test/ HTTP/1.1\r\n"
                       b"Host: example.test\r\nWARC-Type: resource\r\n"
                       b"Content-Length: 1\r\nConnection: close\r\n\r\nx")  # fmt: skip
        assert no_type.startswith(b"HTTP/1.1 400 ")
        assert b"needs a Content-Type" in no_type and b"got 'resource'" not in no_type
    (warc,) = (job / "warcs").iterdir()
    assert warc.name.startswith("shots-")
    rec = [r for r in ArchiveReader(str(warc)) if r.type == "resource"]
    assert len(rec) == 1 and rec[0].target_uri == "screenshot:http://example.test/"
    assert rec[0].headers.get("content-type") == "image/png"
    assert rec[0].block.read_all() == shot


def test_status_needs_the_token_and_counts_by_bucket(site: TestSite, tmp_path: Path) -> None:
    ready = re.compile(r"at http://127\.0\.0\.1:(\d+)/ .*token in (\S+), mode 0600\)")
    argv = ["proxy", "--job", str(tmp_path / "job"), "--port", "0", "--allow-private",
            "--resolve-only", "--ca-file", str(tmp_path / "ca.pem")]  # fmt: skip
    with webark_child(argv, ready) as (m, _):
        info = Path(m.group(2))
        assert info == tmp_path / "job" / f"proxy-{m.group(1)}.json"
        assert info.stat().st_mode & 0o777 == 0o600
        saved = json.loads(info.read_text())
        port, token = int(m.group(1)), saved["token"]
        assert saved["port"] == port and token not in m.group(0)
        assert _get(port, site.url("/p1.html"), {"stats": {"buckets": ["b1"]}}).status_code == 200
        crawl_log_lines(tmp_path / "job" / "logs" / "crawl.log", 1)
        base = f"http://127.0.0.1:{port}/status"
        assert httpx.get(base).status_code == 401
        assert httpx.get(base, headers={"Authorization": "Bearer wrong"}).status_code == 401
        got = httpx.get(base, headers={"Authorization": f"Bearer {token}"})
    assert not info.exists()  # removed when the proxy stops
    assert got.status_code == 200
    status = got.json()
    assert status["role"] == "webark-proxy" and status["port"] == port
    assert status["buckets"]["b1"]["new"]["urls"] == 1
    assert status["buckets"]["__all__"]["total"]["urls"] == 1
    assert status["warc_bytes_written"] > 0


def test_two_proxies_on_one_collection_keep_their_own_token_files(tmp_path: Path) -> None:
    """Each proxy's token is in ``proxy-PORT.json``: a second proxy recording into the
    same collection neither overwrites nor, when it stops, removes the first's."""
    coll = tmp_path / "colls" / "c"
    subprocess.run([*WEBARK, "collection", "init", str(coll)], check=True,
                   capture_output=True)  # fmt: skip
    ready = re.compile(r"at http://127\.0\.0\.1:(\d+)/ .*token in (\S+), mode 0600\)")
    argv = ["proxy", "--collection", str(coll), "--port", "0", "--allow-private",
            "--resolve-only", "--ca-file", str(tmp_path / "ca.pem")]  # fmt: skip
    with webark_child(argv, ready) as (first, _):
        with webark_child(argv, ready) as (second, _):
            assert first.group(2) != second.group(2)
            for m in (first, second):
                token = json.loads(Path(m.group(2)).read_text())["token"]
                got = httpx.get(f"http://127.0.0.1:{m.group(1)}/status",
                                headers={"Authorization": f"Bearer {token}"})  # fmt: skip
                assert got.status_code == 200
        assert not Path(second.group(2)).exists() and Path(first.group(2)).exists()
