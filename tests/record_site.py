"""The site the record-mode tests record (``webark serve --record``): a page with a style
sheet that loads a background image, an image, a script that fetches JSON at run time
and a link to a second page; and helpers to run ``webark serve`` over a fresh collection."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

from http_wait import WEBARK
from sites import CSS, HTML, PNG, Page

JS = (("Content-Type", "text/javascript"),)
JSON = (("Content-Type", "application/json"),)


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid PNG of one colour (8-bit RGB, PNG spec §11.2), for images a browser must
    decode (``naturalWidth`` > 0)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))  # fmt: skip


PAGE = (b'<!doctype html><html><head><title>before</title>'
        b'<link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>'
        b'<body><p id="p">recorded</p><img id="i" src="img/dot.png">'
        b'<a id="a" href="/second.html">second</a></body></html>')  # fmt: skip
CSS_BODY = b"#p { color: rgb(0, 128, 0); background: url(/img/bg.png) }"
APP_JS = (b"fetch('/data.json').then(r => r.json())"
          b".then(d => { document.title = d.title; });")  # fmt: skip
DOT = png(7, 5, (255, 0, 0))
BG = png(3, 3, (0, 0, 255))


def record_pages() -> dict[str, Page]:
    """Path → page of the recorded site."""
    return {
        "/": (200, HTML, PAGE),
        "/style.css": (200, CSS, CSS_BODY),
        "/app.js": (200, JS, APP_JS),
        "/data.json": (200, JSON, b'{"title": "script ran"}'),
        "/img/dot.png": (200, PNG, DOT),
        "/img/bg.png": (200, PNG, BG),
        "/second.html": (200, HTML, b"<!doctype html><title>second</title><p>two</p>"),
        "/moved": (301, (("Location", "/second.html"),), b""),
    }


#: What the page loads (the link to /second.html is not followed by loading it).
SUBRESOURCES = ("/style.css", "/app.js", "/data.json", "/img/dot.png", "/img/bg.png")


def new_collection(root: Path, name: str = "rec") -> Path:
    """``webark collection init ROOT/NAME`` (sqlite store); returns the collection."""
    subprocess.run([*WEBARK, "collection", "init", str(root / name)], check=True,
                   capture_output=True)  # fmt: skip
    return root / name


def warc_check(coll: Path) -> subprocess.CompletedProcess[str]:
    """``webark warc check`` of every WARC of the collection (closed: no ``.open``)."""
    warcs = sorted(str(p) for p in (coll / "warcs").iterdir())
    assert warcs and not any(w.endswith(".open") for w in warcs), warcs
    return subprocess.run([*WEBARK, "warc", "check", *warcs], capture_output=True, text=True,
                          check=False)  # fmt: skip
