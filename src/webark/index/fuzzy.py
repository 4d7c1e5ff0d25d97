"""Fuzzy matching: which capture answers a URL the archive does not hold exactly.

A replayed page asks for URLs that differ from the captured ones in ways that do not
change the resource: a cache-buster, a new version parameter of a stylesheet, a
tracking parameter, an extra query parameter a static file ignores, a folder for its
``index.html``. When the exact URL has no capture, the captures of the same host and
path are compared with it parameter by parameter (on the CDX keys) and each candidate
gets the rules it needs. The rules, in order of preference
(``docs/replay-fuzzy.md`` has the full list of names and examples):

``cache-buster``
    parameters that only defeat caches differ or are absent on one side: ``_``,
    ``__``, ``_dc``, ``cb``, ``cachebust(er)``, ``nocache``, ``uncache``, ``rnd``,
    ``rand``, ``random``, a ``t``/``ts``/``time``/``timestamp`` holding an epoch time,
    and any parameter whose value is a 10–13 digit epoch time (s or ms) or a
    ``Math.random()`` number (``0.`` and 6+ digits).
``tracking-param``
    campaign and click identifiers differ or are absent: ``utm_*``, ``fbclid``,
    ``gclid``, ``gclsrc``, ``dclid``, ``msclkid``, ``yclid``, ``mc_cid``, ``mc_eid``,
    ``igshid``, ``_ga``, ``_gl``, ``_hsenc``, ``_hsmi``, ``mkt_tok``.
``version-param``
    a version parameter (:data:`VERSION_PARAMS`: ``v``, ``ver``, ``version``, ``rev``,
    ``build``, ``hash`` …) differs, or is present on one side only
    (``style.css?v=2`` ← ``style.css?v=1`` or ``style.css``;
    ``load.php?…&version=T2`` ← ``…&version=T1``). Only for stylesheets, scripts,
    images and fonts (:data:`ASSET_FAMILIES`): in a page or an API answer, ``v=``
    may well be the content's id (``watch?v=…``).
``extra-param``
    the URL asked has parameters the capture has not, the others being equal
    (``search.html?q=json`` ← ``search.html``: a form's GET never crawled, whose page
    script reads the query). Not for program paths (``.php``, ``.asp`` …
    :data:`DYNAMIC_EXTENSIONS`, pywb's ``not_exts``), whose query selects the content.
``index-page``
    ``/dir/`` (or ``/dir``) ↔ ``/dir/index.html`` (and ``index.htm``, ``index.php``,
    ``default.aspx`` …, :data:`INDEX_PAGES`), same query.

What the CDX key already equates is an exact match, not a fuzzy one: parameters in
another order, ``/a`` and ``/a/``, ``www.``, http and https, case.

A capture with a parameter the URL asked lacks, or with another value of a parameter
that is none of the above, is never used (``page?id=3`` is not ``page?id=1``), nor a
capture keyed by a request method (``__wb_method=post…``) for a GET. For a POST/PUT
lookup (the method and body folded into the URL, :mod:`webark.cdx.post`) only the
first two rules apply, to the body's fields as much as to the query. Captures with a
status of 400 or more are never fuzzy matches (a recorded error page answers nothing).

Candidates are ordered by their least preferred rule, then by the number of parameters
that differ, then by distance in time (ties to the earlier); the caller
(:func:`webark.apps.replay.select.select_capture`) serves the first that loads and
whose type fits the request (:func:`acceptable`): the type a fuzzy match is served as
must be the one the page asked for (:func:`mime_family`: a stylesheet for a
stylesheet, an image for an image), so that a near miss never turns into another kind
of resource. pywb's default rule matches any capture of the same path with any query
when the path has a file extension (nearest in time, whatever the query): it serves
``style.css?v=1`` for ``style.css?v=2`` too, but also ``page.html?id=1`` for
``page.html?id=2``, and it misses ``load.php?…&version=T2``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from webark.cdx.line import CdxLine
from webark.index.capture_select import closest, exact_key, is_replayable, timestamp_seconds
from webark.index.source import IndexSource, KeyRange, pad_from

__all__ = [
    "ASSET_FAMILIES",
    "DYNAMIC_EXTENSIONS",
    "FUZZY_SCAN",
    "INDEX_PAGES",
    "RULES",
    "VERSION_PARAMS",
    "FuzzyMatch",
    "acceptable",
    "extension_family",
    "fuzzy_matches",
    "mime_family",
]

#: Rule names, in order of preference (module docstring).
RULES = ("cache-buster", "tracking-param", "version-param", "extra-param", "index-page")
_RANK = {"cache-buster": 1, "tracking-param": 1, "version-param": 2, "extra-param": 3,
         "index-page": 4}  # fmt: skip
#: Lines of one path's captures read at most for the query rules.
FUZZY_SCAN = 5000

_CACHE_BUSTERS = frozenset({
    "_", "__", "_dc", "cb", "cachebust", "cachebuster", "cache_bust", "cache-bust",
    "nocache", "no_cache", "uncache", "rnd", "rand", "random", "_rnd", "_cb",
})  # fmt: skip
_TIME_PARAMS = frozenset({"t", "ts", "_t", "_ts", "time", "timestamp", "_time"})
_TRACKING = frozenset({
    "fbclid", "gclid", "gclsrc", "dclid", "msclkid", "yclid", "mc_cid", "mc_eid",
    "igshid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok",
})  # fmt: skip
#: Names of parameters that version a static resource (rule ``version-param``).
VERSION_PARAMS = frozenset({
    "v", "ver", "version", "vsn", "rev", "revision", "build", "buildid", "release",
    "hash", "h", "etag", "checksum", "fingerprint", "cv", "sv", "_v", "vv", "t", "ts",
})  # fmt: skip
#: MIME families of resources a version parameter may differ for (:func:`mime_family`).
ASSET_FAMILIES = frozenset({"css", "js", "image", "font"})
#: Extensions whose query selects the content: no ``extra-param`` (pywb ``not_exts``).
DYNAMIC_EXTENSIONS = frozenset({
    ".asp", ".aspx", ".jsp", ".jspx", ".php", ".php3", ".php4", ".php5", ".phtml", ".pl",
    ".cgi", ".cfm", ".exe", ".dll", ".py", ".rb", ".do", ".action",
})  # fmt: skip
#: Directory index pages (rule ``index-page``).
INDEX_PAGES = ("index.html", "index.htm", "index.shtml", "index.php", "index.asp",
               "index.aspx", "index.jsp", "default.htm", "default.html", "default.asp",
               "default.aspx")  # fmt: skip

_EPOCH = re.compile(r"^\d{10,13}$")
_RANDOM = re.compile(r"^0\.\d{6,}$")
_METHOD_PARAM = "__wb_method"


def _noise(name: str, value: str) -> str | None:
    """The rule under which parameter ``name=value`` (CDX key form, lower case) is
    noise: ``cache-buster``, ``tracking-param`` or None."""
    if name in _CACHE_BUSTERS or _EPOCH.match(value) or _RANDOM.match(value):
        return "cache-buster"
    if name.startswith("utm_") or name in _TRACKING:
        return "tracking-param"
    return None


def _params(query: str) -> list[tuple[str, str]]:
    if not query:
        return []
    out = []
    for part in query.split("&"):
        if part:
            name, _, value = part.partition("=")
            out.append((name, value))
    return out


@dataclass(frozen=True, slots=True)
class _Query:
    """The parameters of a CDX key's query, split into noise (name → rule) and the
    others (name → sorted values)."""

    noise: frozenset[tuple[str, str, str]]
    params: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, query: str) -> _Query:
        noise: set[tuple[str, str, str]] = set()
        params: dict[str, list[str]] = {}
        for name, value in _params(query):
            kind = _noise(name, value)
            if kind is not None and name != _METHOD_PARAM:
                noise.add((kind, name, value))
            else:
                params.setdefault(name, []).append(value)
        return cls(frozenset(noise), {k: tuple(sorted(v)) for k, v in params.items()})


def _compare(asked: _Query, cand: _Query, *, dynamic: bool, method: bool
             ) -> tuple[frozenset[str], int] | None:  # fmt: skip
    """The rules a candidate needs to answer the URL asked, and how many parameters
    differ; None when it cannot answer it."""
    rules = {kind for kind, _, _ in asked.noise ^ cand.noise}
    distance = len({name for _, name, _ in asked.noise ^ cand.noise})
    for name in asked.params.keys() | cand.params.keys():
        a, c = asked.params.get(name, ()), cand.params.get(name, ())
        if a == c:
            continue
        if method:
            return None  # a request body's fields must match, noise apart
        distance += 1
        if name in VERSION_PARAMS:
            rules.add("version-param")
        elif c or dynamic:
            return None
        else:
            rules.add("extra-param")
    return frozenset(rules), distance


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    """A capture that answers a URL through fuzzy ``rules`` (names of :data:`RULES`,
    most significant first), ``distance`` parameters apart."""

    line: CdxLine
    rules: tuple[str, ...]
    distance: int = 0

    @property
    def rank(self) -> int:
        return max((_RANK[r] for r in self.rules), default=0)

    @property
    def keeps_asked_url(self) -> bool:
        """True when replay should show the URL asked rather than the capture's: its
        extra parameters are for the page's script (``search.html?q=…``)."""
        return "extra-param" in self.rules

    @property
    def moves_path(self) -> bool:
        """True when the capture has another path (an index page): the page must be
        shown at the capture's URL, or relative URLs built at run time resolve against
        the wrong folder."""
        return "index-page" in self.rules


def _sorted_rules(rules: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(rules, key=lambda r: (-_RANK[r], RULES.index(r))))


def _split(key: str) -> tuple[str, str]:
    path, _, query = key.partition("?")
    return path, query


def _is_dynamic(url: str) -> bool:
    path = url.split("#", 1)[0].split("?", 1)[0]
    last = path.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    return dot >= 0 and last[dot:].lower() in DYNAMIC_EXTENSIONS


def _scan_path(source: IndexSource, path_key: str, start: str) -> Iterator[CdxLine]:
    """Lines of ``path_key?…`` from key ``start`` on (CDX order)."""
    end = path_key + "@"  # '@' follows '?'
    for line in source.scan(KeyRange(start, end)):
        if line.urlkey.startswith(path_key + "?"):
            yield line


def _fixed_prefix(path_key: str, query: str) -> str:
    """``path_key?`` + the asked parameters before the first one a rule lets differ
    (noise or a version parameter): every candidate of the noise and version rules
    starts with it, however many other captures the path has."""
    kept = []
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if _noise(name, value) or name in VERSION_PARAMS:
            break
        kept.append(part + "&")
    return path_key + "?" + "".join(kept)


def _query_matches(source: IndexSource, url: str, key: str, keep: Callable[[CdxLine], bool],
                   limit: int) -> Iterator[FuzzyMatch]:  # fmt: skip
    path_key, query = _split(key)
    asked = _Query.of(query)
    method = _METHOD_PARAM in asked.params
    dynamic = _is_dynamic(url)
    seen: set[tuple[str, int]] = set()
    scans = [_scan_path(source, path_key, path_key + "?")]
    fixed = _fixed_prefix(path_key, query)
    if fixed != path_key + "?":
        scans.append(_scan_path(source, path_key, fixed))
    bare = [] if method else closest(source, path_key, None, limit=limit)
    for line in itertools.chain(bare, *(itertools.islice(s, FUZZY_SCAN) for s in scans)):
        ident = (line.filename, line.offset)
        if ident in seen or line.urlkey == key or not keep(line):
            continue
        seen.add(ident)
        found = _compare(asked, _Query.of(_split(line.urlkey)[1]), dynamic=dynamic,
                         method=method)  # fmt: skip
        if found is not None and found[0]:
            yield FuzzyMatch(line, _sorted_rules(found[0]), found[1])


def _path_variants(url: str) -> Iterator[str]:
    """The URLs of the ``index-page`` rule: the folder of an index page, or the index
    pages of a folder (``/dir``, ``/dir/``: one CDX key, the slash is canonicalized
    away). Same query."""
    base, q, query = url.split("#", 1)[0].partition("?")
    tail = q + query
    scheme_end = base.find("://")
    if scheme_end < 0 or base.find("/", scheme_end + 3) < 0:
        return
    head, _, last = base.rpartition("/")
    if last.lower() in INDEX_PAGES:
        yield head + "/" + tail
    elif not last or "." not in last:
        folder = base if not last else base + "/"
        for page in INDEX_PAGES:
            yield folder + page + tail


def fuzzy_matches(
    source: IndexSource,
    url: str,
    timestamp: str | None,
    *,
    limit: int = 50,
    exclude: Callable[[CdxLine], bool] | None = None,
) -> list[FuzzyMatch]:
    """Captures that answer ``url`` by the rules of the module docstring, best first.

    Args:
        source: the index.
        url: the URL asked (for a POST/PUT: the method URL of
            :func:`webark.cdx.post.method_url`). Its own captures are not returned:
            call this when it has none.
        timestamp: 1–14 digits, or None (latest); ties in time go to the earlier.
        limit: at most this many matches.
        exclude: lines to leave out (access rules).

    Returns:
        :class:`FuzzyMatch` es ordered by rule preference, parameters that differ, then
        ``|capture time - timestamp|``. Only replayable lines with a status below 400.

    Raises:
        ValueError: a bad timestamp or an unusable URL.
        IndexUnavailable: the index cannot be read.
    """
    key = exact_key(url)
    target = timestamp_seconds(pad_from(timestamp)) if timestamp else None

    def keep(line: CdxLine) -> bool:
        return (is_replayable(line) and not _is_error(line)
                and not (exclude is not None and exclude(line)))  # fmt: skip

    found = list(_query_matches(source, url, key, keep, limit))
    if _METHOD_PARAM not in _Query.of(_split(key)[1]).params:
        for variant in _path_variants(url):
            for line in closest(source, variant, timestamp, limit=limit, exclude=exclude):
                if keep(line):
                    found.append(FuzzyMatch(line, ("index-page",), 0))

    def order(m: FuzzyMatch) -> tuple[int, int, float, str]:
        t = timestamp_seconds(m.line.timestamp)
        if target is None:  # latest first
            return m.rank, m.distance, -(t or 0.0), ""
        return m.rank, m.distance, abs(t - target) if t is not None else float("inf"), \
            m.line.timestamp  # fmt: skip

    found.sort(key=order)
    return found[:limit]


def _is_error(line: CdxLine) -> bool:
    return line.status.isdigit() and int(line.status) >= 400


# --- resource types ------------------------------------------------------------------

_FAMILY_OF_MIME = {
    "text/css": "css",
    "text/html": "html", "application/xhtml+xml": "html",
    "application/json": "json", "text/json": "json", "application/ld+json": "json",
    "application/vnd.ms-fontobject": "font", "application/font-woff": "font",
    "application/font-woff2": "font", "application/x-font-woff": "font",
    "application/x-font-ttf": "font", "application/x-font-otf": "font",
    "application/x-font-opentype": "font", "application/font-sfnt": "font",
    "image/svg+xml": "image",
}  # fmt: skip
_JS_MIMES = re.compile(r"^(?:text|application)/(?:x-)?(?:javascript|ecmascript|jscript|livescript)"
                       r"(?:1\.\d)?$")  # fmt: skip
_FAMILY_OF_EXTENSION = {
    ".css": "css", ".js": "js", ".mjs": "js", ".json": "json",
    ".html": "html", ".htm": "html", ".xhtml": "html", ".shtml": "html",
    ".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image", ".webp": "image",
    ".svg": "image", ".ico": "image", ".avif": "image", ".bmp": "image",
    ".woff": "font", ".woff2": "font", ".ttf": "font", ".otf": "font", ".eot": "font",
    ".mp4": "media", ".webm": "media", ".mp3": "media", ".ogg": "media", ".m4a": "media",
}  # fmt: skip


def mime_family(mime: str | None) -> str | None:
    """The family of a media type: ``css``, ``js``, ``json``, ``html``, ``image``,
    ``font``, ``media`` (audio, video), ``text`` (other text), or None (unknown,
    ``application/octet-stream``, empty). Parameters and case are ignored.

    >>> mime_family("text/css; charset=utf-8"), mime_family("application/x-javascript")
    ('css', 'js')
    """
    m = (mime or "").split(";", 1)[0].strip().lower()
    if not m:
        return None
    family = _FAMILY_OF_MIME.get(m)
    if family is not None:
        return family
    if _JS_MIMES.match(m):
        return "js"
    major = m.split("/", 1)[0]
    if major in ("image", "font"):
        return major
    if major in ("audio", "video"):
        return "media"
    if m.endswith("+json"):
        return "json"
    if major == "text":
        return "text"
    return None


def extension_family(url: str) -> str | None:
    """The family (:func:`mime_family`) the file extension of ``url``'s path names, or
    None (no extension, or one not known)."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    last = path.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    return _FAMILY_OF_EXTENSION.get(last[dot:].lower()) if dot >= 0 else None


def acceptable(match: FuzzyMatch, status: int, mime: str | None,
               expected: Collection[str] | None) -> bool:  # fmt: skip
    """Whether a fuzzy match, once loaded (its HTTP ``status`` and Content-Type
    ``mime``), may answer a request that can use the families ``expected`` (None: the
    request does not say). A redirect always may (its target is looked up in turn).
    ``version-param`` needs an asset family (:data:`ASSET_FAMILIES`); otherwise the
    family must be one expected, an unknown type passing only for fonts and media
    (servers often send them as ``application/octet-stream``)."""
    if 300 <= status < 400:
        return True
    family = mime_family(mime)
    if "version-param" in match.rules and family not in ASSET_FAMILIES:
        return False
    if expected is None or family in expected:
        return True
    return family is None and not {"font", "media"}.isdisjoint(expected)
