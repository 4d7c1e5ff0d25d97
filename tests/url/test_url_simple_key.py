"""The shortcut of :func:`webark.url.cdx_key` for plain http(s) URLs gives the key of the
full canonicalization pipeline, on every URL found in the corpus and on variants that
touch each rule (case, ``www``, trailing slash, query order, session ids, ports, dots)."""

from __future__ import annotations

import contextlib
import gzip
import re

from corpus_location import CORPUS
from webark.url.canon import _to_bytes
from webark.url.surt import _cdx_key_bytes, _simple_cdx_key

_URL = re.compile(r"https?://[^\s\"'<>\\]+")


def _corpus_urls() -> set[str]:
    urls: set[str] = set()
    for p in CORPUS.rglob("*"):
        if not p.is_file() or p.stat().st_size > 20_000_000:
            continue
        data = p.read_bytes()
        if p.name.endswith(".gz"):
            with contextlib.suppress(OSError, EOFError):
                data = gzip.decompress(data)
        urls.update(m.group() for m in _URL.finditer(data.decode("latin-1")))
    return urls


def _variants(url: str) -> list[str]:
    return [
        url,
        url.upper(),
        url + "/",
        url + "?b=2&a=1&A=3",
        url + "?jsessionid=0123456789abcdef0123456789abcdef&x=1",
        url + "?sid=0123456789abcdefghijklemopqrstuv",
        url.replace("://", "://www."),
        url.replace("://", "://WWW3."),
        url + "?",
        url + "/./a",
        url + "//x",
        url + ":80/",
        url + "?a=b?c&",
    ]


def _full(url: str) -> str:
    return _cdx_key_bytes(_to_bytes(url), False, False, True, True).decode(
        "utf-8", "surrogateescape"
    )


def test_shortcut_equals_pipeline_on_corpus_urls() -> None:
    base = sorted(_corpus_urls())
    assert len(base) > 1000
    urls = {v for u in base[:5000] for v in _variants(u)} | set(base)
    taken = 0
    for url in sorted(urls):
        key = _simple_cdx_key(url)
        if key is not None:
            taken += 1
            assert key == _full(url), url
    assert taken > len(urls) // 3  # the shortcut is the usual case


def test_shortcut_cases() -> None:
    assert _simple_cdx_key("https://www.Example.com/A/?b=2&a=1") == "com,example)/a?a=1&b=2"
    assert _simple_cdx_key("http://www2.example.com") == "com,example)/"
    assert _simple_cdx_key("http://example.com/?b&a") == "com,example)/?a&b"
    # left to the pipeline: IPv4 forms, ports, escapes, dot segments, fragments, spaces
    for url in (
        "http://10.0.0.1/",
        "http://example.com:8080/",
        "http://example.com/%41",
        "http://example.com/a/../b",
        "http://example.com/#x",
        "http://example.com/a b",
        "http://user@example.com/",
        "http://example.com/?",
        "http://ex..ample.com/",
        "ftp://example.com/",
    ):
        assert _simple_cdx_key(url) is None, url
