"""Limits of one fetch: timeouts (seconds) and sizes (bytes).

Defaults follow Heritrix 3's ``FetchHTTP`` where it has a setting: ``soTimeoutMs``
(20 s, our connect and read timeouts), ``timeoutSeconds`` (1200 s, our total timeout,
after which the capture is kept truncated: ``timeTrunc``) and ``maxLengthBytes`` (0 =
unlimited, our ``max_size``: ``lenTrunc``).
"""

from __future__ import annotations

from dataclasses import dataclass

from webark.warc.record import SPOOL_LIMIT


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Timeouts and size limits of a fetch.

    Attributes:
        connect_timeout: seconds for the TCP connect plus the TLS handshake. Exceeded:
            the fetch fails with -4 (``ConnectTimeout``).
        read_timeout: seconds one read may wait for the next bytes. Exceeded before the
            response head is complete: -4 (``ReadTimeout``); after it: -3 (the
            connection is taken as broken, as Heritrix does).
        total_timeout: seconds from the fetch start (connect included) for the whole
            exchange, the "max time". Exceeded before the response head is complete:
            -4 (``TotalTimeout``); after it the capture is kept, cut where it stands,
            with ``truncated == "time"`` (``WARC-Truncated: time``, crawl.log
            ``timeTrunc``).
        max_size: the most bytes of the response recorded (head plus body as on the
            wire, chunk framing included); 0 for no limit. A longer response is kept
            cut at ``max_size`` bytes with ``truncated == "length"``
            (``WARC-Truncated: length``, crawl.log ``lenTrunc``); a limit reached
            inside the response head fails the fetch with -3 (``HeaderTrunc``).
        max_head_size: the most bytes of a response head (status line and header
            fields); a longer head fails the fetch with -3 (``RemoteProtocolError``).
        spool_threshold: responses larger than this many bytes are kept in a temporary
            file rather than in memory.

    Raises:
        ValueError: a timeout that is not positive or a negative size.
    """

    connect_timeout: float = 20.0
    read_timeout: float = 20.0
    total_timeout: float = 1200.0
    max_size: int = 0
    max_head_size: int = 256 * 1024
    spool_threshold: int = SPOOL_LIMIT

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "read_timeout", "total_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        if self.max_size < 0 or self.spool_threshold < 0:
            raise ValueError("max_size and spool_threshold are byte counts (>= 0)")
        if self.max_head_size < 1024:
            raise ValueError("max_head_size must be at least 1024 bytes")
