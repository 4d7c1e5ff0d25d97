"""What an idle crawl waits for: the URIs the frontier will retry, and when.

A crawl whose only URI is a seed that does not resolve (or a host that refuses
connections) has nothing ready for up to ``max_retries`` × ``retry_delay`` (30 × 900 s
with Heritrix's defaults). The progress line then says which URI it waits for, after
what failure, which retry comes next and when (:func:`webark.cli.crawl_view.waiting_note`),
instead of only "1 queued". The disposition chain notes each retry
(:meth:`PendingRetries.note`); the crawl.log line of a URI finished for good forgets it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PendingRetries", "RetryNote"]

_MAX = 100_000


@dataclass(frozen=True, slots=True)
class RetryNote:
    """A URI put back in its queue to be tried again.

    Attributes:
        uri: the URI.
        status: the status of the attempt that failed (a Heritrix code or a 429/5xx).
        retry: the number of the coming retry (1 for the first).
        max_retries: the most retries the job allows for that status.
        due: when its queue becomes ready again (wall-clock seconds).
    """

    uri: str
    status: int
    retry: int
    max_retries: int
    due: float


class PendingRetries:
    """The retries the frontier holds, by URI (one asyncio loop: no locking; bounded)."""

    def __init__(self) -> None:
        self._notes: dict[str, RetryNote] = {}

    def note(self, note: RetryNote) -> None:
        """``note.uri`` will be retried (replaces its earlier note)."""
        if len(self._notes) >= _MAX and note.uri not in self._notes:
            return
        self._notes[note.uri] = note

    def forget(self, uri: str) -> None:
        """``uri`` is finished for good (or fetched)."""
        if self._notes:
            self._notes.pop(uri, None)

    def next(self) -> RetryNote | None:
        """The retry due first, or None."""
        return min(self._notes.values(), key=lambda n: n.due) if self._notes else None
