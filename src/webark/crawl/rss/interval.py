"""Minimum waits as CrawlRSS writes them: ``[N]d[N]h[N]m[N]s`` (``1h30m``, ``90s``,
``2d``), or a plain number of seconds (``90``, ``0.5``).

CrawlRSS (``RssSite.setMinWaitInterval``) parses the same units with Joda-Time's
period formatter; webark also takes fractions of a second, which tests and very busy
feeds use.
"""

from __future__ import annotations

import math
import re

from webark.core.errors import ConfigError

__all__ = ["IntervalError", "format_interval", "parse_interval"]

_PART = re.compile(r"(\d+(?:\.\d+)?)([dhms])")
_UNIT = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_ORDER = "dhms"


class IntervalError(ConfigError):
    """A minimum wait that cannot be read (the message shows the accepted forms)."""


def parse_interval(value: str | float | int) -> float:
    """Seconds (>= 0) of ``value``: a number of seconds, or ``[N]d[N]h[N]m[N]s`` with
    the units in that order, each at most once (``1h30m`` = 5400.0).

    Raises:
        IntervalError: anything else (negative, empty, units out of order, NaN).
    """
    if isinstance(value, bool):
        raise IntervalError(f"expected a wait like 90s, 10m or 1h30m, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = str(value).strip().lower().replace(" ", "")
        try:
            seconds = float(text)
        except ValueError:
            seconds = _parse_units(text, value)
    if not math.isfinite(seconds) or seconds < 0:
        raise IntervalError(f"a wait must be a finite number of seconds >= 0, got {value!r}")
    return seconds


def _parse_units(text: str, original: object) -> float:
    pos, total, last = 0, 0.0, -1
    for m in _PART.finditer(text):
        unit = _ORDER.index(m.group(2))
        if m.start() != pos or unit <= last:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos, last = m.end(), unit
    if not text or pos != len(text):
        raise IntervalError(
            f"cannot read the wait {original!r}: write seconds (90) or [N]d[N]h[N]m[N]s "
            "with the units in that order (1h30m, 10m, 45s, 2d)"
        )
    return total


def format_interval(seconds: float) -> str:
    """``[N]d[N]h[N]m[N]s`` for ``seconds`` (``5400`` → ``1h30m``; ``0`` → ``0s``;
    fractions of a second are kept: ``1.5`` → ``1.5s``)."""
    if seconds <= 0:
        return "0s"
    whole = int(seconds)
    frac = seconds - whole
    out = []
    for unit in "dhm":
        n, whole = divmod(whole, int(_UNIT[unit]))
        if n:
            out.append(f"{n}{unit}")
    rest = whole + frac
    if rest:
        out.append(f"{rest:g}s")
    return "".join(out)
