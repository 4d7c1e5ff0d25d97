"""The scripted test site (tests/js_site.py): what it says a static crawler finds is
what webark's own extractors (HTML, CSS, JavaScript literals) find from ``/``."""

from __future__ import annotations

from js_site import JS_PAGES, STATIC_PATHS, js_pages, site_urls
from webark.crawl.extract import extract_links

ORIGIN = "http://127.0.0.1:8000"


def test_static_extraction_finds_only_the_static_part() -> None:
    pages = js_pages()
    seen, todo = {ORIGIN + "/"}, [ORIGIN + "/"]
    while todo:
        url = todo.pop()
        path = url[len(ORIGIN):]
        if path not in pages:
            continue
        _, headers, body = pages[path]
        for link in extract_links(url, None, body, headers):
            if link.url.startswith(ORIGIN) and link.url not in seen:
                seen.add(link.url)
                todo.append(link.url)
    urls = site_urls(ORIGIN)
    assert sorted(seen) == list(urls.static) == sorted(ORIGIN + p for p in STATIC_PATHS)
    assert set(urls.static) < set(urls.all)
    assert set(urls.js_links).isdisjoint(urls.static)
    assert {ORIGIN + p for p in JS_PAGES} <= set(urls.js_links) <= set(urls.pages)
    # the numbers "bulk alone finds X of Y" are made of
    assert (len(urls.static), len(urls.all), len(urls.pages)) == (7, 48, 36)
