"""Digests of the indexer's output on every corpus file, per option set, format and
compat: recorded before the indexer was split into modules (issue 16), so the split (and
any later refactoring) is checked byte for byte against the lines it wrote then.

    .venv/bin/python tests/cdx/indexer_snapshot.py > tests/cdx/data/indexer_snapshot.json

regenerates them (only when the output is meant to change, or the corpus did)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from corpus_location import CORPUS
from webark.cdx.formats import formatter
from webark.cdx.indexer import FileIndex, IndexOptions

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".gz.bad")

OPTION_SETS: dict[str, dict[str, object]] = {
    "default": {},
    "post-append": {"post_append": True},
    "all-post": {"all_records": True, "post_append": True},
    "responses": {"records": frozenset({"response"})},
    "no-response": {"records": frozenset({"revisit", "request"})},
    "fields": {
        "fields": ("referrer", "method", "http:content-length", "req.http:user-agent",
                   "recordDigest"),
    },
    "minimal": {"minimal": True},
    "arc2warc": {"arc2warc": True},
}


def archives() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES))


def snapshot() -> dict[str, str]:
    """``{"option set/format/compat": sha256 hex}`` over every corpus file: the text path's
    lines, the CdxLine path's formatted lines and the problems, with the file names relative
    to the corpus (the digests do not depend on where the corpus is)."""
    out: dict[str, str] = {}
    files = archives()
    for name, kw in OPTION_SETS.items():
        for fmt in ("cdxj", "cdx11", "cdx9", "ng"):
            for compat in ("pywb", "cdxj-indexer"):
                try:
                    o = IndexOptions.for_format(fmt, compat=compat, **kw)  # type: ignore[arg-type]
                except ValueError:
                    continue  # minimal with post_append
                h = hashlib.sha256()
                write = formatter(fmt, o.output_fields)  # type: ignore[arg-type]
                for p in files:
                    h.update(str(p.relative_to(CORPUS)).encode() + b"\0")
                    fi = FileIndex(p, o)
                    for t in fi.text_lines(fmt, o.output_fields):
                        h.update(t.encode("utf-8", "surrogateescape") + b"\n")
                    for line in FileIndex(p, o):
                        h.update(b"L" + write(line).encode("utf-8", "surrogateescape") + b"\n")
                    for pr in fi.problems:  # with the path relative to the corpus
                        text = str(pr).replace(str(CORPUS) + "/", "")
                        h.update(text.encode("utf-8", "surrogateescape") + b"\n")
                out[f"{name}/{fmt}/{compat}"] = h.hexdigest()
    return out


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True)
    print()
