"""What a replay request says about itself, beyond its path: whether a browser shows the
answer as a document, whether it fetches a service worker's script, which types of
resource it can use (for fuzzy matches), and the body of a POST/PUT (for a lookup by
method and body, :func:`webark.cdx.post.method_url`). Headers are Starlette's
case-insensitive mapping."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from webark.core.errors import RequestError
from webark.index.fuzzy import extension_family

__all__ = ["BODY_METHODS", "MAX_LOOKUP_BODY", "BodyTooLarge", "expected_families",
           "is_navigation", "is_service_worker_script", "lookup_body"]

#: ``Sec-Fetch-Dest`` values of requests whose response a browser shows as a document.
_DOCUMENT_DESTS = frozenset({"document", "iframe", "frame", "embed", "object", "fencedframe"})


def is_navigation(headers: Any) -> bool:
    """True when a request (its ``headers``, a case-insensitive mapping) comes from a
    browser that will show the response as a document: ``Sec-Fetch-Dest`` names one
    (Fetch Metadata), or, where browsers send no ``Sec-Fetch-*`` (plain http from a
    host other than localhost), ``Accept`` asks for ``text/html`` as navigations do.
    curl, wget and fetch() send ``Accept: */*``."""
    dest = headers.get("sec-fetch-dest")
    if dest is not None:
        return dest.strip().lower() in _DOCUMENT_DESTS
    return "text/html" in (headers.get("accept") or "").lower()


def is_service_worker_script(headers: Any) -> bool:
    """True for a request that fetches a service worker's script (the ``Service-Worker:
    script`` request header of the Service Workers spec)."""
    return (headers.get("service-worker") or "").strip().lower() == "script"


#: ``Sec-Fetch-Dest`` → the MIME families (:func:`webark.index.fuzzy.mime_family`) of
#: resources the request can use. Absent: documents (any type may be shown) and
#: ``empty`` (fetch, XHR), for which the file extension decides.
_DEST_FAMILIES: dict[str, frozenset[str]] = {
    "style": frozenset({"css"}),
    "script": frozenset({"js"}), "worker": frozenset({"js"}),
    "sharedworker": frozenset({"js"}), "serviceworker": frozenset({"js"}),
    "audioworklet": frozenset({"js"}), "paintworklet": frozenset({"js"}),
    "image": frozenset({"image"}), "font": frozenset({"font"}),
    "audio": frozenset({"media"}), "video": frozenset({"media"}), "track": frozenset({"text"}),
    "json": frozenset({"json"}), "manifest": frozenset({"json"}),
}  # fmt: skip
#: The modifier's hint where the request has no ``Sec-Fetch-Dest`` (``im_`` is also what
#: CSS ``url()`` gets, fonts included).
_MODIFIER_FAMILIES: dict[str, frozenset[str]] = {
    "cs_": frozenset({"css"}), "js_": frozenset({"js"}), "im_": frozenset({"image", "font"}),
}  # fmt: skip


def expected_families(headers: Any, modifier: str, url: str) -> frozenset[str] | None:
    """The MIME families a request for ``url`` in mode ``modifier`` can use, or None
    when nothing says: ``Sec-Fetch-Dest`` (what the browser will do with the answer),
    else the modifier's hint (``cs_``, ``js_``, ``im_``), else the file extension of
    the URL's path (``.css``, ``.png`` …; :func:`webark.index.fuzzy.extension_family`).
    Used to keep a fuzzy match from turning into another kind of resource."""
    dest = (headers.get("sec-fetch-dest") or "").strip().lower()
    found = _DEST_FAMILIES.get(dest)
    if found is not None:
        return found
    if not dest:
        found = _MODIFIER_FAMILIES.get(modifier)
        if found is not None:
            return found
    family = extension_family(url)
    return frozenset({family}) if family else None


#: Methods whose requests are looked up by method and body (pywb: POST and PUT).
BODY_METHODS = frozenset({"POST", "PUT"})
#: The largest request body read for a lookup (bytes); a larger one gets 413. The key
#: keeps 4,096 characters of the canonical body, but a JSON body must be parsed whole.
MAX_LOOKUP_BODY = 8 << 20


class BodyTooLarge(RequestError, ValueError):
    """A request body over :data:`MAX_LOOKUP_BODY` bytes (answered with 413)."""


async def lookup_body(request: Request, limit: int = MAX_LOOKUP_BODY) -> bytes:
    """The body of ``request`` (transfer coding removed by the server), read up to
    ``limit`` bytes.

    Raises:
        BodyTooLarge: the body (or its declared Content-Length) is over ``limit``.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body of {declared} bytes (at most {limit})")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
