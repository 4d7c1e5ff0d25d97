"""Processor chains (Heritrix 3's ``ProcessorChain``): the steps a URI goes through, as
small processors with a name, a ``should_process`` and a ``process``.

The bulk crawler has three chains (:mod:`webark.crawl.chains` builds them):

* **fetch chain** — ``preconditions`` (unsupported schemes, the ``dns:`` and robots.txt
  prerequisites, robots exclusion), ``fetchHttp`` (the fetch, conditional headers, the
  after-fetch decide rules);
* **extract chain** — ``extractors`` (outlinks; a 304's from its last capture);
* **disposition chain** — ``warcWriter`` (the capture through the capture back end),
  ``candidates`` (outlinks through the scope into the frontier), ``disposition`` (the
  crawl.log line and :meth:`~webark.crawl.frontier.Frontier.finished`).

Every URI taken from the frontier ends in the disposition chain, whatever happened: a
processor that decides the URI's fate early (robots.txt excludes it, its host does not
resolve) sets its :attr:`UriProcessing.status` and :meth:`UriProcessing.skip_to_disposition`,
as a Heritrix processor returns ``ProcessResult.FINISH``. So the crawl.log line and the
retry rule (:func:`webark.crawl.disposition.will_retry`) are in one place.

The extract chain is separate because of pipelining: the queue of a fetched URI may be
released before it runs (:meth:`~webark.crawl.frontier.Frontier.release`); its work
then runs in a background task, after which the disposition chain waits for its turn
(:class:`~webark.crawl.pipeline.FinishOrder`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from webark.crawl.curi import CrawlURI
from webark.crawl.extract import Link
from webark.crawl.stats import STAGES, WorkerBoard
from webark.fetch import Exchange

if TYPE_CHECKING:
    from webark.capture import CaptureResult

__all__ = ["Processor", "ProcessorChain", "UriProcessing"]


@dataclass(slots=True)
class UriProcessing:
    """One :class:`~webark.crawl.curi.CrawlURI` while the chains run (mutable: what
    Heritrix keeps on its ``CrawlURI`` beside the URI itself).

    Attributes:
        curi: the URI, as the frontier handed it out (frozen).
        worker: the worker number (crawl.log ``#thread``).
        live: True while the worker runs the URI itself (its board slot follows the
            stages); False in the background task of a released queue.
        status: the fetch status so far (0: not attempted; HTTP status, or a negative
            Heritrix code once decided).
        exchange: the fetch, once made.
        crawl_delay: robots.txt Crawl-delay of the host (seconds), once known.
        links: the outlinks found.
        capture: what the capture back end wrote.
        annotations: crawl.log annotations added by processors (``err=…``, ``Q:…``).
        extra: crawl.log extra-info keys added by processors.
        stage: the processor the URI is in (for the worker board).
        done: True once the disposition chain finished the URI (logged or retried).
        requeue_after: set by ``preconditions`` when the URI's robots.txt was just
            fetched: the URI goes back to its queue, due after this many seconds (the
            politeness delay), with no line and no retry counted.
    """

    curi: CrawlURI
    worker: int
    live: bool = True
    status: int = 0
    exchange: Exchange | None = None
    crawl_delay: float | None = None
    links: list[Link] = field(default_factory=list)
    capture: CaptureResult | None = None
    annotations: list[str] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)
    stage: str = STAGES[0]
    done: bool = False
    requeue_after: float | None = None
    _skip: bool = False

    def skip_to_disposition(self, status: int, *annotations: str) -> None:
        """End the fetch and extract chains now: the URI is finished with ``status``
        (Heritrix ``ProcessResult.FINISH``), ``annotations`` added to its line."""
        self.status = status
        self.annotations.extend(annotations)
        self._skip = True

    @property
    def skipping(self) -> bool:
        """True once :meth:`skip_to_disposition` was called."""
        return self._skip

    @property
    def fetched(self) -> bool:
        """True when a response was received (any HTTP status)."""
        return self.exchange is not None and self.exchange.ok and not self._skip


class Processor(Protocol):
    """One step of a chain (Heritrix ``Processor``)."""

    name: str
    """The processor's name in the processors report (Heritrix's bean names)."""

    def should_process(self, p: UriProcessing) -> bool:
        """Whether this processor has anything to do for ``p``."""
        ...

    async def process(self, p: UriProcessing) -> None:
        """Do it (may :meth:`UriProcessing.skip_to_disposition`)."""
        ...


class ProcessorChain:
    """Processors run in order (Heritrix ``ProcessorChain``), each counted on the
    worker board: its URIs handled and the time spent in it (the processors report).

    Args:
        name: the chain's name (``fetch``, ``extract``, ``disposition``).
        processors: in order.
        board: the stats board.
        final: True for the disposition chain, which runs even for a URI that skipped
            to it.
    """

    def __init__(self, name: str, processors: Sequence[Processor], board: WorkerBoard,
                 *, final: bool = False) -> None:  # fmt: skip
        self.name = name
        self.processors = tuple(processors)
        self.board = board
        self.final = final

    @property
    def names(self) -> tuple[str, ...]:
        """The processors' names, in order."""
        return tuple(p.name for p in self.processors)

    async def run(self, p: UriProcessing) -> None:
        """Run the processors that should process ``p``, stopping early when a
        processor sends it to the disposition chain (unless this is that chain)."""
        for proc in self.processors:
            if p.skipping and not self.final:
                return
            if not proc.should_process(p):
                continue
            if p.stage != proc.name:
                if p.live:
                    self.board.stage(p.worker, proc.name)
                else:
                    self.board.count(proc.name)
                p.stage = proc.name
            await proc.process(p)
