"""What a crawl asks of the archiving proxy when its browser pages go through it (issue
13, the hybrid crawl): a :class:`RequestGate` the crawl gives the proxy, and the
:class:`PageContext` that ties each proxied request to the page that made it.

Both live here, below the proxy (``webark.apps.proxy``, L6) and the crawl
(``webark.crawl``, L5), so the crawl defines the policy and the proxy applies it
without either importing the other (``webark.cli`` wires them).

**Page context.** A browser page of a crawl sends, with every request, the webark keys
of ``Warcprox-Meta``'s ``metadata`` object (documented in ``docs/proxy-api.md``):
``page`` (the page's URI), ``hop-path`` (its hop path from the seed, ``""`` for a seed),
``via`` (the URI it was discovered on) and ``seed`` (warcprox's own key: the source
tag). The page's own request gets the page's hop path and via in crawl.log and its
``metadata`` record; any other request of the page (its subresources) the page's hop
path plus ``E`` and the page as its via, as Heritrix's ExtractorChrome and Brozzler's
warcprox lines do.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from webark.capture.meta import CaptureResult
from webark.fetch import Exchange

__all__ = ["PageContext", "Refusal", "RequestGate"]


@dataclass(frozen=True, slots=True)
class PageContext:
    """The page a proxied request belongs to (module docstring).

    Attributes:
        page: the page's URI.
        hop_path: the page's hop path from its seed (Heritrix letters).
        via: the URI the page was discovered on, or None (a seed).
        source: the source tag (``metadata.seed``), or None.
        worker: the crawl.log ``#thread`` of the page's lines (``metadata.worker``; 0).
    """

    page: str
    hop_path: str = ""
    via: str | None = None
    source: str | None = None
    worker: int = 0

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> PageContext | None:
        """The context in a ``Warcprox-Meta`` ``metadata`` object, or None when it has
        no ``page`` (a plain proxy client). Values of the wrong type are ignored."""
        if not metadata or not isinstance(metadata.get("page"), str):
            return None
        hops, via = metadata.get("hop-path"), metadata.get("via")
        seed, worker = metadata.get("seed"), metadata.get("worker")
        return cls(
            page=metadata["page"],
            hop_path=hops if isinstance(hops, str) else "",
            via=via if isinstance(via, str) else None,
            source=seed if isinstance(seed, str) else None,
            worker=worker if isinstance(worker, int) and not isinstance(worker, bool) else 0,
        )

    def to_metadata(self) -> dict[str, Any]:
        """The ``metadata`` object that :meth:`from_metadata` reads back."""
        out: dict[str, Any] = {"page": self.page, "hop-path": self.hop_path, "worker": self.worker}
        if self.via is not None:
            out["via"] = self.via
        if self.source is not None:
            out["seed"] = self.source
        return out

    def hops_of(self, url: str) -> tuple[str, str | None]:
        """``(hop path, via)`` of a request of this page for ``url``: the page's own for
        the page, the page's hop path + ``E`` and the page otherwise."""
        if url == self.page:
            return self.hop_path, self.via
        return self.hop_path + "E", self.page


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the gate does not let through: answered ``status`` (e.g. 403) with
    ``text`` as the body, nothing fetched nor written."""

    status: int
    reason: str
    text: str


class RequestGate(Protocol):
    """The crawl's policy for the requests its browser pages make through the proxy:
    scope, robots.txt and per-host politeness (``webark.crawl.browser.gate`` is the
    crawl's)."""

    def admit(self, url: str, page: PageContext | None
              ) -> AbstractAsyncContextManager[Refusal | None]:  # fmt: skip
        """Entered before ``url`` is fetched upstream, left once its response is read
        (or the fetch failed): gives None to go on (the request then holds its host's
        politeness slot until left) or a :class:`Refusal` to answer instead."""
        ...

    def captured(self, url: str, exchange: Exchange, result: CaptureResult,
                 page: PageContext | None) -> bool:  # fmt: skip
        """``url`` was fetched and archived (``result``). True when the crawl writes
        this capture's crawl.log line itself (the page's own: it carries the crawl's
        annotations); False: the proxy writes it."""
        ...
