"""The units of work of a Spark job: whole (W)ARC files, or byte ranges of big ones.

A task is picklable and small (a path and two offsets); the executors open the files
themselves, so inputs must be paths every executor can read: local paths in ``local[N]``
mode, a shared filesystem (NFS, a mounted bucket) on a cluster.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from webark.cdx.indexer import CHUNK_BYTES, split_points
from webark.core.errors import WebarkError

__all__ = ["InputError", "WarcTask", "local_path", "plan_tasks"]


class InputError(WebarkError, ValueError):
    """An input the job cannot read (a URL scheme the executors cannot open)."""


@dataclass(frozen=True, slots=True)
class WarcTask:
    """One task: the records of ``path`` that start in ``[start, end)``.

    Attributes:
        number: position in the job (file order, then range order): outputs that keep
            input order are put back in this order.
        path: the (W)ARC file (a local path).
        start, end: the byte range (``0, size``: the whole file).
        size: the file's size in bytes.
    """

    number: int
    path: str
    start: int
    end: int
    size: int

    @property
    def whole_file(self) -> bool:
        return self.start == 0 and self.end >= self.size


def local_path(given: str) -> str:
    """The local path of an input (a path or a ``file://`` URL).

    Raises:
        InputError: another URL scheme (``hdfs://``, ``s3a://``, ``https://``): the
            readers open local files only; mount the store (or copy the WARCs) so
            every executor sees the same path.
    """
    if given.startswith("file://"):
        return given[len("file://"):]
    scheme, sep, _ = given.partition("://")
    if sep and scheme.isalnum():
        raise InputError(
            f"{given}: {scheme}:// inputs are not read yet; give local paths (on a cluster,"
            " a filesystem mounted at the same path on every executor)"
        )
    return given


def plan_tasks(paths: Iterable[str], *, split_bytes: int = CHUNK_BYTES) -> list[WarcTask]:
    """Tasks for ``paths`` in order: one per file, and files of ``split_bytes`` or more
    cut at record boundaries (:func:`~webark.cdx.ranges.split_points`) into ranges of
    about ``split_bytes`` (ARC, zstd and whole-file gzip files stay whole).

    Raises:
        InputError: a path is a URL the executors cannot open.
        OSError: a file's size cannot be read.
    """
    tasks: list[WarcTask] = []
    for given in paths:
        p = local_path(given)
        size = os.path.getsize(p)
        points = None
        if split_bytes > 0 and size >= 2 * split_bytes:
            points = split_points(p, -(-size // split_bytes))
        if points is None:
            points = [0, size]
        for a, b in itertools.pairwise(points):
            tasks.append(WarcTask(len(tasks), p, a, b, size))
    return tasks
