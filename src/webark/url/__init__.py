"""URLs for web archiving: canonicalization, SURT forms, scope prefixes, domains.

Layer L1 (imports only :mod:`webark.core`). Two notions of "the same URL" live here:

* :func:`normalize` / :func:`join` — the crawler's: WHATWG URL parsing plus RFC 3986
  percent-encoding normalization; equivalent URLs compare equal, nothing meaningful
  is lost.
* :func:`cdx_key` — the index's: the aggressive IA canonicalization (``www`` dropped,
  query sorted, session ids removed, lowercased) in SURT form, byte-compatible with
  pywb / OpenWayback / OutbackCDX URL keys: ``com,example)/path?a=2&b=1``.

Scoping uses the Heritrix scope SURT (:func:`to_scope_surt`,
``http://(com,example,www,)/path``) and :class:`SurtPrefixSet`. Registered domains come
from the Public Suffix List bundled with tldextract (:func:`registered_domain`).
See ``docs/url-differences.md`` for where we deliberately differ from the references.
"""

from webark.url.canon import (
    IaUrl,
    alpha_reorder_query,
    attempt_ip_formats,
    canonicalize,
    default_port,
    google_canonicalize,
    ia_canonicalize,
    massage_host,
    parse_ia_url,
    strip_path_session_id,
    strip_query_session_id,
    unescape_repeatedly,
)
from webark.url.domains import public_prefix, public_suffix, registered_domain
from webark.url.errors import InvalidURLError
from webark.url.idn import host_to_ascii, host_to_unicode
from webark.url.normalize import join, join_normalized, normalize, normalize_percent_encoding
from webark.url.scope import SurtPrefixSet, as_prefix, candidate_surts, surt_prefix_from_seed
from webark.url.surt import cdx_key, host_to_surt, surt_form, to_scope_surt

__all__ = [
    "IaUrl",
    "InvalidURLError",
    "SurtPrefixSet",
    "alpha_reorder_query",
    "as_prefix",
    "attempt_ip_formats",
    "candidate_surts",
    "canonicalize",
    "cdx_key",
    "default_port",
    "google_canonicalize",
    "host_to_ascii",
    "host_to_surt",
    "host_to_unicode",
    "ia_canonicalize",
    "join",
    "join_normalized",
    "massage_host",
    "normalize",
    "normalize_percent_encoding",
    "parse_ia_url",
    "public_prefix",
    "public_suffix",
    "registered_domain",
    "strip_path_session_id",
    "strip_query_session_id",
    "surt_form",
    "surt_prefix_from_seed",
    "to_scope_surt",
    "unescape_repeatedly",
]
