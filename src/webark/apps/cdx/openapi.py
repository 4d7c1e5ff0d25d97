"""OpenAPI 3.0 description of the resolution API (served at ``/openapi.json``).

Kept as data in Python (no YAML dependency at run time) and tested with schemathesis
against the app in-process (``tests/apps/test_openapi.py``). The parameter constraints
here are the ones :mod:`webark.apps.cdx.params` enforces, so a value outside them is
answered with 400 — which is what schemathesis' negative tests check.
"""

from __future__ import annotations

from typing import Any

from webark.apps.cdx.params import MATCH_TYPES, MAX_COUNT, MAX_PAGE_SIZE

_TS = {"type": "string", "pattern": "^[0-9]{1,14}$"}
_BOOL = {"type": "string", "enum": ["true", "false", "1", "0"]}
_ERROR = {
    "type": "object",
    "required": ["error", "status"],
    "properties": {
        "error": {"type": "string", "description": "What went wrong, for people."},
        "param": {"type": "string", "description": "The offending parameter (400 only)."},
        "status": {"type": "integer"},
    },
}


def _err(desc: str) -> dict[str, Any]:
    return {
        "description": desc,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _param(name: str, desc: str, schema: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {
        "name": name, "in": "query", "required": False, "description": desc,
        "schema": schema, **kw,
    }  # fmt: skip


_COLLECTION = {
    "name": "collection",
    "in": "path",
    "required": True,
    "description": "Collection name (a folder of the collections directory).",
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"},
}

_CDX_PARAMS = [
    _param(
        "url",
        "URL or SURT key to look up. `*.example.com` means matchType=domain and "
        "`example.com/path*` matchType=prefix when no matchType is given. Required "
        "unless `digest` is given (may be empty with matchType=range: whole index).",
        {"type": "string", "maxLength": 8192},
    ),
    _param(
        "matchType",
        "Key range: exact (default), prefix, host, domain, range (from the "
        "key to the end of the index).",
        {"type": "string", "enum": list(MATCH_TYPES)},
    ),
    _param("from", "Earliest capture time, 1-14 digits (padded to the earliest second).", _TS),
    _param("to", "Latest capture time, 1-14 digits (padded to the latest second).", _TS),
    _param(
        "closest",
        "Sort by distance to this time (1-14 digits, padded to the latest "
        "second, as pywb); implies sort=closest; exact URLs only.",
        _TS,
    ),
    _param(
        "sort",
        "closest (needs `closest`) or reverse.",
        {"type": "string", "enum": ["closest", "reverse"]},
    ),
    _param(
        "limit", "At most this many lines.", {"type": "integer", "minimum": 1, "maximum": MAX_COUNT}
    ),
    _param(
        "filter",
        "`[!][=|~]field:expr` (repeatable): no prefix = contains, `=` exact, "
        "`~` regex (re.match), `!` negates; pywb 2.x syntax.",
        {"type": "array", "items": {"type": "string", "minLength": 1}},
        style="form",
        explode=True,
    ),
    _param(
        "fl",
        "Comma-separated fields to output (urlkey, timestamp, url|original, "
        "mime|mimetype, status|statuscode, digest, redirect, robotflags, length, offset, "
        "filename, or an extra CDXJ key).",
        {"type": "string", "pattern": "^ *[A-Za-z0-9_.-]{1,64}( *, *[A-Za-z0-9_.-]{1,64})* *$"},
    ),
    _param(
        "output",
        "cdxj (default; `text` is an alias), json (NDJSON objects, as pywb), "
        "cdx (classic 11 fields or the fl fields) or link (Memento link format).",
        {"type": "string", "enum": ["cdxj", "text", "json", "cdx", "link"]},
    ),
    _param(
        "collapse",
        "`field` or `field:N` (repeatable): drop lines whose field (first N "
        "characters) equals the previous kept line's (IA).",
        {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}(:[1-9][0-9]{0,5})?$"},
        },
        style="form",
        explode=True,
    ),
    _param(
        "collapseTime",
        "pywb: collapse on the first N timestamp digits and the status.",
        {"type": "integer", "minimum": 1, "maximum": 14},
    ),
    _param("showNumPages", "Answer only the number of pages of pageSize lines.", _BOOL),
    _param(
        "page",
        "Page number (0-based) of pageSize result lines.",
        {"type": "integer", "minimum": 0, "maximum": MAX_COUNT},
    ),
    _param(
        "pageSize",
        "Lines per page (default 5000).",
        {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE},
    ),
    _param(
        "showResumeKey",
        "With limit: when more lines exist, end the answer with a resume "
        'key (text: a blank line then the key; json: {"resumeKey": …}).',
        _BOOL,
    ),
    _param(
        "resumeKey",
        "Go on after the line a previous showResumeKey answer named.",
        {"type": "string", "pattern": "^[^ ]+ [^ ]+ [1-9][0-9]{0,11}$"},
    ),
    _param(
        "digest",
        "Only captures with this payload digest (Base32/hex/Base64, with or "
        "without `sha1:`); without url: every URL (lookup by digest).",
        {"type": "string", "pattern": "^[A-Za-z0-9+/=:_-]{8,200}$"},
    ),
]

_TEXT = {"schema": {"type": "string"}}


def openapi_spec() -> dict[str, Any]:
    """The OpenAPI 3.0.3 document (a fresh dict each call)."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "webark resolution API (CDX server)",
            "version": "1",
            "description": "Captures by URL and time: pywb / IA CDX server compatible "
            "parameters. See docs/cdx-api.md.",
        },
        "paths": {
            "/": {
                "get": {
                    "summary": "List the collections",
                    "operationId": "home",
                    "responses": {
                        "200": {
                            "description": "Collections (HTML for browsers, else JSON).",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "required": ["collections"],
                                        "properties": {
                                            "collections": {
                                                "type": "array",
                                                "items": {
                                                    "type": "object",
                                                    "required": ["name", "cdx"],
                                                    "properties": {
                                                        "name": {"type": "string"},
                                                        "cdx": {"type": "string"},
                                                        "timemap": {"type": "string"},
                                                    },
                                                },
                                            }
                                        },
                                    }
                                },
                                "text/html": _TEXT,
                            },
                        }
                    },
                }
            },
            "/{collection}/cdx": {
                "get": {
                    "summary": "Query the index of a collection",
                    "operationId": "cdx",
                    "parameters": [_COLLECTION, *_CDX_PARAMS],
                    "responses": {
                        "200": {
                            "description": "Matching lines, streamed (may be empty).",
                            "content": {
                                "text/plain": _TEXT,
                                "application/x-ndjson": _TEXT,
                                "application/json": {"schema": {"type": "object"}},
                                "application/link-format": _TEXT,
                            },
                        },
                        "400": _err("A bad parameter (named in `param`)."),
                        "404": _err("No such collection."),
                        "503": _err("The collection's index cannot be read."),
                    },
                }
            },
            "/{collection}/timemap/link/{url}": {
                "get": {
                    "summary": "Memento TimeMap of a URL (RFC 7089, link format)",
                    "operationId": "timemap",
                    "parameters": [
                        _COLLECTION,
                        {
                            "name": "url",
                            "in": "path",
                            "required": True,
                            "description": "The original URL (its query string follows as "
                            "the request's own query).",
                            "schema": {"type": "string"},
                        },
                    ],
                    "responses": {
                        "200": {
                            "description": "The TimeMap.",
                            "content": {"application/link-format": _TEXT},
                        },
                        "400": _err("Not a usable URL."),
                        "404": _err("No such collection, or no capture of the URL."),
                        "503": _err("The collection's index cannot be read."),
                    },
                }
            },
        },
        "components": {"schemas": {"Error": _ERROR}},
    }
