"""Shared settings of the fuzz suite (``tests/fuzz``): property-based tests with
Hypothesis over the parsers that read what others wrote (WARC/ARC reader and checker,
CDX/CDXJ loaders, crawl.log, robots.txt, feeds).

Bounded in time: every test runs at most :data:`EXAMPLES` generated inputs, no
per-example deadline (the machine is shared) and a pytest timeout per test.
``WEBARK_FUZZ_EXAMPLES`` sets the number (CI: 200, about a second per target;
default 1000; a long local run: ``WEBARK_FUZZ_EXAMPLES=20000``). No example database is
written: each crash found is minimised by Hypothesis, fixed, and kept as an
``@example`` of its test, so the regression corpus lives in the test files.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("WEBARK_FUZZ_EXAMPLES") or (200 if os.environ.get("CI") else 1000))

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: pytest-timeout seconds per fuzz test (a hang is a failure).
TIMEOUT = 120 + EXAMPLES // 10
