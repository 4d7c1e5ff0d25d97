"""A resolution API server over generated sources, run as a child process by
test_streaming.py (so its memory and CPU can be measured apart from the test's).

    python stream_server.py LINES    → prints the port, then serves until killed

Collections: ``big`` (LINES lines under ``com,big)/``, made lazily, never stored),
``flaky`` (the same, failing after 100,000 lines) and ``down`` (fails at once).
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator

import uvicorn

from webark.apps.cdx.api import create_app
from webark.apps.cdx.sources import StaticCollections
from webark.apps.http_protocol import http_protocol
from webark.cdx.line import CdxLine
from webark.index.source import IndexUnavailable, KeyRange


class Generated:
    """``n`` captures ``com,big)/p00000000`` … in CDX order, made on demand."""

    def __init__(self, n: int, fail_after: int | None = None):
        self.n = n
        self.fail_after = fail_after

    def scan(self, rng: KeyRange, reverse: bool = False) -> Iterator[CdxLine]:
        if self.fail_after == 0:
            raise IndexUnavailable("generated failure")
        if not rng.start.startswith("com,big)") or reverse:
            return
        digits = rng.start[len("com,big)/p") :][:8]
        first = int(digits) if len(digits) == 8 and digits.isdigit() else 0
        for i in range(first, self.n):
            if self.fail_after is not None and i >= self.fail_after:
                raise IndexUnavailable("generated failure mid-stream")
            key = f"com,big)/p{i:08d}"
            if rng.end is not None and f"{key} 20200101000000" >= rng.end:
                return
            yield CdxLine(
                urlkey=key, timestamp="20200101000000",
                url=f"http://big.com/p{i:08d}", mime="text/html", status="200",
                digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", length=1000, offset=i * 1000,
                filename="big.warc.gz",
            )  # fmt: skip

    def by_digest(self, digest: str) -> Iterator[CdxLine]:
        return iter(())


def main() -> None:
    n = int(sys.argv[1])
    colls = StaticCollections(
        {"big": Generated(n), "flaky": Generated(n, 100_000), "down": Generated(n, 0)}
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        create_app(colls), http=http_protocol(), log_level="error", access_log=False
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
