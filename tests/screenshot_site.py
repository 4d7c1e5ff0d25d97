"""WARCs of browser-crawled pages with their screenshots, for the replay, index and WACZ
tests of issue 13 (imported by those test modules).

The images are real: Chromium (Playwright, ``/usr/bin/chromium``) renders a loopback-free
page (``page.set_content``, nothing fetched) and takes a PNG of the viewport and a JPEG
thumbnail; Pillow is not a dependency of webark. :func:`image_size` parses them back.

:func:`write_screenshot_warc` writes, with webark's own :class:`WarcWriter` and
:class:`~webark.warc.builders.RecordBuilder` (the records a browser crawler writes,
Browsertrix's URI scheme):

* ``PAGE`` (a URL with a query string) captured at ``T1`` and again at ``T2`` (20 s
  later, inside the lookup window of the first), each with its own ``urn:view:`` PNG
  (``VIEW_1`` 640×400, ``VIEW_2`` 800×500) and ``urn:thumbnail:`` JPEG (160×100 and
  200×125), ``WARC-Concurrent-To`` the capture's response, dated 2 s after it;
* ``OVERLAP``: two captures 10 s apart whose screenshots came in the other order
  (``T1`` + 12 s for the first, ``T1`` + 11 s for the second, as with two browser
  pages loading at once): the nearest screenshot in time is the other capture's;
* ``AGAIN``: a page captured at ``T1`` and again an hour later as a revisit (same
  payload), the revisit with a screenshot linked to the revisit record;
* ``PLAIN``: a page without screenshots;
* ``UNLINKED``: a page whose screenshot has no ``WARC-Concurrent-To`` (found by time);
* ``FOREIGN``: a page whose only screenshot names another record (never its own).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from system_packages import require
from webark.warc.builders import Original
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter

CHROMIUM = Path("/usr/bin/chromium")
PAGE = "http://shots.test/article?id=7&lang=en"
PLAIN = "http://shots.test/plain.html"
UNLINKED = "http://shots.test/unlinked.html"
FOREIGN = "http://shots.test/foreign.html"
OVERLAP = "http://shots.test/overlap?b=2&a=1"
AGAIN = "http://shots.test/again.html"
T1 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
T2 = T1 + timedelta(seconds=20)
SHOT_DELAY = timedelta(seconds=2)


def ts14(d: datetime) -> str:
    return d.strftime("%Y%m%d%H%M%S")


@dataclass(frozen=True)
class Images:
    """Two viewport PNGs and two JPEG thumbnails, all different."""

    view_1: bytes
    view_2: bytes
    thumb_1: bytes
    thumb_2: bytes


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG (IHDR, PNG spec §11.2.2) or a baseline/progressive JPEG
    (the SOFn segment, ITU T.81 §B.2.2).

    Raises:
        ValueError: neither.
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return w, h
    if data.startswith(b"\xff\xd8"):
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                raise ValueError(f"JPEG: no marker at {i}")
            marker = data[i + 1]
            seg = struct.unpack(">H", data[i + 2 : i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", data[i + 5 : i + 9])
                return w, h
            i += 2 + seg
    raise ValueError("not a PNG or JPEG")


_HTML = """<!doctype html><html><body style="margin:0;font:40px sans-serif;
background:linear-gradient(90deg,{a},{b})"><h1 style="margin:20px">{text}</h1>
<div style="width:50%;height:120px;background:#fff8">{text}</div></body></html>"""


_IMAGES: list[Images] = []


def images(browser: Any | None = None) -> Images:
    """The screenshots, taken once per test session (about a second) with
    ``browser`` (a Playwright Browser, for tests that already run one: Playwright's
    sync API cannot start twice in one thread), else a Chromium launched here."""
    if _IMAGES:
        return _IMAGES[0]
    if browser is not None:
        _IMAGES.append(_take(browser))
        return _IMAGES[0]
    require(CHROMIUM.exists(), f"Chromium ({CHROMIUM})", "WEBARK_BROWSER=1 bash scripts/setup.sh")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        own = pw.chromium.launch(executable_path=str(CHROMIUM),
                                 args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        try:
            _IMAGES.append(_take(own))
        finally:
            own.close()
    return _IMAGES[0]


def _take(browser: Any) -> Images:
    out: list[bytes] = []
    for (w, h), (a, b, text) in (
        ((640, 400), ("#c33", "#fc3", "first capture")),
        ((800, 500), ("#36c", "#3c9", "second capture")),
    ):
        page = browser.new_page(viewport={"width": w, "height": h})
        try:
            page.set_content(_HTML.format(a=a, b=b, text=text))
            out.append(page.screenshot(type="png"))
            page.set_viewport_size({"width": w // 4, "height": h // 4})
            page.set_content(_HTML.format(a=a, b=b, text=text).replace("40px", "10px"))
            out.append(page.screenshot(type="jpeg", quality=70))
        finally:
            page.close()
    return Images(view_1=out[0], thumb_1=out[1], view_2=out[2], thumb_2=out[3])


def _html(title: str) -> bytes:
    body = f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
    body += '<p>A page a browser crawled.</p><a href="/plain.html">plain</a></body></html>'
    raw = body.encode()
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(raw)}\r\n\r\n")  # fmt: skip
    return head.encode() + raw


def _page(w: WarcWriter, url: str, when: datetime, title: str,
          original: WarcRecord | None = None) -> WarcRecord:  # fmt: skip
    """The response (a revisit of ``original`` when given) and request of ``url``."""
    path = url.split("shots.test", 1)[1]
    req = f"GET {path} HTTP/1.1\r\nHost: shots.test\r\n\r\n".encode()
    ref = None
    if original is not None:
        ref = Original(url, original.headers.get("WARC-Date") or "", original.record_id,
                       original.headers.get("WARC-Payload-Digest"))  # fmt: skip
    return w.write(*w.builder.exchange(url, _html(title), req, date=when, original=ref))[0]


def _shot(w: WarcWriter, kind: str, url: str, data: bytes, when: datetime,
          concurrent_to: list[str]) -> WarcRecord:  # fmt: skip
    ctype = "image/png" if kind == "view" else "image/jpeg"
    return w.write(w.builder.resource(f"urn:{kind}:{url}", data, ctype, date=when,
                                      concurrent_to=concurrent_to))[0]  # fmt: skip


def write_screenshot_warc(out: Path, browser: Any | None = None) -> Path:
    """Write the WARC of the module docstring into folder ``out``; its path
    (``browser``: see :func:`images`)."""
    img = images(browser)
    w = WarcWriter(out, prefix="SHOTS")
    with w:
        for when, view, thumb, n in ((T1, img.view_1, img.thumb_1, 1),
                                     (T2, img.view_2, img.thumb_2, 2)):  # fmt: skip
            resp = _page(w, PAGE, when, f"Article, capture {n}")
            _shot(w, "view", PAGE, view, when + SHOT_DELAY, [resp.record_id or ""])
            _shot(w, "thumbnail", PAGE, thumb, when + SHOT_DELAY, [resp.record_id or ""])
        first = _page(w, OVERLAP, T1, "Overlap 1")
        second = _page(w, OVERLAP, T1 + timedelta(seconds=10), "Overlap 2")
        _shot(w, "view", OVERLAP, img.view_2, T1 + timedelta(seconds=11),
              [second.record_id or ""])  # fmt: skip
        _shot(w, "view", OVERLAP, img.view_1, T1 + timedelta(seconds=12),
              [first.record_id or ""])  # fmt: skip
        again = _page(w, AGAIN, T1, "Again")
        revisit = _page(w, AGAIN, T1 + timedelta(hours=1), "Again", again)
        assert revisit.type == "revisit"
        _shot(w, "view", AGAIN, img.view_2, T1 + timedelta(hours=1) + SHOT_DELAY,
              [revisit.record_id or ""])  # fmt: skip
        _page(w, PLAIN, T1, "Plain")
        _page(w, UNLINKED, T1, "Unlinked")
        _shot(w, "view", UNLINKED, img.view_1, T1 + SHOT_DELAY, [])
        _page(w, FOREIGN, T1, "Foreign")
        other = "<urn:uuid:00000000-0000-4000-8000-000000000000>"
        _shot(w, "view", FOREIGN, img.view_2, T1 + SHOT_DELAY, [other])
    assert len(w.paths) == 1, w.paths
    return Path(w.paths[0])
