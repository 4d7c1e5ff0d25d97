"""What the CDX indexer indexes and how: :class:`IndexOptions` and the field names.

The option names are those of the two peers whose lines webark reproduces (pywb 2.x
``cdx-indexer`` and webrecorder cdxj-indexer 1.5); :mod:`webark.cdx.compat` holds the
rules in which they differ.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["COMPATS", "DEFAULT_RECORDS", "FIELD_IN", "FIELD_OUT", "Compat", "IndexOptions"]

Compat = Literal["cdxj-indexer", "pywb"]
COMPATS: tuple[str, ...] = get_args(Compat)

DEFAULT_RECORDS = frozenset({"response", "revisit", "resource", "metadata"})
"""cdxj-indexer's default record types (``DEFAULT_RECORDS``)."""

FIELD_IN = {
    "url": "warc-target-uri",
    "status": "http:status",
    "digest": "warc-payload-digest",
    "referrer": "req.http:referer",
    "method": "req.http:method",
    "recordDigest": "record-digest",
}
"""cdxj-indexer field names: what a user writes → the internal name."""
FIELD_OUT = {v: k for k, v in FIELD_IN.items()}
"""Internal field name → the CDXJ key written."""
STANDARD_FIELDS = frozenset({"url", "mime", "status", "digest", "length", "offset", "filename"})
"""The CDXJ keys every line has (not extra fields)."""


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """What to index and how (all flags default to the peers' defaults).

    Attributes:
        compat: ``"cdxj-indexer"`` or ``"pywb"`` (:mod:`webark.cdx.compat`).
        records: WARC types to index (e.g. ``{"request"}``); None: the compat's default
            set. Explicit sets are taken as given (no ``warc-fields`` filtering), as
            cdxj-indexer's ``records=``.
        all_records: every record (cdxj-indexer ``records="all"``; pywb
            ``include_all``: requests and ``warc-fields`` records too, warcinfo never).
        post_append: fold POST/PUT bodies into the key (pywb ``append_post``,
            cdxj-indexer ``post_append``); adds ``method`` and ``requestBody`` fields.
        fields: extra CDXJ fields, cdxj-indexer names: ``method``, ``referrer``
            (from the request of the capture), ``http:NAME`` (HTTP header),
            ``req.http:NAME`` (request header), ``recordDigest``, any WARC field name.
        replace_fields: write only ``fields`` (cdxj-indexer ``replace_fields``).
        digest_records: add ``recordDigest``: ``sha256:`` of the record as stored
            (cdxj-indexer ``digest_records``).
        minimal: pywb ``minimal``: no HTTP parsing, no MIME (but ``warc/revisit``) or
            status; a missing digest is the SHA-1 of the whole block.
        arc2warc: pywb ``arc2warc``: ARC records are read as converted WARC response
            records (MIME from the HTTP head instead of the ARC header line).
        filename: write this file name instead of the input's (cdxj-indexer
            ``filename``).
        dir_root: write file names relative to this directory (pywb/cdxj-indexer
            ``dir_root``); default: the base name.
        scope_keys: set ``surt`` (and make it the ``urlkey``) to the Heritrix scope SURT
            instead of computing the CDX key (for the ``ng`` format).
        revisit_refs: add ``refersToUri``/``refersToDate`` of revisits to ``extra``.
        redirects: set ``redirect`` to the Location of 3xx responses.

    Raises:
        ValueError: unknown compat, ``minimal`` with ``post_append`` (pywb refuses it),
            ``replace_fields`` without ``fields``.
    """

    compat: Compat = "cdxj-indexer"
    records: frozenset[str] | None = None
    all_records: bool = False
    post_append: bool = False
    fields: tuple[str, ...] = ()
    replace_fields: bool = False
    digest_records: bool = False
    minimal: bool = False
    arc2warc: bool = False
    filename: str | None = None
    dir_root: str | None = None
    scope_keys: bool = False
    revisit_refs: bool = False
    redirects: bool = False

    def __post_init__(self) -> None:
        if self.compat not in COMPATS:
            raise ValueError(f"unknown compat {self.compat!r} (one of {', '.join(COMPATS)})")
        if self.minimal and self.post_append:
            raise ValueError("minimal and post_append cannot be used together (as in pywb)")
        if self.replace_fields and not self.fields:
            raise ValueError("replace_fields needs fields")

    @property
    def output_fields(self) -> tuple[str, ...] | None:
        """The CDXJ keys to write when ``replace_fields`` (else None: all)."""
        if not self.replace_fields:
            return None
        names = list(self.fields)
        if self.digest_records and "recordDigest" not in names:
            names.insert(0, "recordDigest")
        return tuple(FIELD_OUT.get(FIELD_IN.get(n, n), n) for n in names)

    @property
    def extra_fields(self) -> tuple[str, ...]:
        """Internal names of the extra fields to compute, in output order (standard
        keys left out: they are always written)."""
        names: list[str] = []
        if self.digest_records:
            names.append("record-digest")
        for f in self.fields:
            n = FIELD_IN.get(f, f)
            if n not in names:
                names.append(n)
        return tuple(n for n in names if FIELD_OUT.get(n, n) not in STANDARD_FIELDS)

    @property
    def needs_pairing(self) -> bool:
        """True when a record's line depends on its neighbour (request ↔ response)."""
        return self.post_append or any(
            FIELD_IN.get(f, f).startswith("req.http:") for f in self.fields
        )

    def file_name(self, path: str | os.PathLike[str]) -> str:
        """The ``filename`` written for ``path`` (forced name, relative to
        ``dir_root``, or the base name)."""
        if self.filename is not None:
            return self.filename
        p = os.fspath(path)
        if self.dir_root is not None:
            rel = os.path.relpath(p, self.dir_root)
            return rel.replace(os.sep, "/") if os.sep != "/" else rel
        return os.path.basename(p)

    @classmethod
    def for_format(cls, fmt: str, compat: Compat | None = None, **kw: object) -> IndexOptions:
        """Options webark uses for output format ``fmt``: pywb compat for ``cdx11``/
        ``cdx9`` (byte-identical to pywb's classic CDX), cdxj-indexer compat for
        ``cdxj`` and ``ng``; ``ng`` also gets scope-SURT keys, revisit references and
        redirects. ``kw`` are further :class:`IndexOptions` fields."""
        if compat is None:
            compat = "pywb" if fmt in ("cdx11", "cdx9") else "cdxj-indexer"
        extra: dict[str, object] = {}
        if fmt == "ng":
            extra = {"scope_keys": True, "revisit_refs": True, "redirects": True}
        extra.update(kw)
        return cls(compat=compat, **extra)  # type: ignore[arg-type]
