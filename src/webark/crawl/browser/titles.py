"""The browser's document titles of a hybrid crawl's pages, kept for the job's page list
(``pages/pages.jsonl``, :mod:`webark.crawl.page_list`): a script-made page often has
its real title only once its scripts ran (a single-page app sets ``document.title``),
which the captured HTML does not show.

``JOBDIR/state/browser-titles.jsonl``: one JSON object a line, ``{"url": …, "title":
…}``, appended after each visit (a resumed crawl keeps the earlier runs'); the last line
of a URL wins.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

__all__ = ["TITLES_FILE", "append_title", "read_titles"]

log = logging.getLogger(__name__)

TITLES_FILE = "browser-titles.jsonl"
"""The file's name in the job's ``state/`` folder."""


def append_title(path: Path, url: str, title: str) -> None:
    """Append ``url``'s title to the titles file ``path`` (created with its folder).

    Raises:
        OSError: the file cannot be written (a full disk).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"url": url, "title": title}, ensure_ascii=False) + "\n")


def read_titles(path: Path) -> dict[str, str]:
    """URL → title from the titles file ``path`` ({} when there is none); a torn or
    malformed line (a kill during a write) is skipped."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return out
    for n, line in enumerate(text.splitlines(), 1):
        try:
            obj = json.loads(line)
            url, title = obj["url"], obj["title"]
        except (ValueError, KeyError, TypeError):
            log.warning("%s:%d: not a title line, skipped", path, n)
            continue
        if isinstance(url, str) and isinstance(title, str):
            out[url] = title
    return out
