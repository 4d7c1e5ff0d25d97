"""The resume state of ``webark reduplicate``: which input WARCs are finished.

``OUTDIR/reduplicate-state.json`` (JSON, rewritten atomically — temporary file, fsync,
rename — after each input WARC is finished)::

    {"format": 1, "collection": "/abs/path/of/collection",
     "inputs": {"NAME.warc.gz": {"outputs": ["NAME-redup-00000.warc.gz", ...],
                                 "records": 120, "revisits": 40, ...,
                                 "unresolved": [...], "unverified": [...]}}}

An input is listed only once all its output WARCs are closed (renamed from ``.open``).
A run interrupted in the middle of an input leaves that input's output files
(``NAME-redup-NNNNN.warc.gz[.open]``) unlisted; the next run deletes them and writes
that input again (:func:`leftover_outputs`), and skips every listed input.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from webark.core.errors import StorageError

STATE_NAME = "reduplicate-state.json"
STATE_FORMAT = 1
OUTPUT_INFIX = "-redup-"


class StateError(StorageError):
    """The state file is unreadable, of another format, or of another collection."""


def output_prefix(stem: str) -> str:
    """File-name prefix of the outputs of the input WARC ``stem`` (``stem-redup``)."""
    return stem + OUTPUT_INFIX.rstrip("-")


def leftover_outputs(outdir: str | os.PathLike[str], stem: str) -> list[Path]:
    """Output files of input ``stem`` in ``outdir`` (finished, ``.open`` or
    ``.invalid``): ``stem-redup-NNNNN.warc…``."""
    pat = re.compile(re.escape(stem + OUTPUT_INFIX) + r"\d{5}\.")
    d = Path(outdir)
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if pat.match(p.name))


class RunState:
    """The state file of one output folder.

    Args:
        outdir: the output folder.
        collection: absolute path of the collection (a state of another collection is
            refused).

    Raises:
        StateError: see the class.
    """

    def __init__(self, outdir: str | os.PathLike[str], collection: str):
        self.path = Path(outdir) / STATE_NAME
        self.collection = collection
        self.inputs: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise StateError(f"{self.path}: unreadable state: {exc}") from exc
            if data.get("format") != STATE_FORMAT:
                raise StateError(f"{self.path}: state format {data.get('format')!r} unknown")
            if data.get("collection") != collection:
                raise StateError(
                    f"{self.path}: state of collection {data.get('collection')!r}, not "
                    f"{collection!r}; use another output folder"
                )
            self.inputs = dict(data.get("inputs", {}))

    def is_done(self, name: str) -> bool:
        """True when input ``name`` is finished and its outputs still exist."""
        entry = self.inputs.get(name)
        if entry is None:
            return False
        return all((self.path.parent / o).is_file() for o in entry.get("outputs", []))

    def finish(self, name: str, entry: dict[str, Any]) -> None:
        """Record input ``name`` as finished (``entry``: its counts and outputs) and
        save atomically."""
        self.inputs[name] = entry
        data = {"format": STATE_FORMAT, "collection": self.collection, "inputs": self.inputs}
        tmp = self.path.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
