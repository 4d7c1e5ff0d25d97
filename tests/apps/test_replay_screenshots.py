"""Screenshots of browser-crawled pages in replay (issue 13): the banner of a capture
links to its own ``urn:view:`` PNG, the link serves it byte for byte as ``image/png``,
and the capture calendar and URL lists show the ``urn:thumbnail:`` JPEGs; on both index
stores (SQLite, PostgreSQL), through the ASGI app over HTTP (httpx)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from index_stores import StoreChoice
from screenshot_site import (
    AGAIN,
    FOREIGN,
    OVERLAP,
    PAGE,
    PLAIN,
    SHOT_DELAY,
    T1,
    T2,
    UNLINKED,
    image_size,
    images,
    ts14,
    write_screenshot_warc,
)
from webark.apps.replay.app import create_server
from webark.apps.replay.paths import url_for_path

_BANNER = re.compile(r"window\.__webark_banner=(\{.*?\});</script>")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory,
           index_store: StoreChoice) -> Iterator[TestClient]:  # fmt: skip
    root = tmp_path_factory.mktemp("shots")
    warc = write_screenshot_warc(root / "warcs")
    coll = index_store.init(root / "colls" / "shots")
    with coll:
        assert [r.status for r in coll.add([warc])] == ["indexed"]
    with TestClient(create_server(root / "colls")) as c:
        yield c


def banner(client: TestClient, ts: str, url: str) -> dict[str, Any]:
    r = client.get(f"/shots/{ts}/{url}", follow_redirects=False)
    assert r.status_code == 200, (r.status_code, r.headers.get("location"))
    m = _BANNER.search(r.text)
    assert m is not None, r.text[:500]
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def shot_url(kind: str, when: str, url: str) -> str:
    return f"/shots/{when}id_/{url_for_path(f'urn:{kind}:{url}')}"


def test_each_capture_links_to_its_own_screenshot(client: TestClient) -> None:
    """Two captures 20 s apart (both screenshots inside the time window of either):
    each banner names the PNG whose WARC-Concurrent-To is its own response."""
    img = images()
    for when, png in ((T1, img.view_1), (T2, img.view_2)):
        data = banner(client, ts14(when), PAGE)
        shot = data["screenshot"]
        assert shot["href"] == shot_url("view", ts14(when + SHOT_DELAY), PAGE), shot
        r = client.get(shot["href"])
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        assert r.content == png
    assert image_size(client.get(shot_url("view", ts14(T1 + SHOT_DELAY), PAGE)).content) \
        == (640, 400)  # fmt: skip
    assert image_size(client.get(shot_url("view", ts14(T2 + SHOT_DELAY), PAGE)).content) \
        == (800, 500)  # fmt: skip


def test_the_link_follows_warc_concurrent_to_not_the_nearest_time(client: TestClient) -> None:
    """Screenshots written in the other order than their pages: the first capture's
    banner links to the later screenshot (its own), not the nearer one."""
    img = images()
    for when, shot_ts, png in (
        (T1, T1 + timedelta(seconds=12), img.view_1),
        (T1 + timedelta(seconds=10), T1 + timedelta(seconds=11), img.view_2),
    ):
        shot = banner(client, ts14(when), OVERLAP)["screenshot"]
        assert shot["href"] == shot_url("view", ts14(shot_ts), OVERLAP), (when, shot)
        assert client.get(shot["href"]).content == png


def test_a_revisit_s_screenshot(client: TestClient) -> None:
    """A revisit capture links to the screenshot whose WARC-Concurrent-To is the
    revisit record; its original (an hour before) has none."""
    later = T1 + timedelta(hours=1)
    shot = banner(client, ts14(later), AGAIN)["screenshot"]
    assert shot["href"] == shot_url("view", ts14(later + SHOT_DELAY), AGAIN)
    assert client.get(shot["href"]).content == images().view_2
    assert banner(client, ts14(T1), AGAIN)["screenshot"] is None


def test_banner_link_of_a_redirected_timestamp(client: TestClient) -> None:
    """A timestamp near the second capture is redirected to it (pywb's 302), and that
    page's banner links to the second screenshot."""
    r = client.get(f"/shots/{ts14(T2)[:12]}59/{PAGE}", follow_redirects=False)
    assert r.status_code == 302
    loc = r.headers["location"]
    assert loc.endswith(f"/shots/{ts14(T2)}/{PAGE}"), loc
    assert banner(client, ts14(T2), PAGE)["screenshot"]["href"] == shot_url(
        "view", ts14(T2 + SHOT_DELAY), PAGE
    )


def test_no_link_without_a_screenshot_of_its_own(client: TestClient) -> None:
    """A page without screenshots has no link; a screenshot whose WARC-Concurrent-To
    names another record is never taken for the capture's; an unlinked one (no
    WARC-Concurrent-To) is found by time."""
    assert banner(client, ts14(T1), PLAIN)["screenshot"] is None
    assert banner(client, ts14(T1), FOREIGN)["screenshot"] is None
    shot = banner(client, ts14(T1), UNLINKED)["screenshot"]
    assert shot["href"] == shot_url("view", ts14(T1 + SHOT_DELAY), UNLINKED)
    assert client.get(shot["href"]).content == images().view_1


def test_thumbnail_is_replayed_as_jpeg(client: TestClient) -> None:
    r = client.get(shot_url("thumbnail", ts14(T1 + SHOT_DELAY), PAGE))
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    assert r.content == images().thumb_1 and image_size(r.content) == (160, 100)


def _thumbs(html: str) -> list[str]:
    return re.findall(r'<img class="thumb" loading="lazy" src="([^"]+)"', html)


def test_calendar_shows_each_capture_s_thumbnail(client: TestClient) -> None:
    r = client.get(f"/shots/*/{PAGE}")
    assert r.status_code == 200
    want = [shot_url("thumbnail", ts14(t + SHOT_DELAY), PAGE) for t in (T1, T2)]
    assert _thumbs(r.text) == [w.replace("&", "&amp;") for w in want]
    img = images()
    for src, jpeg in zip(want, (img.thumb_1, img.thumb_2), strict=True):
        got = client.get(src)
        assert got.headers["content-type"] == "image/jpeg" and got.content == jpeg
    assert _thumbs(client.get(f"/shots/*/{PLAIN}").text) == []


def test_url_list_shows_thumbnails(client: TestClient) -> None:
    """The URL list of the host: the article's row shows the thumbnail of its latest
    capture (T2), the plain page's none."""
    r = client.get("/shots/*/http://shots.test/*")
    assert r.status_code == 200 and "plain.html" in r.text
    want = shot_url("thumbnail", ts14(T2 + SHOT_DELAY), PAGE).replace("&", "&amp;")
    assert _thumbs(r.text) == [want]
    row = next(x for x in r.text.split("<tr>") if "plain.html" in x)
    assert "<img" not in row


@pytest.mark.parametrize("path", [
    f"/shots/{ts14(T1)}mp_/{PAGE}",  # the main-page modifier has the banner too
    f"/shots/{ts14(T1)}/shots.test/article?id=7&lang=en",  # no scheme
    f"/shots/{ts14(T1)}/http:/shots.test/article?id=7&lang=en",  # slashes merged
    f"/shots/{ts14(T1)}/http://shots.test/article?lang=en&id=7",  # query in another order
])  # fmt: skip
def test_url_forms_find_the_same_screenshot(client: TestClient, path: str) -> None:
    r = client.get(path, follow_redirects=False)
    assert r.status_code == 200, (r.status_code, r.headers.get("location"))
    m = _BANNER.search(r.text)
    assert m is not None
    assert json.loads(m.group(1))["screenshot"]["href"] == shot_url(
        "view", ts14(T1 + SHOT_DELAY), PAGE
    )


def test_raw_and_embedded_modes_have_no_banner_lookup(client: TestClient) -> None:
    for mod in ("id_", "if_"):
        r = client.get(f"/shots/{ts14(T1)}{mod}/{PAGE}")
        assert r.status_code == 200 and "__webark_banner" not in r.text


_RULES = """\
- url: http://shots.test/article
  policy: block
- url: http://shots.test/unlinked.html
  policy: exclude
"""


@pytest.fixture(scope="module")
def ruled(tmp_path_factory: pytest.TempPathFactory,
          index_store: StoreChoice) -> Iterator[TestClient]:  # fmt: skip
    """The same WARC in a collection whose access rules block the article and exclude
    the unlinked page (rules written for the pages' URLs, as users write them)."""
    root = tmp_path_factory.mktemp("shots-ruled")
    warc = write_screenshot_warc(root / "warcs")
    coll = index_store.init(root / "colls" / "shots")
    with coll:
        assert [r.status for r in coll.add([warc])] == ["indexed"]
    (root / "colls" / "shots" / "access-rules.yaml").write_text(_RULES)
    with TestClient(create_server(root / "colls")) as c:
        yield c


def test_a_page_s_access_rule_covers_its_screenshots(ruled: TestClient) -> None:
    """A screenshot shows its page: the page's rule applies to it (before, the
    ``urn:view:`` key matched no rule and a blocked page's screenshot was served)."""
    block = ruled.get(shot_url("view", ts14(T1 + SHOT_DELAY), PAGE))
    assert block.status_code == 451 and images().view_1 not in block.content
    assert ruled.get(shot_url("thumbnail", ts14(T1 + SHOT_DELAY), PAGE)).status_code == 451
    gone = ruled.get(shot_url("view", ts14(T1 + SHOT_DELAY), UNLINKED))
    assert gone.status_code == 404
    cdx = ruled.get("/shots/cdx", params={"url": f"urn:view:{PAGE}"})
    assert cdx.status_code == 200 and cdx.text.strip() == ""  # hidden from the API too
    assert banner(ruled, ts14(T1), PLAIN)["screenshot"] is None
    r = ruled.get("/shots/*/http://shots.test/*")
    assert _thumbs(r.text) == []  # the article is blocked: its thumbnail is not shown


def test_prefix_list_shows_the_thumbnail(client: TestClient) -> None:
    """A prefix list whose only URL is the article: the thumbnail scan spans that one
    URL's thumbnail keys and finds its latest."""
    r = client.get("/shots/*/http://shots.test/art*")
    assert r.status_code == 200 and r.text.count("<tr><td>") == 1
    want = shot_url("thumbnail", ts14(T2 + SHOT_DELAY), PAGE).replace("&", "&amp;")
    assert _thumbs(r.text) == [want]


def test_collection_page_lists_pages_not_screenshots(client: TestClient) -> None:
    r = client.get("/shots/")
    listed = re.findall(r'<li><a href="/shots/\*/([^"]+)"', r.text)
    assert "http://shots.test/plain.html" in listed and len(listed) == 6, listed
    assert not [u for u in listed if u.startswith("urn:")]
