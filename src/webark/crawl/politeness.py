"""Politeness, retries and quotas: the frontier's settings (:class:`FrontierConfig`) and
the pure rules over them — the politeness delay, the 429/5xx back-off, ``Retry-After``,
and the one retry rule (:func:`disposition`) that the frontier and the crawler's
disposition chain both ask. Defaults and rules are Heritrix 3's
(reference/heritrix-behaviour.md "Politeness"); the clock is :func:`anchored_clock`.
"""

from __future__ import annotations

import email.utils
import enum
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from webark.crawllog.status import (
    S_CONNECT_FAILED,
    S_CONNECT_LOST,
    S_DEFERRED,
    S_DOMAIN_PREREQUISITE_FAILURE,
    S_DOMAIN_UNRESOLVABLE,
    S_TIMEOUT,
)

__all__ = [
    "QUEUE_SETTINGS",
    "Clock",
    "FrontierConfig",
    "Outcome",
    "anchored_clock",
    "backoff_delay",
    "disposition",
    "is_backoff_status",
    "parse_retry_after",
    "politeness_delay",
]


Clock = Callable[[], float]
"""A wall clock: seconds since the epoch (like :func:`time.time`)."""


def anchored_clock() -> Clock:
    """A clock that reads :func:`time.time` once, now, and then advances with
    :func:`time.monotonic`: wall-clock seconds that never step back or jump."""
    wall0, mono0 = time.time(), time.monotonic()
    return lambda: wall0 + (time.monotonic() - mono0)





QUEUE_SETTINGS: dict[str, str] = {
    "min_delay": "min_delay",
    "max_delay": "max_delay",
    "delay_factor": "delay_factor",
    "max_uris": "max_uris_per_queue",
    "max_bytes": "max_bytes_per_queue",
}
"""The settings one queue may override (:attr:`FrontierConfig.queue_overrides`): name
→ the :class:`FrontierConfig` field it replaces for that queue (Heritrix sets them per
host with an overlay "sheet" on the host's SURT prefix)."""


class Outcome(enum.Enum):
    """What :meth:`Frontier.finished` did with the URI."""

    FINISHED = "finished"
    """Done for good (success or final failure): write the crawl.log line."""
    RETRY = "retry"
    """Put back at the head of its queue; it will be offered again."""



@dataclass(frozen=True, slots=True)
class FrontierConfig:
    """Politeness, retry and quota settings. All durations in seconds.

    Defaults are Heritrix 3's where it has one (delay factor 5, min 3 s, max 30 s,
    30 retries 900 s apart); ``crawl_delay_cap`` is 30 s (Heritrix honours up to 300 s).

    Attributes:
        delay_factor: multiple of the last fetch duration to wait before the next fetch
            from the same queue.
        min_delay, max_delay: bounds of that wait.
        crawl_delay_cap: robots.txt Crawl-delay is honoured up to this many seconds
            (0 ignores Crawl-delay).
        max_retries: retries of a network failure before the URI is finished with it.
        retry_delay: how long the queue waits before retrying after a network failure.
        retry_codes: fetch status codes that are retried (Heritrix ``needsRetrying``:
            domain unresolvable, connect failed, connection lost, timeout, domain
            prerequisite failure, and deferred: a robots.txt prerequisite whose fetch
            failed is tried again with the URI).
        backoff_base, backoff_max: first back-off after a 429/5xx, doubled for each
            further consecutive one, at most ``backoff_max``.
        retry_after_cap: a Retry-After longer than this is cut to it.
        max_http_retries: retries of a URI answered with a status in ``http_retry_statuses``.
        http_retry_statuses: HTTP statuses worth retrying later.
        max_uris_per_queue, max_bytes_per_queue: queue quotas (successful fetches, bytes);
            ``None`` = unlimited.
        max_uris, max_bytes: crawl quotas, same units; ``None`` = unlimited.
        synchronous: SQLite ``synchronous`` pragma, ``"NORMAL"`` or ``"FULL"`` (see the
            module docstring).
        cache_mb: SQLite page cache size in MiB (bounds the memory used for the database).
        queue_overrides: queue key (host or host:port) → settings of :data:`QUEUE_SETTINGS`
            for that queue only (``max_uris``/``max_bytes`` are its quotas);
            :meth:`for_queue` applies them.

    Raises:
        ValueError: a negative duration or count, ``min_delay > max_delay``, an unknown
            ``synchronous`` value.
    """

    delay_factor: float = 5.0
    min_delay: float = 3.0
    max_delay: float = 30.0
    crawl_delay_cap: float = 30.0
    max_retries: int = 30
    retry_delay: float = 900.0
    retry_codes: frozenset[int] = frozenset({
        S_DOMAIN_UNRESOLVABLE, S_CONNECT_FAILED, S_CONNECT_LOST, S_TIMEOUT,
        S_DOMAIN_PREREQUISITE_FAILURE, S_DEFERRED,
    })  # fmt: skip
    backoff_base: float = 120.0
    backoff_max: float = 3600.0
    retry_after_cap: float = 3600.0
    max_http_retries: int = 3
    http_retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})
    max_uris_per_queue: int | None = None
    max_bytes_per_queue: int | None = None
    max_uris: int | None = None
    max_bytes: int | None = None
    synchronous: str = "NORMAL"
    cache_mb: int = 64
    queue_overrides: Mapping[str, Mapping[str, float | int]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )

    def __post_init__(self) -> None:
        numbers = (
            self.delay_factor,
            self.min_delay,
            self.max_delay,
            self.crawl_delay_cap,
            self.max_retries,
            self.retry_delay,
            self.backoff_base,
            self.backoff_max,
            self.retry_after_cap,
            self.max_http_retries,
            self.cache_mb,
        )
        if any(not math.isfinite(x) or x < 0 for x in numbers):
            raise ValueError("frontier durations and counts must be finite and >= 0")
        if self.min_delay > self.max_delay:
            raise ValueError("min_delay must not exceed max_delay")
        if self.synchronous.upper() not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be NORMAL or FULL")
        quotas = (self.max_uris_per_queue, self.max_bytes_per_queue, self.max_uris, self.max_bytes)
        if any(q is not None and q < 0 for q in quotas):
            raise ValueError("quotas must be >= 0")
        for key, settings in self.queue_overrides.items():
            unknown = set(settings) - set(QUEUE_SETTINGS)
            if unknown:
                raise ValueError(f"queue {key}: unknown settings {sorted(unknown)}; "
                                 f"known: {', '.join(QUEUE_SETTINGS)}")  # fmt: skip
            self.for_queue(key)  # raises for a bad value (min_delay > max_delay …)

    def for_queue(self, key: str) -> FrontierConfig:
        """The settings of the queue ``key``: these, with its :attr:`queue_overrides`.

        Raises:
            ValueError: an override makes the settings invalid (as the constructor).
        """
        settings = self.queue_overrides.get(key)
        if not settings:
            return self
        changes = {QUEUE_SETTINGS[k]: v for k, v in settings.items()}
        return replace(self, queue_overrides=MappingProxyType({}), **changes)  # type: ignore[arg-type]

    @property
    def horizon(self) -> float:
        """The longest delay this configuration can impose on a queue (seconds)."""
        return max(
            self.max_delay,
            *(float(o.get("max_delay", 0)) for o in self.queue_overrides.values()),
            self.crawl_delay_cap,
            self.retry_delay,
            self.backoff_max,
            self.retry_after_cap,
        )


def is_backoff_status(status: int) -> bool:
    """True for the answers that make a queue back off (429 and 5xx)."""
    return status == 429 or 500 <= status <= 599


def disposition(status: int, retries: int, config: FrontierConfig) -> Outcome:
    """The one retry rule (Heritrix ``needsRetrying`` plus its 429/5xx back-off): whether
    a URI finished with ``status`` after ``retries`` retries goes back to its queue
    (:attr:`Outcome.RETRY`) or is done (:attr:`Outcome.FINISHED`, its crawl.log line is
    written). A 429/5xx in ``http_retry_statuses`` is retried up to
    ``max_http_retries`` times; a network failure in ``retry_codes`` up to
    ``max_retries`` times. Pure: the frontier and the crawler's disposition chain both
    ask it."""
    if is_backoff_status(status):
        retry = status in config.http_retry_statuses and retries < config.max_http_retries
    else:
        retry = status in config.retry_codes and retries < config.max_retries
    return Outcome.RETRY if retry else Outcome.FINISHED



def politeness_delay(
    duration_s: float, config: FrontierConfig, crawl_delay: float | None = None
) -> float:
    """Seconds to wait after a fetch before the next one from the same queue.

    ``clamp(delay_factor × duration_s, min_delay, max_delay)``, then raised to the
    robots.txt Crawl-delay when that is larger, the Crawl-delay being cut to
    ``crawl_delay_cap`` (Heritrix ``DispositionProcessor.politenessDelayFor``: the
    Crawl-delay may exceed ``max_delay``). A negative or NaN duration counts as 0.

    >>> c = FrontierConfig()
    >>> politeness_delay(0.2, c), politeness_delay(2.0, c), politeness_delay(60, c)
    (3.0, 10.0, 30.0)
    >>> politeness_delay(0.2, c, crawl_delay=10), politeness_delay(0.2, c, crawl_delay=500)
    (10.0, 30.0)
    """
    d = duration_s if duration_s > 0 else 0.0  # also maps NaN to 0
    delay = min(max(config.delay_factor * d, config.min_delay), config.max_delay)
    if crawl_delay is not None and crawl_delay > 0 and config.crawl_delay_cap > 0:
        delay = max(delay, min(float(crawl_delay), config.crawl_delay_cap))
    return float(delay)


def backoff_delay(errors: int, config: FrontierConfig) -> float:
    """Back-off after the ``errors``-th consecutive 429/5xx of a queue (seconds):
    ``backoff_base × 2^(errors−1)``, at most ``backoff_max``; 0 for ``errors <= 0``.

    >>> c = FrontierConfig(backoff_base=60, backoff_max=600)
    >>> [backoff_delay(n, c) for n in range(6)]
    [0.0, 60.0, 120.0, 240.0, 480.0, 600.0]
    """
    if errors <= 0:
        return 0.0
    if errors > 64:
        return float(config.backoff_max)
    return float(min(config.backoff_base * 2.0 ** (errors - 1), config.backoff_max))


def parse_retry_after(value: float | str | None, now: float) -> float | None:
    """The Retry-After header (RFC 9110 §10.2.3) as seconds from ``now``.

    ``value`` is delay-seconds (``"120"`` or a number) or an HTTP-date; ``now`` is the
    wall-clock time (seconds since the epoch) the answer arrived. A date in the past gives
    0. Returns ``None`` for ``None`` or an unparseable value.

    >>> parse_retry_after("120", 0.0), parse_retry_after(30, 0.0)
    (120.0, 30.0)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:02:00 GMT", 60.0)
    60.0
    >>> parse_retry_after("soon", 0.0) is None
    True
    """
    if value is None:
        return None
    if isinstance(value, int | float):
        return max(0.0, float(value)) if math.isfinite(value) else None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" or a missing zone: HTTP dates are GMT
        return None if not text.upper().endswith(("GMT", "UTC", "-0000", "+0000")) else 0.0
    return max(0.0, when.timestamp() - now)
