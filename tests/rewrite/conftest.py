"""Fixtures of the rewrite tests: real payloads from the corpus WARCs and the Python
documentation (Debian's python3-doc), read once per session."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from webark.rewrite.mime import media_type
from webark.warc.reader import ArchiveReader

PYDOCS = Path("/usr/share/doc/python3/html")


@dataclass(frozen=True)
class Payload:
    """One archived response: where it is, its URL, Content-Type and payload bytes."""

    path: str
    offset: int
    url: str
    content_type: str
    body: bytes

    @property
    def charset(self) -> str | None:
        for param in self.content_type.split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip("\"'")
        return None


def _corpus_warcs(corpus: Path) -> list[Path]:
    found = [p for p in sorted(corpus.rglob("*")) if p.is_file()
             and p.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz"))]
    return found


def _payloads(corpus: Path) -> list[Payload]:
    """Distinct payloads (the corpus holds several copies of some files: .warc and
    .warc.gz, ARC and its WARC conversion)."""
    out: list[Payload] = []
    seen: set[tuple[str, bytes]] = set()
    for path in _corpus_warcs(corpus):
        try:
            for rec in ArchiveReader(path):
                if rec.type != "response" or not rec.target_uri:
                    continue
                http = rec.http
                if http is None or http.status != 200:
                    continue
                ct = next((v for k, v in http.headers if k.lower() == "content-type"), "")
                if media_type(ct) not in ("text/html", "application/xhtml+xml", "text/css",
                                          "application/javascript", "text/javascript",
                                          "application/x-javascript"):
                    continue
                try:
                    body = rec.payload(decode_content_encoding=True)
                except ValueError:  # ClueWeb quirk: "Content-Encoding: gzip", plain body
                    body = rec.payload()
                key = (rec.target_uri, hashlib.sha1(body).digest())
                if body and key not in seen:
                    seen.add(key)
                    out.append(Payload(str(path), rec.offset, rec.target_uri, ct, body))
        except Exception:  # deliberately broken corpus files (tested elsewhere)
            continue
    return out


@pytest.fixture(scope="session")
def corpus_payloads(corpus: Path) -> list[Payload]:
    """HTML, CSS and JavaScript 200 responses of every WARC/ARC in the corpus."""
    found = _payloads(corpus)
    assert len(found) > 100, "the corpus WARCs hold over 100 distinct text payloads"
    return found


@pytest.fixture(scope="session")
def html_payloads(corpus_payloads: list[Payload]) -> list[Payload]:
    return [p for p in corpus_payloads if "html" in media_type(p.content_type)]


@pytest.fixture(scope="session")
def pydocs_pages() -> list[Path]:
    """Some pages of the Python documentation (installed by scripts/demo.sh)."""
    pages = [PYDOCS / "library" / "stdtypes.html", PYDOCS / "library" / "re.html",
             PYDOCS / "index.html", PYDOCS / "whatsnew" / "3.11.html"]
    missing = [p for p in pages if not p.exists()]
    if missing:
        pytest.skip(f"python3-doc not installed ({missing[0]}); run scripts/demo.sh")
    return pages
