"""A 1 GiB download through ``webark proxy`` is streamed: the client gets every byte,
the WARC holds it (its payload digest is that of the bytes sent), and the proxy's peak
RSS stays far below the body's size (the recording is spooled to disk)."""

from __future__ import annotations

import hashlib
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from proxy_support import crawl_log_lines, proxy_process

from webark.core.digests import Digest
from webark.warc.reader import ArchiveReader

SIZE = 1 << 30
PIECE = bytes(range(256)) * 4096  # 1 MiB


class _Big(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(SIZE))
        self.end_headers()
        for _ in range(SIZE // len(PIECE)):
            self.wfile.write(PIECE)


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_one_gib_body_is_streamed_with_bounded_memory(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Big)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/big.bin"
    job = tmp_path / "job"
    try:
        with proxy_process("--job", str(job), "--no-dedup") as (port, proc):
            got = subprocess.run(
                ["curl", "-s", "-x", f"http://127.0.0.1:{port}", "-o", "/dev/null",
                 "-w", "%{http_code} %{size_download}", url],
                capture_output=True, text=True, timeout=300, check=True,
            )  # fmt: skip
            assert got.stdout == f"200 {SIZE}"
            crawl_log_lines(job / "logs" / "crawl.log", 1, wait=120)
            peak = _peak_rss_kib(proc.pid)
    finally:
        server.shutdown()
        server.server_close()
    assert peak < 150 * 1024, f"peak RSS {peak} KiB"
    expected = hashlib.sha1()
    for _ in range(SIZE // len(PIECE)):
        expected.update(PIECE)
    (warc,) = (job / "warcs").iterdir()
    resp = next(r for r in ArchiveReader(str(warc)) if r.type == "response")
    assert resp.headers.get("warc-payload-digest") == Digest("sha1", expected.digest()).label()
    assert resp.content_length > SIZE
