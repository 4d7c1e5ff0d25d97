"""Which URIs the bulk crawler delegates to the browser (the ``browser:`` section's
decide rules, :mod:`webark.crawl.browser.config`).

Two moments, as in Heritrix 3 (ExtractorChrome ran on pages FetchHTTP had fetched;
Brozzler and Umbra took whole URL classes, chosen by regex, from the start):

* **before the fetch** (:meth:`DelegationRules.before_fetch`): a URI that a ``regex``
  (``re.search`` on the URI) or a ``hosts`` entry (the host or a subdomain) names is
  loaded by the browser through the archiving proxy instead of being fetched by the
  bulk crawler, so it is captured once;
* **after the fetch** (:meth:`DelegationRules.after_fetch`): a 2xx ``text/html`` (or
  XHTML) page that the bulk crawler fetched and extracted is handed to the browser with
  its document when :func:`troublesome` says the static extraction cannot have seen
  what a browser would.

The ``troublesome`` heuristic (:class:`~webark.crawl.browser.config.Troublesome`), any
one of three signals, each a known shape of "made by scripts":

1. **few links, some scripts**: at most ``max_links`` (3) static navigational links
   (hop ``L``: ``a``/``area`` hrefs and their kin) while the page loads at least
   ``min_scripts`` (1) scripts (``<script>`` with a ``src`` or inline code). A server-made
   page of a site has a menu; a script-made one often has nothing before it runs
   (Heritrix's BrowserProcessor renders every 200 HTML page; this keeps the browser for
   the few that need it — the source text's "only delegating those URLs that are deemed
   'troublesome'");
2. **empty app shell**: the body shows almost no text (under 40 characters outside
   ``script``/``style``/``noscript``/``template``) and holds a mount point of the
   single-page frameworks (``id`` ``root``, ``app``, ``__next``, ``__nuxt``, ``___gatsby``,
   ``svelte``; ``[data-reactroot]``, ``[ng-app]``, ``[ng-version]``), with a script;
3. **``<noscript>`` asking for JavaScript**: its text says to enable JavaScript (or that
   the page requires it), which sites put where their content needs scripts.

Shapes: the page is parsed with lexbor (``selectolax``, as the HTML extractor), at most
:data:`MAX_PARSED` bytes of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from webark.crawl.browser.config import BrowserSettings, Troublesome

__all__ = ["MAX_PARSED", "DelegationRules", "PageSignals", "page_signals", "troublesome"]

MAX_PARSED = 512 * 1024
"""Bytes of a page the heuristic parses (enough for any app shell's head and body)."""

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_SHELL_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "svelte"})
_SHELL_SELECTOR = "[data-reactroot], [ng-app], [ng-version], [data-v-app]"
_ASKS_FOR_JS = re.compile(
    r"(enable|turn on|activate|requires?|needs?|aktivier)\W+(\w+\W+){0,4}?"
    r"(javascript|js\b)|(javascript|js)\W+(\w+\W+){0,3}?(is\s+)?(required|disabled|needed)",
    re.IGNORECASE,
)
_SHELL_TEXT = 40
_NOT_PAGES = frozenset({"E", "X", "P"})


@dataclass(frozen=True, slots=True)
class PageSignals:
    """What the heuristic reads from one HTML page.

    Attributes:
        links: static navigational links (hop ``L``) the bulk extraction found.
        scripts: ``<script>`` elements with a ``src`` or inline code.
        text_chars: characters of visible body text (whitespace collapsed), outside
            ``script``, ``style``, ``noscript`` and ``template``.
        mount_point: an element the single-page frameworks mount on (module docstring).
        noscript_asks_js: a ``<noscript>`` whose text asks to enable JavaScript.
    """

    links: int
    scripts: int
    text_chars: int
    mount_point: bool
    noscript_asks_js: bool


def page_signals(html: bytes, links: int) -> PageSignals:
    """The :class:`PageSignals` of ``html`` (the first :data:`MAX_PARSED` bytes),
    ``links`` being the count of its static ``L`` outlinks."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html[:MAX_PARSED])
    scripts = 0
    for node in tree.css("script"):
        kind = (node.attributes.get("type") or "").strip().lower()
        if kind and "javascript" not in kind and kind != "module":
            continue  # JSON data, templates
        if node.attributes.get("src") or (node.text() or "").strip():
            scripts += 1
    noscript = any(_ASKS_FOR_JS.search(n.text() or "") for n in tree.css("noscript"))
    ids = {(n.attributes.get("id") or "").strip() for n in tree.css("body [id]")}
    mount = bool(ids & _SHELL_IDS) or tree.css_first(_SHELL_SELECTOR) is not None
    body = tree.body
    text = 0
    if body is not None:
        for tag in ("script", "style", "noscript", "template"):
            for n in body.css(tag):
                n.decompose()
        text = len(" ".join((body.text(separator=" ") or "").split()))
    return PageSignals(links, scripts, text, mount, noscript)


def troublesome(signals: PageSignals, rule: Troublesome) -> str | None:
    """Which signal of the heuristic (module docstring) ``signals`` shows under the
    thresholds ``rule``: ``"few-links"``, ``"app-shell"``, ``"noscript"``, or None."""
    if signals.links <= rule.max_links and signals.scripts >= rule.min_scripts:
        return "few-links"
    if rule.app_shell and signals.mount_point and signals.scripts and (
        signals.text_chars < _SHELL_TEXT
    ):  # fmt: skip
        return "app-shell"
    if rule.noscript and signals.noscript_asks_js:
        return "noscript"
    return None


class DelegationRules:
    """The decide rules of a ``browser:`` section (module docstring).

    Args:
        settings: the validated section.
    """

    def __init__(self, settings: BrowserSettings) -> None:
        self.settings = settings
        self._regexes = tuple(re.compile(rx) for rx in settings.regex)
        self._hosts = settings.hosts

    def before_fetch(self, uri: str, last_hop: str = "") -> str | None:
        """The rule that sends ``uri`` (reached by the hop ``last_hop``, ``""`` for a
        seed) to the browser instead of the fetch: ``"regex:RX"`` or ``"host:HOST"``;
        None when no rule does, for an embed or prerequisite (hop ``E``, ``X``, ``P``:
        a page's images and scripts are the browser's to load with their page, not
        pages of their own), or when the section is not enabled."""
        if not self.settings.enabled or last_hop in _NOT_PAGES:
            return None
        return self.matching_rule(uri)

    def matching_rule(self, uri: str) -> str | None:
        """The ``regex`` or ``hosts`` rule ``uri`` matches (``"regex:RX"``,
        ``"host:HOST"``), whatever its hop; None when none does."""
        for rx in self._regexes:
            if rx.search(uri):
                return f"regex:{rx.pattern}"
        if self._hosts:
            try:
                host = (urlsplit(uri).hostname or "").lower().rstrip(".")
            except ValueError:
                return None
            for h in self._hosts:
                if host == h or host.endswith("." + h):
                    return f"host:{h}"
        return None

    def after_fetch(self, status: int, mime: str | None, body: bytes, hops: Iterable[str],
                    last_hop: str = "", uri: str = "") -> str | None:  # fmt: skip
        """Why a fetched page goes to the browser with its document, or None: ``status``
        2xx, ``mime`` HTML, ``hops`` the hop letters of its static outlinks.

        - Reached by a speculative hop (``X``: a URL found in a script's strings, which
          :meth:`before_fetch` leaves to the bulk crawler since it may be an image or
          data) and matching a ``regex``/``hosts`` rule: that rule plus
          ``":speculative"`` — it turned out to be a page, and the rule names its
          pages for the browser (a page whose links are made by script is often
          reached so: its links are script strings too).
        - Else, reached by a hop other than an embed (an iframe's document is rendered
          with its page): the heuristic's signal (``"troublesome:few-links"`` …).
        """
        if not self.settings.enabled or not 200 <= status < 300:
            return None
        if (mime or "").split(";")[0].strip().lower() not in _HTML_TYPES or not body:
            return None
        if last_hop == "X" and uri:
            named = self.matching_rule(uri)
            if named is not None:
                return f"{named}:speculative"
        rule = self.settings.troublesome
        if rule is None or last_hop in _NOT_PAGES:
            return None
        links = sum(1 for h in hops if h == "L")
        why = troublesome(page_signals(body, links), rule)
        return None if why is None else f"troublesome:{why}"
