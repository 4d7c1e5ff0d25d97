"""Which WARCs make up "a harvest" of a collection, for ``webark reduplicate``.

A harvest is a set of WARC files, chosen by any of:

* **names or globs** (``--harvest-warcs``): a path to an existing file is taken as
  is; anything else is matched (:func:`fnmatch.fnmatchcase`) against the names of the
  WARCs the collection has indexed, each then located through the collection
  (``locations.loc``, ``warcs/``, configured locations);
* **a crawl job** (``--job JOBDIR``): the finished WARCs in ``JOBDIR/warcs/`` (webark's
  job layout; ``.open`` files are left out);
* **a time range** (``--from``/``--to``, 1–14 digits, inclusive, padded as the
  resolution API pads them): every indexed WARC holding at least one capture in the
  range (one pass over the index). Given with names or a job, it narrows them.

The revisits of the harvest are resolved against the whole collection (a harvest's
originals are usually in earlier harvests, and in itself), so WARCs given by path
should be in the collection too, or their own originals are not found.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from webark.core.errors import WebarkError
from webark.index.collection import Collection
from webark.index.locations import WarcNotFound
from webark.index.source import KeyRange, pad_from, pad_to

_WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.zst", ".arc", ".arc.gz")


class HarvestError(WebarkError):
    """The harvest cannot be chosen (no selector, nothing matches, a WARC not found)."""


@dataclass(frozen=True, slots=True)
class HarvestWarc:
    """One WARC of the harvest: ``name`` (as in CDX lines) and local ``path``."""

    name: str
    path: str


def warc_stem(name: str) -> str:
    """``NAME.warc.gz`` → ``NAME`` (any WARC/ARC suffix removed)."""
    for suffix in sorted(_WARC_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def select_harvest(
    collection: Collection,
    warcs: Sequence[str] = (),
    *,
    job_dir: str | os.PathLike[str] | None = None,
    from_ts: str | None = None,
    to_ts: str | None = None,
) -> list[HarvestWarc]:
    """The harvest's WARCs, sorted by name (see the module docstring).

    Raises:
        HarvestError: no selector given, a name or glob matching nothing, a WARC the
            collection cannot locate, or an empty selection.
        ValueError: a bad ``from``/``to``.
    """
    if not warcs and job_dir is None and from_ts is None and to_ts is None:
        raise HarvestError("choose the harvest: WARC names/globs, --job, or --from/--to")
    chosen: dict[str, HarvestWarc] = {}
    by_selector = bool(warcs) or job_dir is not None
    if warcs:
        indexed = [f.name for f in collection.indexed()]
        resolver = collection.resolver()
        for spec in warcs:
            p = Path(spec)
            if p.is_file():
                chosen[p.name] = HarvestWarc(p.name, str(p))
                continue
            names = [n for n in indexed if fnmatch.fnmatchcase(n, spec)]
            if not names:
                raise HarvestError(f"{spec!r}: no such file, and no indexed WARC matches it")
            for name in names:
                try:
                    chosen[name] = HarvestWarc(name, resolver.resolve(name))
                except WarcNotFound as exc:
                    raise HarvestError(str(exc)) from exc
    if job_dir is not None:
        d = Path(job_dir) / "warcs"
        if not d.is_dir():
            raise HarvestError(f"{job_dir}: not a crawl job (no warcs/ folder)")
        for p in sorted(d.iterdir()):
            if p.is_file() and p.name.endswith(_WARC_SUFFIXES):
                chosen[p.name] = HarvestWarc(p.name, str(p))
    if from_ts is not None or to_ts is not None:
        in_range = _files_in_range(collection, from_ts, to_ts)
        if by_selector:
            chosen = {n: w for n, w in chosen.items() if n in in_range}
        else:
            resolver = collection.resolver()
            for name in sorted(in_range):
                try:
                    chosen[name] = HarvestWarc(name, resolver.resolve(name))
                except WarcNotFound as exc:
                    raise HarvestError(str(exc)) from exc
    if not chosen:
        raise HarvestError("the harvest is empty: no WARC matches the selection")
    return [chosen[n] for n in sorted(chosen)]


def _files_in_range(collection: Collection, from_ts: str | None, to_ts: str | None) -> set[str]:
    rng = KeyRange(
        "", None, pad_from(from_ts) if from_ts else None, pad_to(to_ts) if to_ts else None
    )
    return {line.filename for line in collection.source().scan(rng)}
