"""Helpers shared by the CDX tests: where the corpus is, how the gold files' option strings
map to :class:`IndexOptions`, and indexing a file to text the way the peers write it."""

from __future__ import annotations

import ast
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from corpus_location import CORPUS
from webark.cdx.formats import Format, formatter, header
from webark.cdx.indexer import IndexOptions, index_file

PEER_DIRS = {
    "pywb": CORPUS / "pywb" / "expected-index",
    "cdxj-indexer": CORPUS / "cdxj-indexer" / "expected-index",
}


def input_path(peer: str, name: str) -> Path:
    """Where the input WARC of a gold entry lives (INDEX.json names the file only)."""
    for cand in (
        CORPUS / peer / "data" / name,
        CORPUS / "pywb" / "warcs" / name,
        CORPUS / peer / "warcs" / name,
    ):
        if cand.is_file():
            return cand
    raise FileNotFoundError(name)


def parse_options(text: str) -> dict[str, object]:
    """``'records="all", replace_fields="warc-type"'`` → ``{"records": "all", ...}``."""
    if text.strip() in ("", "(defaults)"):
        return {}
    call = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(call, ast.Call)
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}


@dataclass(frozen=True)
class GoldCase:
    peer: str
    file: str
    input: str
    options: dict[str, object]
    lines: int
    note: str

    @property
    def id(self) -> str:
        return f"{self.peer}:{self.file}"

    @property
    def expected_path(self) -> Path:
        return PEER_DIRS[self.peer] / self.file


def gold_cases() -> list[GoldCase]:
    out = []
    for peer, d in PEER_DIRS.items():
        for e in json.loads((d / "INDEX.json").read_text()):
            out.append(
                GoldCase(
                    peer,
                    e["file"],
                    e["input_warc"],
                    parse_options(e["indexer_options"]),
                    e["lines"],
                    e.get("note", ""),
                )
            )
    return out


def to_webark(peer: str, opts: dict[str, object]) -> tuple[Format, IndexOptions, bool, str | None]:
    """A peer's options → (format, IndexOptions, sort, dir_root). Unknown options fail."""
    o = dict(opts)
    sort = bool(o.pop("sort", False))
    kw: dict[str, object] = {}
    fmt: Format
    if peer == "pywb":
        fmt = "cdxj" if (o.pop("cdxj", False) or o.get("minimal")) else "cdx11"
        kw["compat"] = "pywb"
        kw["all_records"] = bool(o.pop("include_all", False))
        kw["post_append"] = bool(o.pop("append_post", False))
        kw["minimal"] = bool(o.pop("minimal", False))
        kw["arc2warc"] = bool(o.pop("arc2warc", False))
    else:
        fmt = "cdx11" if o.pop("cdx11", False) else "cdx9" if o.pop("cdx09", False) else "cdxj"
        kw["compat"] = "cdxj-indexer"
        records = o.pop("records", None)
        if records == "all":
            kw["all_records"] = True
        elif isinstance(records, str):
            kw["records"] = frozenset(records.split(","))
        kw["post_append"] = bool(o.pop("post_append", False))
        kw["digest_records"] = bool(o.pop("digest_records", False))
        if "replace_fields" in o:
            kw["fields"] = tuple(str(o.pop("replace_fields")).split(","))
            kw["replace_fields"] = True
        elif "fields" in o:
            kw["fields"] = tuple(str(o.pop("fields")).split(","))
        # cdxj-indexer takes unknown keyword options (e.g. post=True) and ignores them
        o.pop("post", None)
    dir_root = o.pop("dir_root", None)
    assert not o, f"unmapped options {o}"
    return fmt, IndexOptions(**kw), sort, dir_root  # type: ignore[arg-type]


def with_dir_root(options: IndexOptions, dir_root: str) -> IndexOptions:
    return dataclasses.replace(options, dir_root=dir_root)


def index_text(path: Path, fmt: Format, options: IndexOptions, sort: bool = False) -> str:
    """Index one file to the text the peers would write (header, lines, sorted or not)."""
    fi = index_file(path, options)
    write = formatter(fmt, options.output_fields)
    lines = [write(line) for line in fi]
    if sort:
        lines.sort(key=lambda s: s.encode("utf-8", "surrogateescape"))
    h = header(fmt) if fmt != "ng" else None
    return "".join(f"{x}\n" for x in ([h] if h else []) + lines)
