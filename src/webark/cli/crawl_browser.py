"""The archiving proxy of a hybrid crawl (``browser:`` in the job file), wired by the
CLI: ``webark.crawl`` (L5) may not import ``webark.apps.proxy`` (L6), so ``webark
crawl`` hands the crawl a :class:`~webark.crawl.browser.delegate.ProxyLauncher` that
starts :class:`~webark.apps.proxy.server.ArchivingProxy` on 127.0.0.1 (a free port) in
the crawl's event loop, with the crawl's capture back end, fetcher and gate, and stops
it when the crawl is over (the back end and fetcher stay the crawl's to close).

HTTPS pages go through the proxy's man-in-the-middle with the job's own CA,
``JOBDIR/state/proxy-ca.pem`` (made on first use, mode 0600); the browser trusts
exactly that CA's certificates (:func:`webark.crawl.browser.pool.proxy_spki_pins`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from webark.apps.proxy.ca import CertAuthority
from webark.apps.proxy.server import ArchivingProxy, ProxyConfig
from webark.capture import WarcCaptureBackend
from webark.capture.gate import RequestGate
from webark.crawl.browser.delegate import ProxyEndpoint, ProxyLauncher
from webark.fetch import HttpFetcher

__all__ = ["proxy_launcher"]


def proxy_launcher(ca_file: Path | None, host: str = "127.0.0.1") -> ProxyLauncher:
    """A :class:`~webark.crawl.browser.delegate.ProxyLauncher` listening on ``host``
    (loopback) with the CA ``ca_file`` for HTTPS (None: ``CONNECT`` refused)."""

    @contextlib.asynccontextmanager
    async def launch(backend: WarcCaptureBackend, fetcher: HttpFetcher,
                     gate: RequestGate) -> AsyncIterator[ProxyEndpoint]:  # fmt: skip
        ca = None
        if ca_file is not None:
            ca = CertAuthority(ca_file)
            await asyncio.to_thread(ca.cert_pem)  # made now: the browser pins its keys
        proxy = ArchivingProxy(backend, fetcher, ProxyConfig(host=host, port=0), ca, gate=gate)
        await proxy.start()
        serving = asyncio.create_task(proxy.serve_forever())
        try:
            yield ProxyEndpoint(f"http://{host}:{proxy.port}",
                                str(ca_file) if ca_file is not None else None)  # fmt: skip
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            await proxy.aclose()

    launcher: Callable[..., contextlib.AbstractAsyncContextManager[ProxyEndpoint]] = launch
    return launcher
