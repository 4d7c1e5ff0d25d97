"""A small site written into WARCs with webark's WarcWriter, for the search tests (the
corpus has no page in two versions, no declared language, no PDF):

* ``http://site.test/news.html``: two captures (2020-03-01 "The river is high",
  2020-03-02 "The river is low"), ``lang="en"``;
* ``http://site.test/de.html``: a German page (``lang="de"``) about "Flüsse";
* ``http://site.test/secret.html``: a page the access-rules tests exclude;
* ``http://site.test/gz.html``: gzip-encoded;
* ``http://site.test/logo.png``, a revisit and a 404: no documents.

:func:`write_site` returns the WARC; :func:`write_more` a second WARC (added later, for
incremental builds).
"""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

from webark.warc.builders import Original
from webark.warc.writer import WarcWriter

NEWS_1 = (b'<html lang="en"><head><title>Daily news</title></head><body><h1>Daily news</h1>'
          b"<p>The river is high after the storm.</p><p>Markets are calm.</p></body></html>")
NEWS_2 = (b'<html lang="en"><head><title>Daily news</title></head><body><h1>Daily news</h1>'
          b"<p>The river is low again.</p><p>Sports: the home team won.</p></body></html>")
GERMAN = ('<html lang="de"><head><title>Die Flüsse Europas</title></head><body>'
          "<p>Die Donau fließt durch zehn Länder.</p></body></html>").encode()
SECRET = (b'<html lang="en"><head><title>Secret plans</title></head><body>'
          b"<p>The river crossing is planned for Tuesday.</p></body></html>")
GZ = (b'<html lang="en"><head><title>Compressed page</title></head><body>'
      b"<p>Orchards bloom in spring; the river feeds them.</p></body></html>")
MORE = (b'<html lang="en"><head><title>Harbour report</title></head><body>'
        b"<p>Ships wait for the tide at the harbour mouth.</p></body></html>")  # fmt: skip


def when(day: int, month: int = 3) -> datetime:
    return datetime(2020, month, day, tzinfo=UTC)


def ok(body: bytes, ctype: str = "text/html; charset=utf-8", extra: str = "") -> bytes:
    return (f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n").encode() + body  # fmt: skip


def _capture(w: WarcWriter, url: str, resp: bytes, date: datetime,
             original: Original | None = None) -> object:  # fmt: skip
    path = url.split("site.test", 1)[1] or "/"
    req = f"GET {path} HTTP/1.1\r\nHost: site.test\r\n\r\n".encode()
    return w.write(*w.builder.exchange(url, resp, req, date=date, original=original))[0]


def write_site(out: Path) -> Path:
    """The site's main WARC (module docstring)."""
    with WarcWriter(out, prefix="SEARCH") as w:
        _capture(w, "http://site.test/news.html", ok(NEWS_1), when(1))
        _capture(w, "http://site.test/news.html", ok(NEWS_2), when(2))
        _capture(w, "http://site.test/de.html", ok(GERMAN), when(3))
        _capture(w, "http://site.test/secret.html", ok(SECRET), when(4))
        _capture(w, "http://site.test/gz.html",
                 ok(gzip.compress(GZ, mtime=0), extra="Content-Encoding: gzip\r\n"), when(5))
        logo = _capture(w, "http://site.test/logo.png", ok(b"\x89PNG\r\n\x1a\n", "image/png"),
                        when(6))  # fmt: skip
        _capture(w, "http://site.test/logo.png", ok(b"\x89PNG\r\n\x1a\n", "image/png"), when(7),
                 Original("http://site.test/logo.png", logo.headers["WARC-Date"],  # type: ignore[attr-defined]
                          logo.record_id, logo.headers.payload_digest))  # type: ignore[attr-defined]
        _capture(w, "http://site.test/missing.html", (b"HTTP/1.1 404 Not Found\r\n"
                 b"Content-Type: text/html\r\nContent-Length: 9\r\n\r\nnot found"), when(8))
        return Path(w.paths[0])


def write_more(out: Path) -> Path:
    """A second WARC with one page (``Harbour report``)."""
    with WarcWriter(out, prefix="SEARCH-MORE") as w:
        _capture(w, "http://site.test/harbour.html", ok(MORE), when(1, 4))
        return Path(w.paths[0])
