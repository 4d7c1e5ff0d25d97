"""URL → safe relative file path, for ``webark extract`` (a browsable file tree).

The mapping (wget's ``--restrict-file-names=windows`` conventions where it has them):

* ``http://Example.COM:8080/a/b.html?x=1`` → ``example.com+8080/a/b.html@x=1``: the host
  lowercased, a non-default port after ``+``, userinfo and fragment dropped; the query
  after ``@`` (wget), in the last component.
* Directory-like URLs (path empty or ending in ``/``) → ``…/index.html``.
* Each path segment is percent-**decoded** (so ``%2e%2e`` is seen as ``..``, ``%2F`` as
  ``/``), then every character that is unsafe in a file name on Linux, macOS or Windows
  is percent-**encoded** again: ``%`` itself, ``/`` ``\\`` ``:`` ``*`` ``?`` ``"`` ``<``
  ``>`` ``|``, control characters and NUL, and DEL. A segment that is ``.``, ``..`` or
  empty becomes ``%2E``, ``%2E%2E`` or ``%`` + nothing… i.e. is encoded so that it is an
  ordinary name; a trailing dot or space (Windows strips them) is encoded; Windows
  device names (``CON``, ``NUL``, ``COM1`` …, with any extension) get a ``_`` appended to
  their stem. Names never start with ``_webark`` at the top level (reserved for the
  manifest) — a host starting with ``_`` gets it encoded.
* A component longer than :data:`MAX_COMPONENT` bytes (UTF-8) is cut and given a
  hash of the whole (``<start>~<sha1:10>.<ext>``); a path longer than
  :data:`MAX_PATH` bytes is replaced by ``<host>/_long/<sha1:20><ext>``.

The result is a tuple of components, none empty, none ``.`` or ``..``, none containing
``/``, ``\\`` or NUL, so joining them under the output folder can never leave it. The
writer (:mod:`webark.tools.extract`) still opens every component relative to its parent
directory's descriptor with ``O_NOFOLLOW``, so symlinks planted in the output folder
are not followed either.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import unquote_to_bytes, urlsplit

from webark.core.errors import WebarkError

MAX_COMPONENT = 200
"""Bytes (UTF-8) per file-name component (most file systems allow 255; the rest is room
for ``~N`` collision and ``.TIMESTAMP`` suffixes)."""
MAX_PATH = 1024
"""Bytes (UTF-8) of a whole relative path before it is replaced by a hashed name."""
SCHEMES = frozenset({"http", "https", "ftp"})
"""URL schemes that map to a host/path tree; others are not extracted."""
RESERVED_PREFIX = "_webark"
"""Top-level names starting with this are the extractor's own (manifest)."""

_UNSAFE = re.compile('[\x00-\x1f\x7f%/\\\\:*?"<>|\udc80-\udcff]')
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(10)}
    | {f"lpt{i}" for i in range(10)}
)
_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


class UnsupportedUrl(WebarkError, ValueError):
    """A URL that has no place in the tree (no host, or a scheme outside
    :data:`SCHEMES` such as ``dns:`` or ``urn:``)."""


def _pct(ch: str) -> str:
    if "\udc80" <= ch <= "\udcff":  # a byte that was not UTF-8 (surrogateescape)
        return f"%{ord(ch) - 0xDC00:02X}"
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8"))


def safe_component(text: str) -> str:
    """``text`` (already percent-decoded) as one safe file-name component (see the
    module docstring); never empty, never ``.``/``..``."""
    out = _UNSAFE.sub(lambda m: _pct(m.group(0)), text)
    if out in ("", ".", ".."):
        return "%2E" * len(out) if out else "%"
    if out[-1] in ". ":
        out = out[:-1] + _pct(out[-1])
    stem, dot, ext = out.partition(".")
    if stem.lower() in _WINDOWS_DEVICES:
        out = stem + "_" + dot + ext
    return shorten(out)


def shorten(name: str, limit: int = MAX_COMPONENT) -> str:
    """``name`` when it fits in ``limit`` UTF-8 bytes, else its start, ``~``, 10 hex
    digits of the SHA-1 of the whole name, and its extension (up to 16 bytes)."""
    raw = name.encode("utf-8")
    if len(raw) <= limit:
        return name
    ext = ""
    dot = name.rfind(".")
    if dot > 0 and len(name) - dot <= 16:
        ext = name[dot:]
    tag = "~" + hashlib.sha1(raw).hexdigest()[:10]
    room = limit - len(tag.encode()) - len(ext.encode())
    head = raw[:room].decode("utf-8", "ignore")
    return head + tag + ext


def _decode_segment(segment: str) -> str:
    """Percent-decode; bytes that are not UTF-8 stay as surrogates (re-encoded as the
    same ``%XX`` by :func:`safe_component`)."""
    if "%" not in segment:
        return segment
    return unquote_to_bytes(segment).decode("utf-8", "surrogateescape")


def host_component(scheme: str, host: str, port: int | None) -> str:
    """The top-level folder of a URL: lowercased host, ``+port`` when not the scheme's
    default; a leading ``_`` encoded (reserved prefix).

    Raises:
        UnsupportedUrl: the host is empty once trailing dots are removed (``..``)."""
    name = host.lower().rstrip(".")
    if not name:
        raise UnsupportedUrl(f"host {host!r} is only dots")
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        name += f"+{port}"
    name = safe_component(name)
    if name.startswith("_"):
        name = "%5F" + name[1:]
    return name


def url_to_path(url: str, *, html: bool = False) -> tuple[str, ...]:
    """The safe relative path of ``url``'s capture, as components.

    Args:
        url: an absolute http, https or ftp URL (WARC-Target-URI).
        html: the payload is HTML: a last component without ``.htm``/``.html`` (before
            the query) gets ``.html`` appended so that browsers open it as a page
            (wget's ``--adjust-extension``).

    Raises:
        UnsupportedUrl: other schemes, or no host.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as e:
        raise UnsupportedUrl(f"cannot parse URL {url!r}: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not parts.hostname:
        raise UnsupportedUrl(f"no file path for {url!r} (scheme {scheme or '-'!r})")
    host = host_component(scheme, parts.hostname, port)
    segments = parts.path.split("/")[1:] if parts.path.startswith("/") else parts.path.split("/")
    directory_like = not segments or segments[-1] == ""
    if directory_like:
        segments = [*segments[:-1], "index.html"] if segments else ["index.html"]
    names = [_decode_segment(s) for s in segments]
    last = names[-1]
    if html and not directory_like and not last.lower().endswith((".html", ".htm")):
        last += ".html"
    if parts.query:
        stem, dot, ext = last.rpartition(".")
        query = _decode_segment(parts.query)
        last = f"{stem}@{query}.{ext}" if dot and html else f"{last}@{query}"
    names[-1] = last
    out = (host, *(safe_component(n) for n in names))
    if len("/".join(out).encode("utf-8")) > MAX_PATH:
        suffix = ""
        at = names[-1].rfind(".")
        if at > 0 and len(names[-1]) - at <= 8:
            suffix = safe_component(names[-1][at:])
        digest = hashlib.sha1(url.encode("utf-8", "surrogateescape")).hexdigest()[:20]
        out = (host, "_long", digest + suffix)
    return out


def with_suffix_tag(name: str, tag: str) -> str:
    """``name`` with ``.tag`` inserted before its extension: ``logo.png`` + ``2008…`` →
    ``logo.2008….png``; ``README`` → ``README.2008…``; collision tags work the same
    (``~2``)."""
    sep = "" if tag.startswith("~") else "."
    dot = name.rfind(".")
    if dot > 0 and len(name) - dot <= 16 and "@" not in name[dot:]:
        return shorten(f"{name[:dot]}{sep}{tag}{name[dot:]}", MAX_COMPONENT + 40)
    return shorten(f"{name}{sep}{tag}", MAX_COMPONENT + 40)
