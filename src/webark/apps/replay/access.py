"""Access control of the replay app: which captures may be shown.

Rules come from :class:`webark.index.access_rules.AccessRules` files (YAML: SURT prefix,
``allow`` / ``block`` / ``exclude``, optional capture-time range or embargo; longest
prefix wins). Two places, the collection's own first:

* ``{collection}/access-rules.yaml`` — rules of one collection (re-read when the file
  changes);
* ``webark serve --access-rules FILE`` — rules for every collection.

A capture is decided by the collection's rules when one of them matches it, else by the
server-wide rules, else allowed. The replay app answers ``block`` with 451 (RFC 7725,
"Unavailable For Legal Reasons") and treats ``exclude`` as not archived (404, left out
of capture lists, calendars and similar-URL suggestions), as OpenWayback and pywb do.
The resolution API (``/{coll}/cdx``, TimeMaps) shows neither: ``exclude`` and ``block``
captures are both left out of its answers (:meth:`AccessConfig.hidden_from_api`; pywb
hides them from its CDX API too — a TimeMap listing mementos that answer 451 would
send Memento clients to dead ends). The replay calendar still lists blocked captures:
they lead to the 451 page, which says why. A page's screenshots (``urn:view:`` /
``urn:thumbnail:`` resource records) get the page's rule (:meth:`Access.decide`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from webark.apps.replay.paths import screenshot_page
from webark.cdx.line import CdxLine
from webark.index.access_rules import AccessDecision, AccessRules

#: File name of a collection's own rules, in the collection folder.
COLLECTION_RULES = "access-rules.yaml"


class Access:
    """The access rules that apply to one collection.

    Args:
        rules: rule sets, the first that has a matching rule decides.
    """

    def __init__(self, rules: list[AccessRules]):
        self.rules = rules

    def decide(self, url: str, timestamp: str) -> AccessDecision | None:
        """The decision for the capture of ``url`` at ``timestamp`` (14 digits, UTC),
        or None when no rule matches (allowed). A screenshot (``urn:view:{page}``,
        ``urn:thumbnail:{page}``) shows its page and gets the page URL's rule (rules are
        written for pages: a blocked page's screenshot must not be served); a rule
        for the URN itself decides only when none matches the page."""
        page = screenshot_page(url)
        for u in (url,) if page is None else (page, url):
            for r in self.rules:
                d = r.decide(u, timestamp)
                if d.rule is not None:
                    return d
        return None

    def policy(self, url: str, timestamp: str) -> str:
        """``"allow"``, ``"block"`` or ``"exclude"`` for that capture."""
        d = self.decide(url, timestamp)
        return d.policy if d is not None else "allow"

    def excluded(self, line: CdxLine) -> bool:
        """True when the capture ``line`` is excluded (shown as not archived)."""
        return bool(self.rules) and self.policy(line.url, line.timestamp) == "exclude"

    def hidden_from_api(self, line: CdxLine) -> bool:
        """True when the resolution API must not show ``line``: an ``exclude`` or
        ``block`` rule applies to it (module docstring)."""
        return bool(self.rules) and self.policy(line.url, line.timestamp) != "allow"


class AccessConfig:
    """Access rules of every collection: the server-wide file plus each collection's
    ``access-rules.yaml`` (loaded on first use, re-loaded when its mtime changes).

    Args:
        server_rules: path of ``--access-rules FILE`` or None.

    Raises (constructor):
        ValueError / OSError: from :meth:`AccessRules.load` for a bad server-wide file
            (``webark serve`` reports it before listening).
    """

    def __init__(self, server_rules: str | os.PathLike[str] | None = None):
        self.server = AccessRules.load(server_rules) if server_rules else None
        self._lock = threading.Lock()
        self._by_dir: dict[str, tuple[int | None, AccessRules | None]] = {}

    def for_collection(self, folder: Path | None) -> Access:
        """The :class:`Access` of the collection in ``folder`` (None: server-wide only).

        Raises:
            ValueError / OSError: the collection's rules file cannot be used (the
                replay app answers 500 naming the file).
        """
        rules: list[AccessRules] = []
        if folder is not None:
            own = self._collection_rules(folder / COLLECTION_RULES)
            if own is not None:
                rules.append(own)
        if self.server is not None:
            rules.append(self.server)
        return Access(rules)

    def hidden_from_api(
        self, root: Path, name: str
    ) -> Callable[[CdxLine], bool] | None:
        """For the resolution API (``create_app(hidden=...)``): the predicate of the lines
        of collection ``name`` (folder ``root/name``) to leave out, or None when no
        rule file applies.

        Raises:
            ValueError / OSError: the collection's rules file cannot be used.
        """
        access = self.for_collection(root / name)
        return access.hidden_from_api if access.rules else None

    def _collection_rules(self, path: Path) -> AccessRules | None:
        try:
            mtime: int | None = path.stat().st_mtime_ns
        except OSError:
            mtime = None
        key = str(path)
        with self._lock:
            hit = self._by_dir.get(key)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        loaded = AccessRules.load(path) if mtime is not None else None
        with self._lock:
            self._by_dir[key] = (mtime, loaded)
        return loaded
