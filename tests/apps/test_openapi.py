"""The OpenAPI description (/openapi.json) against the app, property-based (schemathesis,
in-process over ASGI): generated requests — valid ones and, in negative mode, ones that
break the schema — must get documented status codes and content types, never a 5xx, and
schema-breaking ones must be rejected (4xx). Examples per operation are kept modest so
the module runs in seconds.

Collection names that fit the schema are replaced by ``mem`` (the sample collection) so
the generated queries reach the index instead of stopping at 404.

Left out: schemathesis' ``positive_data_acceptance`` check (every schema-valid request
must succeed). The API has rules between parameters that OpenAPI 3.0 cannot state —
``closest`` needs one exact URL, ``from`` <= ``to``, ``page`` excludes ``resumeKey``,
``url`` is needed unless ``digest`` is given — and answers their violation with a
documented 400 naming the parameter (tested in test_cdx_params.py / test_cdx_api.py).
"""

from __future__ import annotations

import re

import schemathesis
from cdx_api_support import MemorySource, sample_lines
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from webark.apps.cdx.api import create_app
from webark.apps.cdx.sources import StaticCollections

APP = create_app(StaticCollections({"mem": MemorySource(sample_lines())}))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


@schema.parametrize()
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_description(case) -> None:  # type: ignore[no-untyped-def]
    coll = (case.path_parameters or {}).get("collection")
    if isinstance(coll, str) and _NAME.match(coll):
        case.path_parameters["collection"] = "mem"
    case.call_and_validate(excluded_checks=[positive_data_acceptance])
