"""cdx_key() against the python ``surt`` package (the URL keys of pywb), on real URLs.

URLs come from the corpus: every WARC-Target-URI of the WARC files, the URL line of ARC
records, the original-URL column of the CDX files and the URI and via columns of the
crawl.logs. Each must get exactly surt.surt()'s key, for the default options and for
each non-default option.

surt's IP canonicalization may call ``socket.gethostbyname_ex`` on dotted numeric hosts;
the tests replace it with ``inet_aton`` (the answer glibc gives such names without a
lookup), so nothing leaves the machine.
"""

from __future__ import annotations

import random
import re
import socket
import zlib
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import surt
import surt.GoogleURLCanonicalizer as google_canonicalizer

# as tests/conftest.py: shared/corpus beside the repository, else $WEBARK_CORPUS
from corpus_location import CORPUS
from webark.url import cdx_key

OPTIONS: list[dict[str, bool]] = [
    {},
    {"with_scheme": True},
    {"trailing_comma": True},
    {"host_massage": False},
    {"reverse_ipaddr": False},
    {"with_scheme": True, "trailing_comma": True, "host_massage": False},
]


def _local_gethostbyname_ex(name: str | bytes) -> tuple[str, list[str], list[str]]:
    text = name.decode("latin-1") if isinstance(name, bytes) else name
    try:
        return (text, [], [socket.inet_ntoa(socket.inet_aton(text))])
    except (OSError, ValueError) as exc:
        raise socket.gaierror(socket.EAI_NONAME, "not a numeric address") from exc


@pytest.fixture(autouse=True)
def _no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(google_canonicalizer.socket, "gethostbyname_ex", _local_gethostbyname_ex)


def _decompress_members(data: bytes) -> bytes:
    out = []
    while data:
        d = zlib.decompressobj(31)
        try:
            out.append(d.decompress(data))
        except zlib.error:
            break
        data = d.unused_data
    return b"".join(out)


_TARGET_URI = re.compile(rb"(?im)^WARC-Target-URI:[ \t]*(\S[^\r\n]*?)[ \t]*\r?$")
_ARC_URL_LINE = re.compile(
    rb"(?m)^((?:https?|dns|filedesc|ftp|mailto|whois)\S*) "
    rb"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3} \d{14} "
)


def _urls_of(path: Path) -> list[bytes]:
    name = path.name
    urls: list[bytes] = []
    if ".warc" in name or ".arc" in name:
        data = path.read_bytes()
        if name.endswith(".gz"):
            data = _decompress_members(data)
        urls += _TARGET_URI.findall(data)
        if ".arc" in name:
            urls += _ARC_URL_LINE.findall(data)
    elif name.endswith(".cdx"):
        for line in path.read_bytes().splitlines():
            fields = line.split(b" ")
            if len(fields) >= 3 and not line.startswith(b" CDX"):
                urls.append(fields[2])
    elif name.endswith(".log"):
        for line in path.read_bytes().splitlines():
            fields = line.split()
            if len(fields) > 5:
                urls += [fields[3], fields[5]]
    return [u for u in urls if u and u != b"-"]


def _sources() -> Iterator[tuple[str, list[bytes]]]:
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file():
            urls = _urls_of(path)
            if urls:
                yield str(path.relative_to(CORPUS)), sorted(set(urls))


SOURCES = dict(_sources())


def test_peer_version() -> None:
    major, minor, patch = (int(x) for x in version("surt").split(".")[:3])
    assert (major, minor, patch) >= (0, 3, 1)


def test_the_corpus_gives_enough_urls() -> None:
    distinct = {u for urls in SOURCES.values() for u in urls}
    assert len(distinct) >= 1000
    assert any(b"xn--" in u for u in distinct)  # IDN hosts
    assert any(u.startswith(b"dns:") for u in distinct)
    assert any(u.startswith(b"filedesc:") for u in distinct)


def _mismatches(urls: list[bytes | str]) -> list[Any]:
    bad = []
    for url in urls:
        for options in OPTIONS:
            expected = surt.surt(url, **options)
            got = cdx_key(url, **options)
            if got != expected:
                bad.append((url, options, got, expected))
    return bad


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_cdx_key_equals_surt_on_corpus_urls(source: str) -> None:
    raw = SOURCES[source]
    text = [u.decode("utf-8", "surrogateescape") for u in raw]
    assert _mismatches([*raw, *text]) == []


# Odd URLs built from pieces that exercise every rule; only those surt accepts (it raises
# on invalid ports and on blank input, where cdx_key still gives a key).
_PIECES = [
    "http://", "https://", "HTTP://", "ftp://", "dns:", "mailto:", "www.", "WWW2.", "www",
    "example", ".com", ".", "..", "/", "//", "?", "&", "=", "#", "%", "%2", "%25", "%2e",
    "%41", "%C3%BC", "ü", "☃", ":", ":80", ":443", ":8080", "@", "user:pw@", "[", "]",
    "127.0.0.1", "0x7f", "017", "3279880203", "1.2.3.256", " ", "\t",
    "jsessionid=0123456789abcdefghijklemopqrstuv", "sid=0123456789ABCDEFGHIJKLEMOPQRSTUV",
    "CFID=1&CFTOKEN=2", "(S(4hqa0555fwsecu455xqckv45))/", "a.aspx", "B=2", "a=1", "\\",
    ";", "+", "/./", "/../",
]  # fmt: skip


def test_cdx_key_equals_surt_on_generated_urls() -> None:
    rng = random.Random(20240501)
    accepted: list[bytes | str] = []
    while len(accepted) < 3000:
        url = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 9)))
        try:
            surt.surt(url)
        except Exception:  # surt's own failures (ValueError on ports, …)
            continue
        accepted += [url, url.encode("utf-8")]
    assert _mismatches(accepted) == []
