"""The annotations column (12th) of a crawl.log line.

Annotations are comma-separated tokens, ``-`` when there are none. A comma inside
double quotes does not separate (Heritrix 1.x DeDuplicator writes
``duplicate:"<arcfile>,<offset>"``), and an annotation may contain spaces (UKWA's
virus scanner wrote ``1: stream: Eicar-Test-Signature FOUND``), so the column is
everything between the source tag and the optional JSON extra info.

Annotations seen in the wild (Heritrix 1.x and 3.x, NetarchiveSuite, UKWA):

========================================= ==============================================
annotation                                meaning
========================================= ==============================================
``3t``                                    fetch attempts (``Nt``), written when N > 1
``lenTrunc`` / ``timeTrunc``              content cut at the size / time limit
``headerTrunc``                           response headers cut at the size limit
``dol:N``                                 N outlinks dropped (too many outlinks)
``duplicate:digest``                      H3: payload identical to an earlier capture
``duplicate:server-not-modified``         H3: 304 answer to a conditional request
``warcRevisit:digest``                    older H3 crawls: revisit (digest match)
``warcRevisit:uriAgnosticDigest``         older H3: revisit of another URL's payload
``warcRevisit:notModified``               older H3: revisit of a 304
``duplicate:"<arcfile>,<offset>"``        H1 DeDuplicator (NetarchiveSuite): the origin
``duplicate:"<origin>"``                  DeDuplicator, other origin forms
``unwritten:identicalDigest``             H3: not written, identical to the last capture
``Q:<quotaKey>``                          a quota stopped the URI (``-5003``)
``err=<ExceptionClass>``                  exception that ended processing (``-5`` …)
``le:<Exception>@<module>``               H1: local error ("le") in a processor
``ip:<address>``                          H3: IP address fetched from
``content-size:N``                        H1.x (NetarchiveSuite): bytes with headers
``usingCharsetInHTML:<cs>``               charset taken from a ``<meta>`` tag
``receivedFromAMQP``, ``geo:<CC>``        UKWA extensions
``WrenderedURL``, ``WrenderedStatus:N``   UKWA: URI handed to a browser renderer
========================================= ==============================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


def split_annotations(column: str) -> tuple[str, ...]:
    """Split the annotations column into tokens.

    ``-`` and the empty string give ``()``. Commas inside double quotes do not split.
    Joining the result with ``","`` gives the column back (round trip).

    >>> split_annotations('duplicate:"a.arc,123",content-size:491,3t')
    ('duplicate:"a.arc,123"', 'content-size:491', '3t')
    """
    if column in ("", "-"):
        return ()
    if '"' not in column:
        return tuple(column.split(","))
    out: list[str] = []
    start = 0
    quoted = False
    for i, ch in enumerate(column):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            out.append(column[start:i])
            start = i + 1
    out.append(column[start:])
    return tuple(out)


def join_annotations(annotations: tuple[str, ...] | list[str]) -> str:
    """The column text for ``annotations``: comma-joined, ``-`` when empty."""
    return ",".join(annotations) if annotations else "-"


class DuplicateKind(StrEnum):
    """How a duplicate annotation says the content was already archived."""

    DIGEST = "digest"
    """Same payload digest as an earlier capture (``duplicate:digest``,
    ``warcRevisit:digest``); Heritrix 3 does not say whether of the same URL."""
    URI_AGNOSTIC_DIGEST = "uri-agnostic-digest"
    """Same payload as a capture of another URL (``warcRevisit:uriAgnosticDigest``)."""
    NOT_MODIFIED = "server-not-modified"
    """The server answered 304 Not Modified (``duplicate:server-not-modified``,
    ``warcRevisit:notModified``)."""
    ORIGIN = "origin"
    """DeDuplicator form naming where the original is: ``duplicate:"<origin>"``."""
    UNWRITTEN = "unwritten"
    """``unwritten:identicalDigest``: identical to the previous capture, nothing written."""
    OTHER = "other"
    """Some other ``duplicate:…`` value, kept verbatim in ``value``."""


@dataclass(frozen=True, slots=True)
class DuplicateOf:
    """A parsed duplicate annotation.

    Attributes:
        kind: which form (see :class:`DuplicateKind`).
        annotation: the annotation as written, e.g. ``duplicate:"x.arc,57084"``.
        value: the part after the prefix, quotes removed (``x.arc,57084``, ``digest``).
        filename: for the DeDuplicator ``"<file>,<offset>"`` origin form, the (W)ARC
            file name of the original record, else ``None``.
        offset: the byte offset of the original record in ``filename``, else ``None``.
    """

    kind: DuplicateKind
    annotation: str
    value: str
    filename: str | None = None
    offset: int | None = None


_WARC_REVISIT: Final = {
    "digest": DuplicateKind.DIGEST,
    "uriAgnosticDigest": DuplicateKind.URI_AGNOSTIC_DIGEST,
    "notModified": DuplicateKind.NOT_MODIFIED,
    "serverNotModified": DuplicateKind.NOT_MODIFIED,
}
_ORIGIN_FILE_OFFSET = re.compile(r"^(?P<file>.+),(?P<offset>\d+)$")


def parse_duplicate(annotation: str) -> DuplicateOf | None:
    """Parse one annotation if it is a duplicate marker, else return ``None``.

    Accepted: ``duplicate:digest``, ``duplicate:server-not-modified``,
    ``duplicate:"<origin>"`` (DeDuplicator; ``"<file>,<offset>"`` is split into
    ``filename`` and ``offset``), ``duplicate:<other>``, ``warcRevisit:digest``,
    ``warcRevisit:uriAgnosticDigest``, ``warcRevisit:notModified`` and
    ``unwritten:identicalDigest``.

    >>> parse_duplicate('duplicate:"2-2-x.arc,57084"').offset
    57084
    """
    prefix, sep, value = annotation.partition(":")
    if not sep:
        return None
    if prefix == "duplicate":
        if value == "digest":
            return DuplicateOf(DuplicateKind.DIGEST, annotation, value)
        if value == "server-not-modified":
            return DuplicateOf(DuplicateKind.NOT_MODIFIED, annotation, value)
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            origin = value[1:-1]
            m = _ORIGIN_FILE_OFFSET.match(origin)
            if m:
                return DuplicateOf(
                    DuplicateKind.ORIGIN, annotation, origin, m["file"], int(m["offset"])
                )
            return DuplicateOf(DuplicateKind.ORIGIN, annotation, origin)
        return DuplicateOf(DuplicateKind.OTHER, annotation, value)
    if prefix == "warcRevisit":
        kind = _WARC_REVISIT.get(value, DuplicateKind.OTHER)
        return DuplicateOf(kind, annotation, value)
    if prefix == "unwritten" and value == "identicalDigest":
        return DuplicateOf(DuplicateKind.UNWRITTEN, annotation, value)
    return None


_ATTEMPTS = re.compile(r"^(\d+)t$")


def attempts(annotations: tuple[str, ...]) -> int | None:
    """Fetch attempts from an ``Nt`` annotation (``3t`` → 3), ``None`` if absent
    (Heritrix writes it only when more than one attempt was made)."""
    for a in annotations:
        m = _ATTEMPTS.match(a)
        if m:
            return int(m.group(1))
    return None


def annotation_value(annotations: tuple[str, ...], prefix: str) -> str | None:
    """The value of the first annotation ``<prefix><value>``, e.g.
    ``annotation_value(a, "ip:")`` → ``"172.19.0.3"``; ``None`` if absent."""
    for a in annotations:
        if a.startswith(prefix):
            return a[len(prefix) :]
    return None
