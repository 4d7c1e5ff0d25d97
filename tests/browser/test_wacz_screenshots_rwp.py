"""Screenshots in a WACZ opened in ReplayWeb.page (issue 13): its page list shows the
thumbnails of the pages that have one, which it looks up itself as
``{ts}id_/urn:thumbnail:{page url}`` in the package's index (ReplayWeb.page 2.5.3's
``renderPageIcon``): ``webark wacz create`` keeps the records and index lines where a
real client nobody here wrote finds them."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from browser_support import require, wait_for_frame
from test_wacz_replaywebpage import RWP_DIR, RWP_VERSION, RangeHandler, _open, poll_viewer

from http_wait import WEBARK
from screenshot_site import PAGE, image_size, images, write_screenshot_warc

#: [src, naturalWidth, naturalHeight, complete] of every img.thumbnail in the viewer's
#: (open) shadow roots
THUMBNAILS = """() => {
  const out = [];
  const walk = (n) => {
    const el = n.nodeType === Node.ELEMENT_NODE;
    if (el && n.tagName === "IMG" && n.classList.contains("thumbnail"))
      out.push([n.getAttribute("src"), n.naturalWidth, n.naturalHeight, n.complete]);
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(document);
  return out;
}"""


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[dict[str, Any]]:
    require((RWP_DIR / "sw.js").is_file(), f"ReplayWeb.page {RWP_VERSION} ({RWP_DIR})",
            "WEBARK_BROWSER=1 bash scripts/setup.sh")  # fmt: skip
    root = tmp_path_factory.mktemp("rwp-shots")
    warc = write_screenshot_warc(root / "warcs", browser)
    www = root / "www"
    (www / "replay").mkdir(parents=True)
    shutil.copy(RWP_DIR / "ui.js", www / "ui.js")
    shutil.copy(RWP_DIR / "sw.js", www / "replay" / "sw.js")
    res = subprocess.run([*WEBARK, "wacz", "create", str(warc), "-o", str(www / "site.wacz")],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(RangeHandler, directory=str(www)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"base": f"http://127.0.0.1:{server.server_address[1]}/", "www": www}
    finally:
        server.shutdown()
        server.server_close()


def test_page_list_shows_the_thumbnails(browser: Any, viewer: dict[str, Any]) -> None:
    ctx, page, outside = _open(browser, viewer, "list.html", None)
    try:
        def thumbnails(app: Any) -> list[Any]:
            try:
                return [x for x in app.evaluate(THUMBNAILS) if x[3] and x[1] > 0 and PAGE in x[0]]
            except Exception:  # the frame navigated while being read
                return []

        loaded = poll_viewer(page, viewer["base"], thumbnails, lambda x: len(x) == 2)
        app = wait_for_frame(page, lambda f: f.url.startswith(viewer["base"] + "replay/?"))
        # both captures of PAGE show a thumbnail decoded from the package: ReplayWeb.page
        # asks with the page's time in milliseconds (``1714564800000id_/…``), not a
        # 14-digit timestamp, and is answered the URL's latest thumbnail for each (its
        # lookup, not the package: both thumbnails and their index lines are there)
        img = images(browser)
        ours = {image_size(img.thumb_1), image_size(img.thumb_2)}
        assert len(loaded) == 2 and {(w, h) for _src, w, h, _ in loaded} <= ours, loaded
        assert all(f"id_/urn:thumbnail:{PAGE}" in src for src, *_ in loaded)
        # pages without a thumbnail show ReplayWeb.page's placeholder, no image
        others = [x for x in app.evaluate(THUMBNAILS) if PAGE not in x[0] and x[1] > 0]
        assert others == []
        assert outside == []
    finally:
        ctx.close()

