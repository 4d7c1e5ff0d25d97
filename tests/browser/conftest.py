"""Fixtures of the browser tests: one Debian Chromium per test module (Playwright, sync
API), a fresh browser context (1280×800, no shared cache or cookies) per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

from system_packages import require


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Playwright's Browser on ``/usr/bin/chromium`` (skip outside CI / fail in CI when
    Chromium is not installed).

    Module scope, not session: while Playwright's sync API is started, the main thread
    has a running asyncio loop, and every ``asyncio.run()`` of later test modules (the
    crawler, the fetcher) would fail. One launch costs about a second."""
    require(CHROMIUM.exists(), f"Chromium ({CHROMIUM})", "WEBARK_BROWSER=1 bash scripts/setup.sh")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A new BrowserContext (viewport 1280×800, service workers blocked so every request
    is seen by the page's request events)."""
    ctx = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        yield ctx
    finally:
        ctx.close()
