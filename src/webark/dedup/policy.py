"""Which captures to deduplicate: :class:`DedupPolicy` (plain data) → :class:`Decision`.

The knobs are those Heritrix users reach for (reference/heritrix-behaviour.md "Dedup"):
which statuses (200 by default — a 404 page is usually not worth an index entry), which
MIME types (big crawls often skip ``text/html``, which rarely repeats byte for byte and
dominates the index), and a minimum payload size (a revisit record costs about as much
as a small response, so tiny payloads save nothing: warcprox has
``--dedup-min-text-size`` / ``--dedup-min-binary-size``; Heritrix's DeDuplicator
indexes everything unless filtered by MIME type).

The **empty payload** (``sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ``, the sha1 of zero bytes)
is special: every empty body has that digest, so an index entry for it is one row
shared by millions of unrelated URLs, and a revisit of an empty payload needs no original
at all (the headers in the revisit's block are the whole response). The default
``empty_payload="store"`` writes such responses in full (nothing to save, nothing to look
up, as warcprox does for zero-length payloads); ``"revisit"`` asks for a revisit record
without ``WARC-Refers-To`` (the identical-payload-digest profile still holds).

:func:`check_capture` is the crawl-time step (decide, then look up). The same policy
filters what ``webark dedup build`` puts in an index
(:meth:`DedupPolicy.decide` on each candidate original), so lookups and the index agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from webark.core.digests import EMPTY_SHA1, Digest
from webark.core.errors import DigestError, KeyedConfigError
from webark.dedup import DedupHit, DedupIndex

Action = Literal["lookup", "store", "revisit-without-original"]

POLICY_KEYS: dict[str, str] = {
    "statuses": "list of HTTP statuses that may be deduplicated (default [200])",
    "skip_mime_types": "list of MIME types never deduplicated: 'text/html', or a whole "
    "type 'video/' / 'video/*'",
    "only_mime_types": "list: only these MIME types are deduplicated (same syntax)",
    "min_size": "bytes: smaller payloads are stored in full (default 0)",
    "empty_payload": "'store' (default: a 0-byte body is written in full) or 'revisit'",
}
"""The keys of a ``dedup_policy:`` mapping (job file; the proxy's per-request policy)."""


class DedupPolicyError(KeyedConfigError):
    """A dedup policy mapping that cannot be used (every mistake found: ``problems``)."""

    label = "dedup_policy"


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one capture.

    Attributes:
        action: ``"lookup"`` — look the digest up (write a revisit on a hit; at build
            time: index it); ``"store"`` — write the full record without a lookup (at
            build time: do not index it); ``"revisit-without-original"`` — the empty
            payload under ``empty_payload="revisit"``.
        reason: why, for reports and build summaries: ``"ok"``, ``"status"``,
            ``"mime"``, ``"size"``, ``"empty"``, ``"no-digest"``.
    """

    action: Action
    reason: str

    @property
    def dedup(self) -> bool:
        """True unless the record must be stored in full."""
        return self.action != "store"


LOOKUP = Decision("lookup", "ok")


def is_empty_digest(digest: str) -> bool:
    """True for the digest of zero bytes in any sha1 encoding (and the sha256 one)."""
    try:
        d = Digest.parse(digest)
    except DigestError:
        return False
    if d.algorithm == "sha1":
        return d.label() == EMPTY_SHA1
    return d.algorithm == "sha256" and d.raw.hex() == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def _mime_matches(mime: str, patterns: tuple[str, ...]) -> bool:
    # "text/html" matches "text/html" exactly; "video/" or "video/*" match a whole type
    for p in patterns:
        p = p.strip().lower()
        if p.endswith("/*"):
            p = p[:-1]
        if (p.endswith("/") and mime.startswith(p)) or mime == p:
            return True
    return False


@dataclass(frozen=True, slots=True)
class DedupPolicy:
    """Which captures are deduplicated.

    Attributes:
        statuses: HTTP statuses that may be deduplicated (default ``{200}``). Records
            without an HTTP status (``resource`` records, CDX ``-``) pass.
        skip_mime_types: MIME types never deduplicated: exact (``text/html``) or whole
            top-level types (``video/`` or ``video/*``), compared without parameters,
            case-insensitively. Default: none (deduplicate everything).
        only_mime_types: when set, only these MIME types (same syntax) are deduplicated.
        min_size: minimum payload size in bytes (entity body, transfer coding removed);
            smaller payloads are stored in full. Unknown sizes pass. Default 0.
        empty_payload: ``"store"`` (default) or ``"revisit"`` — see the module docstring.
    """

    statuses: frozenset[int] = frozenset({200})
    skip_mime_types: tuple[str, ...] = ()
    only_mime_types: tuple[str, ...] | None = None
    min_size: int = 0
    empty_payload: Literal["store", "revisit"] = "store"

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any] | None) -> DedupPolicy:
        """A policy from plain data (a job file's ``dedup_policy:``; keys
        :data:`POLICY_KEYS`; missing keys keep their defaults).

        Raises:
            DedupPolicyError: an unknown key, a value of the wrong type or range — every
                problem found, one per line of the message, the first in ``key``.
        """
        if cfg is None:
            return cls()
        if not isinstance(cfg, Mapping):
            raise DedupPolicyError("dedup_policy", "expected a mapping of "
                                   + ", ".join(POLICY_KEYS))  # fmt: skip
        problems: list[tuple[str, str]] = []
        for key in cfg:
            if key not in POLICY_KEYS:
                problems.append((str(key), f"unknown key; known keys: {', '.join(POLICY_KEYS)}"))
        values: dict[str, Any] = {}
        statuses = cfg.get("statuses")
        if statuses is not None:
            if not isinstance(statuses, list | tuple):
                problems.append(("statuses", f"expected a list of statuses, got {statuses!r}"))
            else:
                for i, s in enumerate(statuses):
                    if isinstance(s, bool) or not isinstance(s, int) or not 100 <= s <= 599:
                        problems.append((f"statuses[{i}]", f"not an HTTP status: {s!r}"))
                values["statuses"] = frozenset(s for s in statuses if isinstance(s, int))
        for key in ("skip_mime_types", "only_mime_types"):
            v = cfg.get(key)
            if v is None:
                continue
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list | tuple) or not all(
                isinstance(m, str) and "/" in m for m in v
            ):
                problems.append((key, f"expected a list of MIME types ('image/png', "
                                      f"'video/*'), got {v!r}"))  # fmt: skip
            else:
                values[key] = tuple(m.strip().lower() for m in v)
        size = cfg.get("min_size")
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                problems.append(("min_size", f"expected bytes >= 0, got {size!r}"))
            else:
                values["min_size"] = size
        empty = cfg.get("empty_payload")
        if empty is not None:
            if empty not in ("store", "revisit"):
                problems.append(("empty_payload", f"expected 'store' or 'revisit', got {empty!r}"))
            else:
                values["empty_payload"] = empty
        if problems:
            raise DedupPolicyError(*problems[0], tuple(problems))
        return cls(**values)

    def decide(
        self,
        status: int | None,
        mime_type: str | None,
        size: int | None,
        digest: str | None,
    ) -> Decision:
        """Decide for one capture.

        Args:
            status: HTTP status (None when the record has no HTTP response).
            mime_type: MIME type, parameters allowed (``text/html; charset=utf-8``).
            size: payload size in bytes, None when unknown.
            digest: payload digest in any encoding, None when absent.

        Checks run in this order: status, digest present, empty payload, MIME, size.
        """
        if status is not None and status not in self.statuses:
            return Decision("store", "status")
        if not digest or digest == "-":
            return Decision("store", "no-digest")
        if is_empty_digest(digest):
            if self.empty_payload == "revisit":
                return Decision("revisit-without-original", "empty")
            return Decision("store", "empty")
        mime = (mime_type or "").split(";", 1)[0].strip().lower()
        if self.only_mime_types is not None and not _mime_matches(mime, self.only_mime_types):
            return Decision("store", "mime")
        if self.skip_mime_types and _mime_matches(mime, self.skip_mime_types):
            return Decision("store", "mime")
        if size is not None and size < self.min_size:
            return Decision("store", "size")
        return LOOKUP


def check_capture(
    index: DedupIndex,
    policy: DedupPolicy,
    url: str,
    status: int | None,
    mime_type: str | None,
    size: int | None,
    digest: str | None,
) -> tuple[Decision, DedupHit | None]:
    """The crawl-time step: decide, and look up when the policy says so.

    Returns:
        ``(decision, hit)``: with a hit, write an ``identical-payload-digest`` revisit
        referring to ``hit.original``; without one (or when ``decision.action`` is
        ``"store"``), write the full response and — once it is written, and only if
        ``decision.action == "lookup"`` — :meth:`~webark.dedup.DedupIndex.add` it as an
        original. ``"revisit-without-original"``: a revisit with no ``WARC-Refers-To``.
    """
    decision = policy.decide(status, mime_type, size, digest)
    if decision.action != "lookup" or digest is None:
        return decision, None
    return decision, index.lookup(url, digest)
