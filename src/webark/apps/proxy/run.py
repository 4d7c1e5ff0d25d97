"""Running ``webark proxy``: the capture back end of a job folder or a collection, the
fetcher and the server, wired together, until SIGTERM / SIGINT.

Where captures go:

- a **job folder** ``JOB/``: ``warcs/`` (the WARC series), ``logs/crawl.log``
  (Heritrix format, one line per request relayed), ``state/dedup.sqlite3`` (the
  dedup index), as ``webark crawl`` lays out its job folders;
- a **collection** ``COLL/`` (``webark collection init``): WARCs into ``COLL/warcs/``,
  every capture indexed into the collection's store as soon as it is written
  (:class:`~webark.capture.collection_sink.CollectionSink`), so ``webark serve``
  replays it at once; crawl.log and dedup index under ``COLL/proxy/``.

On shutdown the WARCs are closed (renamed from ``.open``) and, for a collection, marked
completely indexed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from webark import __version__
from webark.apps.proxy.ca import CertAuthority
from webark.apps.proxy.server import ArchivingProxy, ProxyConfig
from webark.capture import CaptureConfig, SeriesConfig, WarcCaptureBackend
from webark.capture.collection_sink import CollectionSink
from webark.fetch import HttpFetcher
from webark.fetch.dns import OverrideResolver
from webark.index.collection import Collection
from webark.warc.builders import WarcinfoFields
from webark.warc.serialize import Codec

__all__ = ["DEFAULT_CA_FILE", "ProxySettings", "open_backend", "run_proxy"]

DEFAULT_CA_FILE = Path("~/.local/share/webark/proxy-ca.pem")
"""Where ``webark proxy`` keeps its CA unless told (``~`` expanded when used)."""

USER_AGENT = f"webark-proxy/{__version__}"
"""The User-Agent sent upstream when the client sent none."""


@dataclass(frozen=True, slots=True)
class ProxySettings:
    """What ``webark proxy`` was asked for.

    Attributes:
        job_dir: the job folder, or None when ``collection`` is given.
        collection: the collection folder (``DIR/NAME``), or None.
        prefix: the default WARC prefix.
        dedup: keep a dedup index (revisit records for payloads already archived).
        allow_private: allow upstream connections to private and loopback addresses.
        compression: ``gzip``, ``zstd`` or ``none``.
        max_size: WARC rotation size in bytes.
        server: listening address and limits.
        max_connections_per_host: upstream connections in use at once per host.
        ca_file: the CA of HTTPS man-in-the-middle (created when missing); None
            refuses CONNECT.
        resolve: host → address overrides (curl's ``--resolve``).
        resolve_only: no name goes to the system resolver (hosts not in ``resolve``
            fail with -6 and a 502; IP literals are fetched as they are).
    """

    job_dir: Path | None = None
    collection: Path | None = None
    prefix: str = "WEBARK"
    dedup: bool = True
    allow_private: bool = False
    compression: Codec = "gzip"
    max_size: int = 10**9
    server: ProxyConfig = field(default_factory=ProxyConfig)
    max_connections_per_host: int = 64
    ca_file: Path | None = None
    resolve: dict[str, str] = field(default_factory=dict)
    resolve_only: bool = False


def open_backend(s: ProxySettings) -> tuple[WarcCaptureBackend, CollectionSink | None]:
    """The capture back end of the job folder or collection (module docstring), and
    the collection sink (None for a job folder).

    Raises:
        CollectionError: ``s.collection`` is not a collection. ValueError: neither or
            both of job folder and collection given, or a cdxj-store collection.
    """
    if (s.job_dir is None) == (s.collection is None):
        raise ValueError("give a job folder or a collection (one of them)")
    sink: CollectionSink | None = None
    if s.collection is not None:
        coll = Collection.open(s.collection)
        sink = CollectionSink(coll)
        warcs, state, logs = Path(sink.warc_dir), s.collection / "proxy", s.collection / "proxy"
        part_of = coll.root.name
    else:
        assert s.job_dir is not None
        warcs, state, logs = s.job_dir / "warcs", s.job_dir / "state", s.job_dir / "logs"
        part_of = s.job_dir.name
    warcs.mkdir(parents=True, exist_ok=True)
    info = WarcinfoFields.for_this_host(
        robots=None, is_part_of=part_of,
        extra=(("description", "recorded by the webark archiving proxy"),),
    )  # fmt: skip
    config = CaptureConfig(
        series=SeriesConfig(warcs, prefix=s.prefix, max_size=s.max_size,
                            compression=s.compression, warcinfo=info),
        crawl_log=logs / "crawl.log",
        dedup_index=state / "dedup.sqlite3" if s.dedup else None,
    )  # fmt: skip
    return WarcCaptureBackend(config, sinks=[sink] if sink else []), sink


async def run_proxy(s: ProxySettings, ready: Callable[[ArchivingProxy], None]) -> None:
    """Serve until SIGTERM or SIGINT; ``ready`` is called once listening."""
    backend, sink = open_backend(s)
    fetcher = HttpFetcher(
        USER_AGENT, allow_private=s.allow_private, limits=s.server.limits,
        max_connections_per_host=s.max_connections_per_host,
        resolve=None if s.resolve_only else s.resolve or None,
        resolver=OverrideResolver(s.resolve, None) if s.resolve_only else None,
    )  # fmt: skip
    ca = CertAuthority(s.ca_file) if s.ca_file is not None else None
    if ca is not None and ca.path.exists():
        ca.cert_pem()  # a CA file that is there must be usable (ValueError at start)
    index = backend.config.dedup_index
    buckets = index.parent / "dedup-buckets" if index is not None else None
    proxy = ArchivingProxy(backend, fetcher, s.server, ca, buckets)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await proxy.start()
        ready(proxy)
        serving = asyncio.create_task(proxy.serve_forever())
        await stop.wait()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        await proxy.aclose()
        await fetcher.aclose()
        await backend.aclose()
        if sink is not None:
            sink.close()
