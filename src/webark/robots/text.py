"""From robots.txt bytes to normalized directive lines (before protego sees them).

This module does what protego leaves to its caller or does differently from RFC 9309
and Google's reference parser (google/robotstxt):

* **Decoding** (:func:`decode_robots`): at most :data:`MAX_ROBOTS_BYTES` (500 KiB, the
  limit Google enforces and RFC 9309 §2.5 sets as the minimum a crawler must read);
  UTF-16/32 byte-order marks are honoured; a UTF-8 BOM, or the start of one, is skipped
  (Google); each line is UTF-8, or Latin-1 when it is not valid UTF-8; lines are cut at
  :data:`MAX_LINE_BYTES` bytes (Google: ``8 * 2083 - 1``).
* **Lines** end at CR LF, LF or CR — only those (``str.splitlines`` would also split
  on ``\\x85``, ``\\u2028`` … which can occur in Latin-1 text).
* **Groups** (:func:`parse_robots`): a group is one or more ``user-agent`` lines and
  the records after them; a ``user-agent`` line starts a new group once a record
  (``allow``, ``disallow``, ``crawl-delay``, ``request-rate``, ``visit-time``) has
  followed the previous one. Unknown lines are dropped, so they cannot close a group
  (RFC 9309 §2.2.4; Google's ``ID_LineSyntax_Groups_OtherRules``; protego differs).
  ``crawl-delay`` and friends do close one, as protego does and as sites write them
  (Google ignores them altogether). Rules before the first ``user-agent`` line are
  ignored (RFC 9309 §2.1). ``sitemap`` and ``host`` are not group members.
* **User-agent values** are cut at the first whitespace or ``/`` (Google accepts
  ``Googlebot Images`` as ``Googlebot`` and ``Googlebot/2.1`` as ``Googlebot``); a ``*``
  followed by anything after whitespace is the global group.
* **Directive names** are case-insensitive; the colon may be missing (``Disallow /``)
  and the usual misspellings (``dissallow``, ``useragent``, ``site-map`` …) are
  accepted, as protego and Google do.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Final

MAX_ROBOTS_BYTES: Final = 500 * 1024
"""Bytes of a robots.txt that are read (500 KiB = 512,000 bytes; Google's limit, RFC
9309 §2.5 "at least 500 kibibytes"). Anything after it is ignored."""

MAX_LINE_BYTES: Final = 8 * 2083 - 1
"""Bytes kept of one line (google/robotstxt ``kMaxLineLen - 1``); the rest is cut."""

_ALIASES: Final[dict[str, str]] = {
    "user-agent": "user-agent",
    "useragent": "user-agent",
    "user agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow",
    "dissallow": "disallow",
    "dissalow": "disallow",
    "disalow": "disallow",
    "diasllow": "disallow",
    "disallaw": "disallow",
    "sitemap": "sitemap",
    "sitemaps": "sitemap",
    "site-map": "sitemap",
    "crawl-delay": "crawl-delay",
    "crawl delay": "crawl-delay",
    "request-rate": "request-rate",
    "request rate": "request-rate",
    "visit-time": "visit-time",
    "visit time": "visit-time",
    "host": "host",
}
"""Directive spellings accepted (lower case) → canonical name."""

GROUP_RULES: Final = frozenset({"allow", "disallow"})
GROUP_EXTRAS: Final = frozenset({"crawl-delay", "request-rate", "visit-time"})
SITE_WIDE: Final = frozenset({"sitemap", "host"})

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
# characters str.splitlines() breaks on besides CR/LF; protego splits with it
_SPLITLINES_CHARS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class DecodedRobots:
    """A robots.txt body as text lines.

    Attributes:
        lines: the lines, without line endings (a final line ending adds no line).
        encoding: ``"utf-8"``, ``"utf-16"``/``"utf-32"`` (BOM), or ``"utf-8+latin-1"``
            when some lines were not valid UTF-8 and were read as Latin-1.
        truncated: True when the body was longer than :data:`MAX_ROBOTS_BYTES`.
        long_lines: number of lines cut at :data:`MAX_LINE_BYTES`.
    """

    lines: tuple[str, ...]
    encoding: str
    truncated: bool = False
    long_lines: int = 0


def _decode_line(raw: bytes) -> tuple[str, bool]:
    """(text, used_latin1). A UTF-8 sequence cut by the line limit is dropped."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError as e:
        if e.start >= len(raw) - 3 and e.reason == "unexpected end of data":
            try:
                return raw[: e.start].decode("utf-8"), False
            except UnicodeDecodeError:
                pass
        return raw.decode("latin-1"), True


def decode_robots(body: bytes) -> DecodedRobots:
    """Turn a robots.txt body into lines, leniently.

    Args:
        body: the response body as received (transfer and content encodings removed).

    Returns:
        The lines (see :class:`DecodedRobots`). Never raises: binary garbage becomes
        lines that parse as nothing.
    """
    truncated = len(body) > MAX_ROBOTS_BYTES
    if truncated:
        body = body[:MAX_ROBOTS_BYTES]
        # keep whole lines only: a cut "Allow: /a/b" would mean "Allow: /a"
        cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
        body = body[: cut + 1] if cut >= 0 else b""
    encoding = "utf-8"
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if body.startswith(bom):
            body = body.decode(codec, errors="replace").encode("utf-8")
            encoding = codec
            break
    else:
        # Google skips a UTF-8 BOM and also any leading part of one (EF, EF BB).
        i = 0
        while i < 3 and i < len(body) and body[i] == _UTF8_BOM[i]:
            i += 1
        body = body[i:]
    raw_lines = _LINE_BREAK.split(body)
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines: list[str] = []
    latin1 = False
    long_lines = 0
    for raw in raw_lines:
        if len(raw) > MAX_LINE_BYTES:
            raw = raw[:MAX_LINE_BYTES]
            long_lines += 1
        text, used = _decode_line(raw)
        latin1 = latin1 or used
        lines.append(text)
    if latin1 and encoding == "utf-8":
        encoding = "utf-8+latin-1"
    return DecodedRobots(tuple(lines), encoding, truncated, long_lines)


def _directive(line: str) -> tuple[str, str] | None:
    """(canonical name, value) of a comment-free, stripped, non-empty line, or None
    when the line is not a known directive."""
    if ":" in line:
        name, _, value = line.partition(":")
        canonical = _ALIASES.get(name.strip().lower())
        if canonical is not None:
            return canonical, value.strip()
    # Missing colon ("Disallow /", "User agent foo", "Sitemap http://x/s.xml"):
    # whitespace separates a one- or two-word name from the value.
    words = line.split()
    for n in (1, 2):
        canonical = _ALIASES.get(" ".join(words[:n]).lower())
        if canonical is not None and len(words) > n:
            return canonical, " ".join(words[n:])
    return None


def product_token(value: str) -> str:
    """The user-agent value as matched: ``*`` for the global group (also ``* foo``),
    else the text before the first whitespace or ``/``, e.g. ``Googlebot/2.1`` →
    ``Googlebot``, ``FOO BAR`` → ``FOO``.

    >>> product_token("Googlebot-Image/1.0"), product_token("* # all"), product_token("a b")
    ('Googlebot-Image', '*', 'a')
    """
    if value.startswith("*") and (len(value) == 1 or value[1].isspace()):
        return "*"
    return re.split(r"[\s/]", value, maxsplit=1)[0]


_PRODUCT_TOKEN = re.compile(r"^[A-Za-z_-]+$")


def is_valid_product_token(user_agent: str | None) -> bool:
    """True when ``user_agent`` is a product token RFC 9309 §2.2.1 lets a crawler obey
    rules for: only ``[a-zA-Z_-]``, not empty (google/robotstxt
    ``IsValidUserAgentToObey``). ``"Foobot/2.1"`` and ``"Foobot Bar"`` are not.

    >>> is_valid_product_token("webark"), is_valid_product_token("webark/1.0")
    (True, False)
    """
    return bool(user_agent) and _PRODUCT_TOKEN.match(user_agent or "") is not None


@dataclass(slots=True)
class Group:
    """One group: its user agents (lower case product tokens) and records in order."""

    agents: list[str] = field(default_factory=list)
    records: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ParsedRobots:
    """The directives of a robots.txt, grouped.

    Attributes:
        groups: the groups in file order (a user agent may appear in several; protego
            merges them, as RFC 9309 §2.2.1 requires).
        sitemaps: ``Sitemap`` values in file order (not group members).
        host: the last ``Host`` value (a Yandex extension), or None.
        lines: number of lines (``last_line_seen`` of Google's parse report).
        valid_directives: lines with a known directive, in or out of a group.
        unknown_directives: lines that are neither blank, comments nor known directives.
        decoded: the decoding details (encoding, truncation).
    """

    groups: tuple[Group, ...]
    sitemaps: tuple[str, ...]
    host: str | None
    lines: int
    valid_directives: int
    unknown_directives: int
    decoded: DecodedRobots


def parse_robots(decoded: DecodedRobots) -> ParsedRobots:
    """Group the directive lines of a decoded robots.txt (see the module docstring)."""
    groups: list[Group] = []
    current: Group | None = None
    in_agents = False
    sitemaps: list[str] = []
    host: str | None = None
    valid = unknown = 0
    for text in decoded.lines:
        hash_pos = text.find("#")
        if hash_pos >= 0:
            text = text[:hash_pos]
        text = text.strip()
        if not text:
            continue
        parsed = _directive(text)
        if parsed is None:
            unknown += 1
            continue
        valid += 1
        name, value = parsed
        if name == "user-agent":
            if not in_agents:
                current = Group()
                groups.append(current)
                in_agents = True
            token = product_token(value).lower()
            if token and current is not None:
                current.agents.append(token)
            continue
        if name == "sitemap":
            if value:
                sitemaps.append(value)
            continue
        if name == "host":
            if value:
                host = value
            continue
        if name in GROUP_RULES or name in GROUP_EXTRAS:
            in_agents = False
        if current is not None and value:
            current.records.append((name, value))
    return ParsedRobots(
        tuple(g for g in groups if g.agents),
        tuple(sitemaps),
        host,
        len(decoded.lines),
        valid,
        unknown,
        decoded,
    )


def to_protego_text(parsed: ParsedRobots) -> str:
    """Write the groups back as plain robots.txt text for protego: one ``User-agent``
    line per agent, then the group's records and an empty ``Disallow:`` that ends the
    group. Values
    are kept as written except that characters protego's line splitting would break on
    are percent-encoded."""
    out: list[str] = []
    for group in parsed.groups:
        out.extend(f"User-agent: {agent}" for agent in group.agents)
        for name, value in group.records:
            if name in GROUP_RULES:
                value = _SPLITLINES_CHARS.sub(
                    lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), value
                )
            elif _SPLITLINES_CHARS.search(value):
                continue
            out.append(f"{name}: {value}")
        # An empty Disallow means nothing but closes the group for protego, which
        # would otherwise merge a group without records into the next one.
        out.append("Disallow:")
        out.append("")
    return "\n".join(out)


def path_params_query(url: str) -> str:
    """The part of ``url`` robots.txt rules are matched against: path, params and
    query, without the fragment; ``/`` when empty (google/robotstxt
    ``GetPathParamsQuery``, RFC 9309 §2.2.2).

    >>> path_params_query("http://www.example.com/a/b?c=d&e=f#fragment")
    '/a/b?c=d&e=f'
    >>> path_params_query("example.com?a"), path_params_query("//a/b/c")
    ('/?a', '/b/c')
    """
    start = 2 if url.startswith("//") else 0
    early = _find_first(url, "/?;", start)
    proto = url.find("://", start)
    # a "://" after the first "/", "?" or ";" is not a scheme separator
    proto_end = start if proto < 0 or 0 <= early < proto else proto + 3
    path_start = _find_first(url, "/?;", proto_end)
    if path_start < 0:
        return "/"
    hash_pos = url.find("#", start)
    if 0 <= hash_pos < path_start:
        return "/"
    path_end = len(url) if hash_pos < 0 else hash_pos
    path = url[path_start:path_end]
    return path if path.startswith("/") else "/" + path


def _find_first(s: str, chars: str, start: int) -> int:
    positions = [p for p in (s.find(c, start) for c in chars) if p >= 0]
    return min(positions) if positions else -1
