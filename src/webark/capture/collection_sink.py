"""A :class:`~webark.capture.backend.CaptureSink` that indexes every capture into a
collection as it is written, so that it replays seconds later (pywb's record mode
``dedup_policy: keep`` "index at once"; the proxy's ``--collection``).

The capture back end calls :meth:`CollectionSink.written` after the records are on disk
(step 5 of :meth:`~webark.capture.backend.WarcCaptureBackend.archive`), so the index
lines added here always point at complete records: a ``kill -9`` at any moment leaves
an index that names no record missing from the WARC (the
:meth:`~webark.index.store.IndexStore.append_to` contract: each batch is one
transaction with the WARC's ``indexed_to`` mark).

While a WARC is written its location is recorded as the ``….open`` path (replay reads
it there); when the writer rotates to a new file, or on :meth:`close`, the finished
WARC is marked complete with its size and located at its final name.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from webark.cdx.indexer import IndexOptions, index_records
from webark.index.collection import Collection
from webark.index.store import FileAppender
from webark.warc.record import WarcRecord
from webark.warc.writer import OPEN_SUFFIX

__all__ = ["CollectionSink"]

log = logging.getLogger(__name__)


class CollectionSink:
    """Index written captures into ``collection`` (its configured store and indexer
    flavour). The back end writing them should write into ``collection``'s
    ``warcs/`` folder (:attr:`warc_dir`).

    Args:
        collection: an opened collection with an index store (``sqlite`` or
            ``postgres``; the ``cdxj`` store has no appending).

    Raises:
        ValueError: the collection's store cannot be appended to.
    """

    def __init__(self, collection: Collection):
        if not collection.has_store:
            raise ValueError(f"{collection.root}: a collection with the cdxj store cannot "
                             "be indexed while written (use sqlite or postgres)")  # fmt: skip
        self.collection = collection
        self.store = collection.store()
        self.options = IndexOptions(compat=collection.config.compat,
                                    post_append=collection.config.post_append)  # fmt: skip
        self._open: dict[str, FileAppender] = {}  # final path → appender
        self.lines = 0

    @property
    def warc_dir(self) -> str:
        """Where the back end's WARCs go: the collection's ``warcs/`` folder."""
        return os.path.join(self.collection.root, "warcs")

    def written(self, records: Sequence[WarcRecord]) -> None:
        """Index ``records`` (one capture, as the writer returned them: final ``path``,
        ``offset``, ``length``), one transaction; a WARC seen for the first time is
        located at its ``.open`` path, and other WARCs of the same folder this sink
        was appending to that are now closed are finished."""
        if not records:
            return
        path = records[0].path
        name = os.path.basename(path)
        app = self._open.get(path)
        if app is None:
            self._finish_closed()
            app = self.store.append_to(name)
            self.collection.locate(name, path + OPEN_SUFFIX)
            self._open[path] = app
        last = records[-1]
        lines = list(index_records(records, name, self.options))
        self.lines += app.add(lines, last.offset + last.length)

    def _finish_closed(self) -> None:
        for path in [p for p in self._open if os.path.exists(p)]:
            self._finish(path)

    def _finish(self, path: str) -> None:
        app = self._open.pop(path)
        st = os.stat(path)
        app.finish(size=st.st_size, mtime_ns=st.st_mtime_ns)
        self.collection.locate(os.path.basename(path), path)

    def close(self) -> None:
        """Finish every WARC that is closed now (call after the back end's
        ``aclose``); one still open stays located at its ``.open`` path."""
        for path in list(self._open):
            if os.path.exists(path):
                self._finish(path)
            else:
                log.warning("%s is still open: left as being written", path)
