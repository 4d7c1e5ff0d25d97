"""Injectable clock and WARC-Record-ID factory (so tests and tools can be reproducible)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]
"""A zero-argument callable returning an aware UTC datetime."""

RecordIdFactory = Callable[[], str]
"""A zero-argument callable returning a WARC-Record-ID such as ``<urn:uuid:…>``."""


def utc_now() -> datetime:
    """The system clock, aware, in UTC."""
    return datetime.now(UTC)


def new_record_id() -> str:
    """A fresh ``<urn:uuid:…>`` record id (random UUID4, WARC 1.1 §5.2)."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def seeded_record_ids(seed: int) -> RecordIdFactory:
    """A deterministic record-id factory for tests: UUIDs derived from ``seed`` and a
    counter (uuid5-style namespacing), never repeating within one factory."""
    counter = 0
    ns = uuid.UUID(int=seed & ((1 << 128) - 1))

    def make() -> str:
        nonlocal counter
        counter += 1
        return f"<urn:uuid:{uuid.uuid5(ns, str(counter))}>"

    return make
