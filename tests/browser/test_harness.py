"""The harness of the replay tests, checked on its own: the screenshot decoder
(png_pixels) against Chromium's own PNGs, and the request log that must catch any request
leaving the replay server. The replay assertions are only as good as these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import static_site, watch_requests
from png_pixels import pixel_stats

# 256×256 canvas of pseudo-random pixels (xorshift, fixed seed): every row filter of the
# PNG encoder gets used; the page computes the expected statistics from the same pixels.
CANVAS_PAGE = """<!doctype html><html><body style="margin:0">
<canvas id="c" width="256" height="256" style="display:block"></canvas>
<script>
const c = document.getElementById("c"), g = c.getContext("2d");
const img = g.createImageData(256, 256);
let s = 2463534242, colours = new Set(), sum = 0, sq = 0;
for (let i = 0; i < img.data.length; i += 4) {
  s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
  const smooth = (i >> 10) & 1;  // half the rows smooth (gradients), half noisy
  const r = smooth ? (i >> 4) & 255 : s & 255, gr = smooth ? (i >> 12) & 255 : (s >> 8) & 255,
        b = smooth ? 128 : (s >> 16) & 255;
  img.data[i] = r; img.data[i + 1] = gr; img.data[i + 2] = b; img.data[i + 3] = 255;
  colours.add((r << 16) | (gr << 8) | b);
  const y = 0.299 * r + 0.587 * gr + 0.114 * b; sum += y; sq += y * y;
}
g.putImageData(img, 0, 0);
const n = 256 * 256, mean = sum / n;
window.expected = {colours: colours.size, stddev: Math.sqrt(sq / n - mean * mean)};
</script></body></html>"""


def test_decodes_chromium_screenshot(context: Any) -> None:
    page = context.new_page()
    page.set_content(CANVAS_PAGE)
    expected = page.evaluate("window.expected")
    stats = pixel_stats(page.locator("#c").screenshot())
    assert (stats.width, stats.height) == (256, 256)
    assert stats.colours == expected["colours"]
    assert stats.luma_stddev == pytest.approx(expected["stddev"], rel=1e-6)


def test_blank_page_is_blank(context: Any) -> None:
    page = context.new_page()
    page.set_content("<body style='background:#fff'></body>")
    stats = pixel_stats(page.screenshot())
    assert (stats.width, stats.height) == (1280, 800)
    assert stats.colours == 1 and stats.luma_stddev == 0.0 and stats.dominant_share == 1.0


def test_rejects_non_png() -> None:
    with pytest.raises(ValueError, match="signature"):
        pixel_stats(b"GIF89a")


def test_request_log_catches_and_blocks_escapes(context: Any) -> None:
    """The harness's own check: a request to another origin than the replay server is
    recorded as escaped and aborted (never sent), one to the replay origin is allowed."""
    with static_site(Path(__file__).parent) as base:
        requests = watch_requests(context, base)
        page = context.new_page()
        page.goto(base + "conftest.py")
        page.set_content(
            f'<img src="{base}nothing.png"><img src="http://127.0.0.2:9/escape.png">'
            '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
        )
        page.wait_for_load_state("networkidle")
    assert requests.escaped == ["http://127.0.0.2:9/escape.png"]
    assert requests.outside() == ["http://127.0.0.2:9/escape.png"]
    assert requests.failed() == {base + "nothing.png": 404}
    assert requests.not_archival(base) == ["http://127.0.0.2:9/escape.png"]
