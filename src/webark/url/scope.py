"""SURT prefixes and SURT prefix sets: the basis of ``SurtPrefixedDecideRule`` scoping.

A SURT prefix is the start of a scope SURT (:func:`webark.url.to_scope_surt`); a URL is
in scope when its scope SURT starts with one of the prefixes:

=================================  ==============================================
prefix                             covers
=================================  ==============================================
``http://(is,``                    every host under ``.is``
``http://(com,example,``           ``example.com`` and all its subdomains
``http://(com,example,www,)/``     exactly the host ``www.example.com``
``http://(com,example,www,)/a/``   the directory ``/a/`` on that host
=================================  ==============================================

As in Heritrix, ``https`` is treated as ``http`` on both sides (prefix and candidate),
and prefixes are derived from seeds by :func:`surt_prefix_from_seed`.

Internationalized host names: a candidate URL is tested in its punycode form (what
Heritrix tests, and what seeds turn into) *and* in its Unicode form, so that a prefix
written in Unicode, even a partial label like ``http://(is,l``, matches
``landsbókasafn.is`` (punycode ``xn--landsbkasafn-5hb.is``).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from functools import lru_cache

from webark.url.idn import host_to_unicode
from webark.url.normalize import normalize
from webark.url.surt import surt_form, to_scope_surt

__all__ = [
    "SurtPrefixSet",
    "as_prefix",
    "candidate_surts",
    "surt_prefix_from_seed",
]

_LAST_PATH_SEGMENT = re.compile(r"^(.*//.*/)[^/]*", re.DOTALL)


def _coerce_https(surt: str) -> str:
    """Heritrix ``SurtPrefixSet.coerceFromHttpsForComparison``."""
    return "http" + surt[5:] if surt.startswith("https://") else surt


def _comparable(surt: str) -> str:
    """The form prefixes and candidates are compared in: lowercase, NFC, http."""
    return _coerce_https(unicodedata.normalize("NFC", surt.strip().lower()))


def _add_implied_http(text: str) -> str:
    """Heritrix ``ArchiveUtils.addImpliedHttpIfNecessary``: no ``:``, or a ``.`` before
    the first ``:`` (``example.com:8080/x``), means there is no scheme."""
    colon = text.find(":")
    period = text.find(".")
    if colon == -1 or 0 <= period < colon:
        return "http://" + text
    return text


def as_prefix(surt: str) -> str:
    """Truncate a SURT to the implied SURT prefix (Heritrix ``SurtPrefixSet.asPrefix``).

    1. drop everything after the last ``/`` when there is a path (at least a third
       ``/``);
    2. with no path, drop the closing ``)``, opening the prefix to subdomains.

    >>> as_prefix("http://(com,example,www,)/a/b.html")
    'http://(com,example,www,)/a/'
    >>> as_prefix("http://(com,example,www,)")
    'http://(com,example,www,'
    """
    surt = _LAST_PATH_SEGMENT.sub(r"\1", surt, count=1)
    if not surt.endswith("/"):
        i = surt.rfind(")")
        if i >= 0:
            surt = surt[:i] + surt[i + 1 :]
    return surt


def surt_prefix_from_seed(seed: str) -> str:
    """The SURT prefix implied by a seed (or a bare host / host+path).

    Heritrix ``SurtPrefixSet.prefixFromPlainForceHttp``: add ``http://`` if no scheme,
    normalize (but keep the presence or absence of a trailing ``/`` after the host, which
    decides whether subdomains are included), convert to SURT form, truncate with
    :func:`as_prefix`, and write ``https`` as ``http``.

    Examples (the first five are Heritrix's own test cases):

    >>> surt_prefix_from_seed("http://www.archive.org/index.html")
    'http://(org,archive,www,)/'
    >>> surt_prefix_from_seed("http://timmknibbs4senate.blogspot.com/")
    'http://(com,blogspot,timmknibbs4senate,)/'
    >>> surt_prefix_from_seed("https://one.two.three")
    'http://(three,two,one,'
    >>> surt_prefix_from_seed("https://xone.two.three/a/b/c/")
    'http://(three,two,xone,)/a/b/c/'
    >>> surt_prefix_from_seed("https://yone.two.three/a/b/c")
    'http://(three,two,yone,)/a/b/'
    >>> surt_prefix_from_seed("www.example.com")
    'http://(com,example,www,'

    Raises:
        InvalidURLError: the seed cannot be parsed as a URL.
    """
    text = _add_implied_http(seed.strip())
    trailing_slash = text.endswith("/")
    url = normalize(text)
    if not trailing_slash and url.endswith("/"):
        url = url[:-1]
    return _coerce_https(as_prefix(surt_form(url)))


@lru_cache(maxsize=65536)
def candidate_surts(url: str) -> tuple[str, ...]:
    """The SURT forms a URL is tested in against SURT prefixes: its scope SURT with
    ``https`` written as ``http`` (punycode host), followed, if the host has punycode
    labels, by the same SURT with those labels in Unicode.

    Cached (a pure function of ``url``): a crawl tests the same out-of-scope links of
    every page of a site again and again, and the URL parse is most of the cost.

    >>> candidate_surts("https://landsbókasafn.is/x")
    ('http://(is,xn--landsbkasafn-5hb,)/x', 'http://(is,landsbókasafn,)/x')
    >>> candidate_surts("http://example.is/")
    ('http://(is,example,)/',)

    Raises:
        InvalidURLError: the URL cannot be parsed.
    """
    surt = _coerce_https(to_scope_surt(url))
    start = surt.find("://(")
    if start < 0:
        return (surt,)
    start += 4
    end = surt.find(")", start)
    if end < 0 or "xn--" not in surt[start:end]:
        return (surt,)
    labels, colon, port = surt[start:end].partition(":")
    unicode_labels = ",".join(
        host_to_unicode(label) if label.startswith("xn--") else label for label in labels.split(",")
    )
    return (surt, f"{surt[:start]}{unicode_labels}{colon}{port}{surt[end:]}")


class SurtPrefixSet:
    """A set of SURT prefixes with longest-prefix matching.

    Prefixes are stored lowercased, NFC-normalized, with ``https://`` written as
    ``http://``. Unlike Heritrix's ``SurtPrefixSet``, prefixes that are covered by a
    shorter one are kept (so that the longest, most specific one can be found, e.g. to
    attach per-prefix settings); :meth:`without_redundant` gives Heritrix's view.

    >>> scope = SurtPrefixSet.from_lines([
    ...     "http://www.example.com/a/b.html",  # a seed
    ...     "+http://(is,l",                    # a literal SURT prefix
    ...     "+example.org",                     # a host: that domain and its subdomains
    ... ])
    >>> list(scope)
    ['http://(com,example,www,)/a/', 'http://(is,l', 'http://(org,example,']
    >>> scope.accepts("https://www.example.com/a/c.html")
    True
    >>> scope.accepts("http://www.example.com/b/")
    False
    >>> scope.match("http://landsbókasafn.is/"), scope.match("http://sub.example.org/x")
    ('http://(is,l', 'http://(org,example,')

    Lookups cost O(log n) string comparisons.
    """

    __slots__ = ("_sorted",)

    def __init__(self, prefixes: Iterable[str] = ()) -> None:
        self._sorted: list[str] = []
        for prefix in prefixes:
            self.add(prefix)

    @classmethod
    def from_lines(cls, lines: Iterable[str], *, seeds_as_prefixes: bool = True) -> SurtPrefixSet:
        """Build a set from the lines of a Heritrix seeds or SURTs file.

        Blank lines and ``#`` comments (whole-line, or after whitespace) are skipped;
        ``+`` lines are directives (:meth:`add_directive`); any other line is a seed,
        whose implied prefix is added when ``seeds_as_prefixes`` (Heritrix's
        ``seedsAsSurtPrefixes``, on by default).

        Raises:
            InvalidURLError: a seed or directive cannot be parsed as a URL.
        """
        prefixes = cls()
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            line = line.split()[0]  # the entry; anything after whitespace is a comment
            if prefixes.add_directive(line):
                continue
            if seeds_as_prefixes:
                prefixes.add_seed(line)
        return prefixes

    def add(self, prefix: str) -> None:
        """Add a literal SURT prefix such as ``"http://(org,archive,"``."""
        p = _comparable(prefix)
        i = bisect_right(self._sorted, p)
        if i == 0 or self._sorted[i - 1] != p:
            self._sorted.insert(i, p)

    def add_seed(self, seed: str) -> str:
        """Add the prefix implied by a seed (:func:`surt_prefix_from_seed`); returns it.

        Raises:
            InvalidURLError: the seed cannot be parsed as a URL.
        """
        prefix = surt_prefix_from_seed(seed)
        self.add(prefix)
        return prefix

    def add_directive(self, line: str) -> bool:
        """Apply a ``+`` line of a seeds file (Heritrix ``considerAsDirective``).

        ``+http://(org,archive,`` (contains ``(``) is a literal SURT prefix;
        ``+archive.org`` or ``+http://archive.org/x/`` is a plain URI or host whose
        implied prefix is added. Returns False (and adds nothing) when the line is not a
        directive.

        Raises:
            InvalidURLError: a plain URI after ``+`` cannot be parsed.
        """
        if not line.startswith("+"):
            return False
        rest = line[1:].strip()
        if rest.find("(") > 0:
            self.add(rest)
        else:
            self.add_seed(rest)
        return True

    def longest_prefix(self, surt: str) -> str | None:
        """The longest prefix in the set that the given SURT starts with, or None.

        ``https://`` is read as ``http://``; the SURT is lowercased (and NFC-normalized)
        first.
        """
        s = _comparable(surt)
        prefixes = self._sorted
        while prefixes:
            i = bisect_right(prefixes, s) - 1
            if i < 0:
                return None
            p = prefixes[i]
            if s.startswith(p):
                return p
            # No prefix of s is longer than the common part of s and its floor p (they
            # would sort between p and s), so search again with that part only.
            k = 0
            n = min(len(p), len(s))
            while k < n and p[k] == s[k]:
                k += 1
            s = s[:k]
        return None

    def match(self, url: str) -> str | None:
        """The longest prefix matching the URL in its punycode or its Unicode form
        (:func:`candidate_surts`), or None.

        Raises:
            InvalidURLError: the URL cannot be parsed.
        """
        best: str | None = None
        for candidate in candidate_surts(url):
            found = self.longest_prefix(candidate)
            if found is not None and (best is None or len(found) > len(best)):
                best = found
        return best

    def accepts(self, url: str) -> bool:
        """True if some prefix matches the URL (see :meth:`match`)."""
        return self.match(url) is not None

    def without_redundant(self) -> list[str]:
        """The prefixes, sorted, without those covered by a shorter one in the set (the
        content of Heritrix's ``SurtPrefixSet`` and of its ``surtsDumpFile``)."""
        kept: list[str] = []
        for p in self._sorted:
            if not kept or not p.startswith(kept[-1]):
                kept.append(p)
        return kept

    def __contains__(self, prefix: object) -> bool:
        if not isinstance(prefix, str):
            return False
        p = _comparable(prefix)
        i = bisect_right(self._sorted, p)
        return i > 0 and self._sorted[i - 1] == p

    def __iter__(self) -> Iterator[str]:
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._sorted)

    def __repr__(self) -> str:
        return f"SurtPrefixSet({self._sorted!r})"
