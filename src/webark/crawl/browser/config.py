"""The ``browser:`` section of a crawl job: which URIs the bulk crawler delegates to a
browser, and how the browser pool runs (issue 13, the hybrid crawl).

.. code-block:: yaml

    browser:
      enabled: true                 # default true once the section is there
      pool_size: 2                  # pages rendered at once (1 … 16; Heritrix
                                    # ExtractorChrome maxOpenWindows 16)
      executable_path: /usr/bin/chromium   # Debian's Chromium (never a downloaded one)
      viewport: 1366x768            # or {width: 1366, height: 768} (ExtractorChrome's)
      load_timeout: 30              # seconds for the load event (ExtractorChrome 30 s)
      behavior_timeout: 30          # seconds for the behaviors (Browsertrix: 90 s)
      screenshots: true             # urn:view: PNG + urn:thumbnail: JPEG resource records
      regex: ['^https?://app\\.example/']   # delegated before the fetch
      hosts: [spa.example]          # the host or any subdomain: delegated before the fetch
      troublesome:                  # delegated after the bulk fetch (see rules.py); or
        max_links: 3                #   true (these defaults) / false (off)
        min_scripts: 1
        app_shell: true
        noscript: true

Rules are tried in that order (:class:`~webark.crawl.browser.rules.DelegationRules`):
a URI a ``regex`` or ``hosts`` rule names is loaded by the browser through the
archiving proxy instead of being fetched (one capture); any other 2xx ``text/html``
page is fetched and statically extracted as usual and then, when the ``troublesome``
heuristic says so, rendered from the fetched document (not fetched twice).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from webark.core.errors import KeyedConfigError

__all__ = [
    "BROWSER_KEYS",
    "TROUBLESOME_KEYS",
    "BrowserSettings",
    "BrowserSettingsError",
    "Troublesome",
    "browser_settings",
]

MAX_POOL = 16
"""Most pages at once (Heritrix ExtractorChrome's ``maxOpenWindows`` default)."""

BROWSER_KEYS: dict[str, str] = {
    "enabled": "bool, default true: delegate URIs to the browser pool",
    "pool_size": f"int 1 … {MAX_POOL}: pages rendered at once (2)",
    "executable_path": "path of the Chromium executable (default: the browser worker's, "
    "Debian's /usr/bin/chromium)",
    "viewport": "WIDTHxHEIGHT or {width, height} in CSS pixels (1366x768)",
    "load_timeout": "seconds to wait for a page's load event (30)",
    "behavior_timeout": "seconds the behaviors (scroll, expand, autoplay) may run (30)",
    "screenshots": "bool, default true: viewport PNG (urn:view:URL) and JPEG thumbnail "
    "(urn:thumbnail:URL) as resource records",
    "regex": "list of URL regexes (re.search): those URIs are rendered instead of fetched",
    "hosts": "list of hosts: URIs of the host or its subdomains are rendered instead of fetched",
    "troublesome": "true (default) | false | mapping {max_links, min_scripts, app_shell, "
    "noscript}: render fetched HTML pages that look made by scripts",
}

TROUBLESOME_KEYS: dict[str, str] = {
    "max_links": "int >= 0: a page with at most this many static links … (3)",
    "min_scripts": "int >= 1: … that loads at least this many scripts is troublesome (1)",
    "app_shell": "bool: an empty app shell (<div id=root|app></div>, no text) is (true)",
    "noscript": "bool: a <noscript> asking to enable JavaScript is (true)",
}


class BrowserSettingsError(KeyedConfigError):
    """A ``browser:`` section that cannot be used (every mistake: ``problems``)."""

    label = "browser"


@dataclass(frozen=True, slots=True)
class Troublesome:
    """The after-fetch heuristic's thresholds (:data:`TROUBLESOME_KEYS`;
    :func:`webark.crawl.browser.rules.troublesome` applies them)."""

    max_links: int = 3
    min_scripts: int = 1
    app_shell: bool = True
    noscript: bool = True


@dataclass(frozen=True)
class BrowserSettings:
    """The validated ``browser:`` section (:data:`BROWSER_KEYS`). Durations in
    seconds, sizes in CSS pixels."""

    enabled: bool = True
    pool_size: int = 2
    executable_path: str | None = None
    viewport: tuple[int, int] = (1366, 768)
    load_timeout: float = 30.0
    behavior_timeout: float = 30.0
    screenshots: bool = True
    regex: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    troublesome: Troublesome | None = field(default_factory=Troublesome)
    """The heuristic's thresholds; None: no after-fetch delegation."""


class _Problems:
    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def note(self, key: str, reason: str) -> None:
        self.found.append((key, reason))


def _unknown(section: Mapping[str, Any], known: Mapping[str, str], where: str,
             p: _Problems) -> None:  # fmt: skip
    for k in section:
        if k not in known:
            close = difflib.get_close_matches(str(k), known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            p.note(f"{where}{k}", f"unknown key; {hint}keys: {', '.join(known)}")


def _flag(section: Mapping[str, Any], key: str, default: bool, p: _Problems,
          where: str = "") -> bool:  # fmt: skip
    v = section.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        p.note(where + key, f"expected true or false, got {v!r}")
        return default
    return v


def _int(section: Mapping[str, Any], key: str, default: int, low: int, high: int | None,
         p: _Problems, where: str = "") -> int:  # fmt: skip
    v = section.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
        span = f"{low} … {high}" if high is not None else f">= {low}"
        p.note(where + key, f"expected an integer {span}, got {v!r}")
        return default
    return v


def _seconds(section: Mapping[str, Any], key: str, default: float, p: _Problems) -> float:
    v = section.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
        p.note(key, f"expected a positive number of seconds, got {v!r}")
        return default
    return float(v)


_VIEWPORT = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*$")


def _viewport(v: Any, p: _Problems) -> tuple[int, int]:
    default = (1366, 768)
    if v is None:
        return default
    if isinstance(v, str) and (m := _VIEWPORT.match(v)):
        w, h = int(m[1]), int(m[2])
    elif isinstance(v, Mapping) and set(v) == {"width", "height"}:
        w, h = v["width"], v["height"]
    else:
        p.note("viewport", f"expected WIDTHxHEIGHT (1366x768) or {{width, height}}, got {v!r}")
        return default
    if any(isinstance(n, bool) or not isinstance(n, int) or not 100 <= n <= 8192 for n in (w, h)):
        p.note("viewport", f"width and height must be integers 100 … 8192, got {w!r}x{h!r}")
        return default
    return w, h


def _strings(section: Mapping[str, Any], key: str, p: _Problems) -> list[str]:
    v = section.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, Sequence) or not all(isinstance(s, str) and s.strip() for s in v):
        p.note(key, f"expected a list of non-empty strings, got {v!r}")
        return []
    return [s.strip() for s in v]


def _regexes(section: Mapping[str, Any], p: _Problems) -> tuple[str, ...]:
    out = []
    for i, rx in enumerate(_strings(section, "regex", p)):
        try:
            re.compile(rx)
        except re.error as e:
            p.note(f"regex[{i}]", f"not a regular expression ({e}): {rx!r}")
            continue
        out.append(rx)
    return tuple(out)


def _hosts(section: Mapping[str, Any], p: _Problems) -> tuple[str, ...]:
    out = []
    for i, host in enumerate(_strings(section, "hosts", p)):
        h = host.lower().strip(".")
        if not h or any(c in h for c in "/: "):
            p.note(f"hosts[{i}]", f"expected a host name (no scheme, port or path), got {host!r}")
            continue
        out.append(h)
    return tuple(out)


def _troublesome(v: Any, p: _Problems) -> Troublesome | None:
    if v is None or v is True:
        return Troublesome()
    if v is False:
        return None
    if not isinstance(v, Mapping):
        keys = ", ".join(TROUBLESOME_KEYS)
        p.note("troublesome", f"expected true, false or a mapping of {keys}, got {v!r}")
        return Troublesome()
    _unknown(v, TROUBLESOME_KEYS, "troublesome.", p)
    d = Troublesome()
    return Troublesome(
        max_links=_int(v, "max_links", d.max_links, 0, None, p, "troublesome."),
        min_scripts=_int(v, "min_scripts", d.min_scripts, 1, None, p, "troublesome."),
        app_shell=_flag(v, "app_shell", d.app_shell, p, "troublesome."),
        noscript=_flag(v, "noscript", d.noscript, p, "troublesome."),
    )


def browser_settings(section: Any) -> BrowserSettings:
    """Validate a ``browser:`` section (``None`` or ``{}``: every default).

    Raises:
        BrowserSettingsError: unknown keys (with a close match), values of the wrong
            type or out of range, regexes that do not compile, hosts with a scheme or
            path, an executable that is not an existing file (every problem found, keys
            like ``troublesome.max_links``).
    """
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise BrowserSettingsError("browser", "expected a mapping (enabled, pool_size, regex, …)")
    p = _Problems()
    _unknown(section, BROWSER_KEYS, "", p)
    exe = section.get("executable_path")
    if exe is not None:
        from pathlib import Path

        if not isinstance(exe, str) or not exe:
            p.note("executable_path", f"expected a file path, got {exe!r}")
            exe = None
        elif not Path(exe).is_file():
            p.note("executable_path", f"{exe} is not a file: give Chromium's executable "
                   "(Debian: apt-get install chromium; /usr/bin/chromium)")  # fmt: skip
            exe = None
    d = BrowserSettings()
    settings = BrowserSettings(
        enabled=_flag(section, "enabled", True, p),
        pool_size=_int(section, "pool_size", d.pool_size, 1, MAX_POOL, p),
        executable_path=exe,
        viewport=_viewport(section.get("viewport"), p),
        load_timeout=_seconds(section, "load_timeout", d.load_timeout, p),
        behavior_timeout=_seconds(section, "behavior_timeout", d.behavior_timeout, p),
        screenshots=_flag(section, "screenshots", True, p),
        regex=_regexes(section, p),
        hosts=_hosts(section, p),
        troublesome=_troublesome(section.get("troublesome"), p),
    )
    if p.found:
        raise BrowserSettingsError(*p.found[0], tuple(p.found))
    return settings
