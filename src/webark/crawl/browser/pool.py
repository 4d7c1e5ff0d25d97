"""A bounded pool of browser pages: one Debian Chromium driven by Playwright, every
request through an archiving proxy (``webark proxy``), at most ``size`` pages open.

Sources: Brozzler (Chromium with ``--proxy-server`` of warcprox, per-page Warcprox-Meta
headers), Browsertrix-crawler (behaviors, screenshots, a fresh context per page),
Heritrix 3.4 ExtractorChrome (a bounded number of open windows, 1366×768, 30 s load
timeout; the already-fetched page loaded into the browser).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from webark.core.errors import BrowserUnavailableError, WebarkError

from .behaviors import SETUP_HINT, BehaviorOptions, behaviors_script, init_script
from .procs import ProcessUsage, command_name, descendants, usage
from .visit import PageVisit, PrefetchedDocument, Viewport, VisitSettings, visit_page

__all__ = [
    "CHROMIUM", "CHROMIUM_ARGS", "QUIET_ARGS", "BrowserClosedError", "BrowserPool",
    "proxy_spki_pins",
]  # fmt: skip

#: Debian's Chromium (``apt-get install chromium``); never a ``playwright install`` one.
CHROMIUM = Path("/usr/bin/chromium")
#: Flags that keep a headless Chromium to itself: no GPU, and nothing that makes the
#: browser call home on its own (component updates, sync, background networking, QUIC,
#: which an HTTP proxy cannot see). The browser tests use them too.
QUIET_ARGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
#: Flags of every launch of the pool: :data:`QUIET_ARGS`, and media that plays without a
#: gesture (the autoplay behavior). Playwright's own switches come first: headless,
#: muted, and ``--disable-features`` with HttpsUpgrades among them, which keeps an
#: ``http:`` URL on http (no second ``--disable-features`` here: Chromium may take
#: only the last one).
CHROMIUM_ARGS = (*QUIET_ARGS, "--autoplay-policy=no-user-gesture-required")


DEFAULT_VIEWPORT = Viewport()
DEFAULT_BEHAVIORS = BehaviorOptions()


class BrowserClosedError(WebarkError):
    """Chromium went away (crashed or was killed) or the pool is closed: no visit can
    be made any more. A failed page is not this (it is a :class:`PageVisit` with
    ``errors``)."""


def _spki_pin(public_key: Any) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)  # fmt: skip
    return base64.b64encode(hashlib.sha256(der).digest()).decode("ascii")


def proxy_spki_pins(ca_file: str | os.PathLike[str]) -> tuple[str, ...]:
    """Chromium ``--ignore-certificate-errors-spki-list`` values (base64 of the SHA-256
    of a DER SubjectPublicKeyInfo) trusting the man-in-the-middle certificates of the
    proxy whose CA is the PEM file ``ca_file``.

    Chromium matches the list against the certificates the server *sends* (leaf and
    intermediates), never against a root it was not sent, and webark's proxy sends the
    leaf alone. So the pins are the CA's own key (for a proxy that sends its CA in the
    chain) and, when present, the one leaf key webark's proxy signs every host's
    certificate for (``{CA stem}-certs/leaf-key.pem`` next to the CA:
    :mod:`webark.apps.proxy.ca`, made with the CA). Only public keys leave this function.

    Raises:
        BrowserUnavailableError: ``ca_file`` is missing or holds no certificate.
    """
    path = Path(ca_file)
    try:
        data = path.read_bytes()
        pins = [_spki_pin(c.public_key()) for c in x509.load_pem_x509_certificates(data)]
    except (OSError, ValueError) as exc:
        raise BrowserUnavailableError(f"{path}: no proxy CA certificate ({exc})") from exc
    leaf_key = path.with_name(path.stem + "-certs") / "leaf-key.pem"
    if leaf_key.is_file():
        key = serialization.load_pem_private_key(leaf_key.read_bytes(), password=None)
        pins.append(_spki_pin(key.public_key()))
    return tuple(dict.fromkeys(pins))


class BrowserPool:
    """One headless Chromium behind the archiving proxy ``proxy``, at most ``size``
    pages open at once; use as ``async with BrowserPool(...) as pool: await
    pool.visit(url)``.

    Args:
        proxy: the archiving proxy, ``http://HOST:PORT`` (or ``HOST:PORT``). Every
            request goes through it, loopback ones too (``--proxy-bypass-list=<-loopback>``).
        ca_file: the proxy's CA (PEM) for HTTPS: trusted through
            :func:`proxy_spki_pins` (only certificates made with it are accepted, not any
            bad certificate; the file must exist: `webark proxy ca` makes it); None: no
            HTTPS pins (HTTPS pages then fail verification).
        size: most pages open at once (Heritrix ExtractorChrome ``maxOpenWindows`` is 16;
            each page costs a renderer process, ~100 MB).
        executable_path: the Chromium binary (Debian's by default).
        viewport: window size. 1366×768 (Heritrix ExtractorChrome's), not Browsertrix's
            1920×1080: the most common laptop screen, and about half the pixels to
            render and store per screenshot.
        behaviors: which behaviors run (:class:`BehaviorOptions`).
        behaviors_js: another ``browsertrix-behaviors`` ``dist/behaviors.js``.
        thumbnail_width: thumbnail JPEG width in pixels (Brozzler: 300; its height
            follows the viewport's aspect ratio).
        idle_timeout: after the behaviors, wait at most this many seconds for the
            network to be quiet (0.5 s without a request in flight; Browsertrix waits
            2 s for network idle).
        user_agent: the User-Agent of the pages (None: Chromium's own).
        extra_args: more Chromium flags.

    Raises (on entering):
        BrowserUnavailableError: Playwright, Chromium or browsertrix-behaviors missing
            (the message says how to install them), or the CA file unusable.
    """

    def __init__(
        self,
        proxy: str,
        *,
        ca_file: str | os.PathLike[str] | None = None,
        size: int = 4,
        executable_path: str | os.PathLike[str] = CHROMIUM,
        viewport: Viewport = DEFAULT_VIEWPORT,
        behaviors: BehaviorOptions = DEFAULT_BEHAVIORS,
        behaviors_js: str | os.PathLike[str] | None = None,
        thumbnail_width: int = 320,
        idle_timeout: float = 3.0,
        user_agent: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.proxy = proxy if "://" in proxy else f"http://{proxy}"
        self.ca_file = ca_file
        self.size = size
        self.executable_path = Path(executable_path)
        self.viewport = viewport
        self.behaviors = behaviors
        self.behaviors_js = behaviors_js
        self.thumbnail_width = thumbnail_width
        self.idle_timeout = idle_timeout
        self.user_agent = user_agent
        self.extra_args = tuple(extra_args)
        self._slots = asyncio.Semaphore(size)
        self._pw: Any = None
        self._browser: Any = None
        self._settings: VisitSettings | None = None
        self.browser_pid: int | None = None
        """The Chromium browser process (its PID; None before :meth:`start`)."""
        self.open_pages = 0
        """Pages open now."""
        self.peak_open_pages = 0
        """The most pages that were open at once."""

    def launch_args(self) -> list[str]:
        """Chromium's command-line flags (proxy, pins, :data:`CHROMIUM_ARGS`)."""
        args = [*CHROMIUM_ARGS, f"--proxy-server={self.proxy}", "--proxy-bypass-list=<-loopback>"]
        if self.ca_file is not None:
            pins = ",".join(proxy_spki_pins(self.ca_file))
            args.append(f"--ignore-certificate-errors-spki-list={pins}")
        return [*args, *self.extra_args]

    async def __aenter__(self) -> BrowserPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Check what is needed and launch Chromium (headless).

        Raises:
            BrowserUnavailableError: see the class docstring.
        """
        try:
            from playwright.async_api import Error as PlaywrightError
            from playwright.async_api import async_playwright
        except ImportError as exc:
            raise BrowserUnavailableError(
                f"Playwright (Python package) is not installed: `{SETUP_HINT}`") from exc
        if not os.access(self.executable_path, os.X_OK):
            raise BrowserUnavailableError(
                f"Chromium not found at {self.executable_path}: `{SETUP_HINT}` "
                "(Debian's chromium package)")
        script = init_script(behaviors_script(self.behaviors_js), self.behaviors)
        self._settings = VisitSettings(self.viewport, script, self.behaviors,
                                       self.thumbnail_width, self.idle_timeout,
                                       self.user_agent)  # fmt: skip
        args = self.launch_args()
        before = set(descendants(os.getpid()))
        self._pw = await async_playwright().start()
        try:
            self._browser = await self._pw.chromium.launch(
                executable_path=str(self.executable_path), headless=True, args=args)
        except PlaywrightError as exc:
            await self._pw.stop()
            self._pw = None
            raise BrowserUnavailableError(
                f"Chromium ({self.executable_path}) did not start: {exc}") from exc
        self.browser_pid = next((p for p in descendants(os.getpid()) if p not in before
                                 and command_name(p).startswith(("chromium", "chrome"))),
                                None)  # fmt: skip

    def process_ids(self) -> list[int]:
        """PIDs of this pool's Chromium: the browser process, then its helpers
        (renderers, GPU, network, zygotes); empty when not running or not on Linux."""
        if self.browser_pid is None or not command_name(self.browser_pid):
            return []
        return [self.browser_pid, *descendants(self.browser_pid)]

    def usage(self) -> ProcessUsage:
        """CPU seconds and resident memory of :meth:`process_ids` now (:mod:`.procs`)."""
        return usage(self.process_ids())

    async def aclose(self) -> None:
        """Close Chromium and Playwright's driver (pages still open are closed)."""
        browser, pw = self._browser, self._pw
        self._browser = self._pw = None
        if browser is not None:
            with contextlib.suppress(Exception):  # already gone
                await browser.close()
        if pw is not None:
            await pw.stop()

    async def visit(
        self,
        url: str,
        *,
        extra_headers: Mapping[str, str] | None = None,
        document: PrefetchedDocument | None = None,
        behavior_timeout: float = 30.0,
        load_timeout: float = 30.0,
    ) -> PageVisit:
        """Load ``url`` in a new page (waiting for a free one of the ``size``), run the
        behaviors, and return what was found (steps: :mod:`.visit`).

        Args:
            extra_headers: header fields sent with every request of the page (e.g. a
                per-page ``Warcprox-Meta``, as Brozzler does).
            document: the main document already fetched, served to the browser instead
                of fetching it again (subresources still go through the proxy).
            behavior_timeout: seconds the behaviors may run (Browsertrix: 90 s;
                30 s here, a crawl's page is not a user session).
            load_timeout: seconds until the ``load`` event (Heritrix ExtractorChrome:
                30 s); a page that takes longer is cut and returned with the error.

        Returns:
            A :class:`PageVisit`; a page that failed to load is one too (``errors``).

        Raises:
            BrowserClosedError: the pool is not started or Chromium is gone.
            ValueError: ``document``'s body cannot be decoded.
        """
        from playwright.async_api import Error as PlaywrightError

        async with self._slots:
            browser, settings = self._browser, self._settings
            if browser is None or settings is None or not browser.is_connected():
                raise BrowserClosedError("the browser pool is not running")
            self.open_pages += 1
            self.peak_open_pages = max(self.peak_open_pages, self.open_pages)
            try:
                return await visit_page(
                    browser, url, settings, extra_headers=extra_headers or {},
                    document=document, behavior_timeout=behavior_timeout,
                    load_timeout=load_timeout)  # fmt: skip
            except PlaywrightError as exc:
                if browser.is_connected():
                    raise
                raise BrowserClosedError(f"Chromium is gone: {exc}") from exc
            finally:
                self.open_pages -= 1
