"""The pages of an archive, as ``pages.jsonl`` (json-pages-1.0, the page list of WACZ
and Browsertrix that ReplayWeb.page shows and searches).

File: a header line ``{"format": "json-pages-1.0", "id": "pages", "title": …,
"hasText": …}``, then one page a line ``{"id", "url", "ts", "title", "mime", "status",
"seed", "depth"[, "text"]}``; ``ts`` is the capture's WARC-Date in ISO 8601 UTC with a
``Z`` (how Browsertrix writes it), ``id`` a stable 32-hex-digit name of (url, ts).

Which captures are pages: ``response`` and ``revisit`` records (and ARC records) of
``http(s)`` URLs with an HTTP status 2xx other than 204/206 and an HTML type
(``text/html``, ``application/xhtml+xml``). When the crawl.log of the crawl that made
the records is known (:class:`HopPaths`), a capture is a page only if it was reached as
a page: a seed, or a URI whose hop path, without its trailing redirect hops ``R``, ends
in a navigational hop (``L`` link, ``X`` speculative link). Embedded documents (``E``,
iframes) and prerequisites (``P``) are not pages. ``seed`` is true for seeds and the
redirect targets of seeds (hop path ``R``…); ``depth`` is the number of ``L``/``X`` hops
(Heritrix link hops), absent when no crawl.log is known. Without a crawl.log every HTML
capture is a page (as ``wacz create --detect-pages``).

Titles and text come from :func:`webark.search.extract.document_for` (the search
document of the capture: same charset and size rules); a revisit has no payload, so its
page has the title of nothing and no text.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from webark.crawllog.parse import CrawlLogError, iter_crawl_log
from webark.search.document import content_type_norm
from webark.search.extract import Skips, capture_title, document_for
from webark.warc.reader import ArchiveReader
from webark.warc.record import Problem, WarcRecord

__all__ = ["PAGES_FORMAT", "HopPaths", "Page", "page_of", "pages_of_warcs", "write_pages"]

PAGES_FORMAT = "json-pages-1.0"
_PAGE_HOPS = frozenset("LX")
_NOT_PAGE_HOPS = frozenset("EPI")


@dataclass(frozen=True, slots=True)
class Page:
    """One line of pages.jsonl (module docstring). ``status`` is the HTTP status,
    ``depth`` None when unknown, ``text`` None when not asked for."""

    url: str
    ts: str
    title: str
    mime: str
    status: int
    seed: bool
    depth: int | None = None
    text: str | None = None

    @property
    def id(self) -> str:
        """32 hex digits of SHA-256 over ``ts`` and ``url``: the same capture always
        gets the same id (json-pages-1.0 only asks for one unique per file)."""
        h = hashlib.sha256(f"{self.ts} {self.url}".encode("utf-8", "surrogateescape"))
        return h.hexdigest()[:32]

    def to_json(self) -> dict[str, object]:
        """The page line as a JSON object (keys of the module docstring)."""
        out: dict[str, object] = {"id": self.id, "url": self.url, "ts": self.ts,
                                  "title": self.title, "mime": self.mime,
                                  "status": self.status, "seed": self.seed}  # fmt: skip
        if self.depth is not None:
            out["depth"] = self.depth
        if self.text is not None:
            out["text"] = self.text
        return out


class HopPaths:
    """The hop path of each URL from crawl.log files (the last line of a URL wins), and
    the lines that could not be read (``problems``: ``"FILE:LINE: message"``)."""

    def __init__(self, crawl_logs: Iterable[str | os.PathLike[str]]) -> None:
        self._hops: dict[str, str] = {}
        self.problems: list[str] = []
        for path in crawl_logs:
            for number, item in iter_crawl_log(path):
                if isinstance(item, CrawlLogError):
                    self.problems.append(f"{path}:{number}: {item}")
                elif item.status > 0:
                    self._hops[item.uri] = item.hop_path

    def __len__(self) -> int:
        return len(self._hops)

    def get(self, url: str) -> str | None:
        """The hop path of ``url`` (``""`` for a seed), None when it was not crawled."""
        return self._hops.get(url)


def _as_page(hop_path: str) -> tuple[bool, bool, int]:
    """``(is a page, is a seed, depth)`` of a hop path (module docstring)."""
    core = hop_path.split("+", 1)[-1].rstrip("R")
    dropped = hop_path.split("+", 1)[0] if "+" in hop_path else ""
    depth = sum(1 for h in core if h in _PAGE_HOPS) + (int(dropped) if dropped.isdigit() else 0)
    if not core:
        return True, not dropped, depth
    return core[-1] in _PAGE_HOPS, False, depth


def _iso(rec: WarcRecord) -> str | None:
    date = rec.date
    if date is None:
        return None
    return date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def page_of(rec: WarcRecord, *, warc_name: str, hops: HopPaths | None = None,
            with_text: bool = False) -> Page | None:  # fmt: skip
    """The page of one record, or None when it is not a page (module docstring).

    Args:
        rec: a record read by :class:`~webark.warc.reader.ArchiveReader` (body readable).
        warc_name: the WARC's name (for messages of the text extraction).
        hops: the crawl's hop paths; None: every HTML capture is a page.
        with_text: fill ``text`` with the page's visible text.
    """
    if rec.type not in ("response", "revisit"):
        return None
    http, url = rec.http, rec.target_uri or ""
    if http is None or http.status is None or not url.startswith(("http://", "https://")):
        return None
    if not 200 <= http.status < 300 or http.status in (204, 206):
        return None
    mime = http.mime or ""
    if content_type_norm(mime) != "html":
        return None
    seed, depth = False, None
    if hops is not None:
        hop_path = hops.get(url)
        if hop_path is None:
            return None  # not a URI of this crawl (e.g. a record another tool added)
        is_page, seed, depth = _as_page(hop_path)
        if not is_page:
            return None
    ts = _iso(rec)
    if ts is None:
        return None
    title, text = "", None
    if with_text:
        doc = document_for(rec, warc_name=warc_name, collection="", skips=Skips())
        title, text = (doc.title, doc.content) if doc is not None else ("", "")
    else:
        title = capture_title(rec)
    return Page(url=url, ts=ts, title=title, mime=mime, status=http.status, seed=seed,
                depth=depth, text=text)  # fmt: skip


def pages_of_warcs(
    paths: Sequence[str | os.PathLike[str]],
    *,
    hops: HopPaths | None = None,
    with_text: bool = False,
    problems: list[Problem] | None = None,
) -> Iterator[Page]:
    """The pages of the WARC/ARC files ``paths``, in file and record order.

    Broken records are skipped by the reader, which carries on; its problems (file and
    offset) are appended to ``problems``. Raises ``OSError`` when a file cannot be read.
    """
    for path in paths:
        reader = ArchiveReader(path)
        name = os.path.basename(os.fspath(path))
        for rec in reader:
            page = page_of(rec, warc_name=name, hops=hops, with_text=with_text)
            if page is not None:
                yield page
        if problems is not None:
            problems.extend(reader.problems)


def write_pages(out: str | os.PathLike[str], pages: Iterable[Page], *,
                title: str = "All Pages", has_text: bool = False) -> int:  # fmt: skip
    """Write ``pages`` as a json-pages-1.0 file at ``out`` (module docstring); returns
    the number of pages. The file appears whole or not at all: it is written as
    ``out + ".partial"``, flushed to disk and renamed. A capture listed twice (same id)
    is written once. Raises ``OSError``."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".partial")
    seen: set[str] = set()
    header = {"format": PAGES_FORMAT, "id": "pages", "title": title, "hasText": has_text}
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(json.dumps(header) + "\n")
            for page in pages:
                if page.id in seen:
                    continue
                seen.add(page.id)
                f.write(json.dumps(page.to_json()) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return len(seen)
