"""``webark rss``: the sites, feeds and implied pages of a continuous crawl
(:mod:`webark.crawl.rss`), in its database, while the crawl runs or before it starts.

    webark rss list JOBDIR [--json]
    webark rss site add JOBDIR NAME [--min-wait 10m] [--inactive]
    webark rss site change JOBDIR NAME [--min-wait W] [--activate | --deactivate]
    webark rss site deactivate JOBDIR NAME
    webark rss feed add JOBDIR SITE URI [--implied URL …] [--inactive]
    webark rss feed change JOBDIR URI [--activate | --deactivate]
    webark rss feed deactivate JOBDIR URI
    webark rss implied add JOBDIR FEED URL
    webark rss implied remove JOBDIR FEED URL

JOBDIR is the crawl's folder (its database is ``state/rss.sqlite``, or the ``database``
of the job's ``rss:`` section), or the database file itself. A running crawl sees a
change within its ``poll_interval`` (1 s). Exit status: 0 done, 1 refused (no such
site, a bad URL …), 2 usage.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from webark.crawl.rss.store import RssStore

T = TypeVar("T")


def database_of(target: Path) -> Path:
    """The RSS database of ``target``: a database file, or a job folder (its
    ``state/job.json``'s ``rss.database``, else ``state/rss.sqlite``)."""
    if target.is_file():
        return target
    from webark.crawl.rss.settings import RssSettings

    database = None
    saved = target / "state" / "job.json"
    if saved.is_file():
        try:
            section = json.loads(saved.read_text()).get("rss") or {}
            database = section.get("database") if isinstance(section, dict) else None
        except ValueError:
            database = None
    return RssSettings(database=database if isinstance(database, str) else None).database_path(
        target
    )


@contextmanager
def _store(target: Path, *, create: bool) -> Iterator[RssStore]:
    from webark.crawl.rss.store import RssStore, RssStoreError

    path = database_of(target)
    if not path.exists() and not create:
        raise click.UsageError(f"{target}: no RSS database ({path} missing); add a site with "
                               "'webark rss site add' or start a crawl with an rss: section")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        store = RssStore.open(path)
    except (RssStoreError, OSError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    try:
        yield store
    finally:
        store.close()


def _run(target: Path, change: Callable[[RssStore], T], *, create: bool = False) -> T:
    from webark.crawl.rss.model import RssConfigError

    with _store(target, create=create) as store:
        try:
            return change(store)
        except RssConfigError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)


def _wait(value: str | None) -> float | None:
    if value is None:
        return None
    from webark.crawl.rss.interval import IntervalError, parse_interval

    try:
        return parse_interval(value)
    except IntervalError as e:
        raise click.BadParameter(str(e), param_hint="--min-wait") from None


def _active(activate: bool, deactivate: bool) -> bool | None:
    if activate and deactivate:
        raise click.UsageError("--activate and --deactivate exclude each other")
    return True if activate else False if deactivate else None


_TARGET = click.argument("target", metavar="JOBDIR", type=click.Path(path_type=Path))


@click.group("rss")
def rss() -> None:
    """Sites, feeds and implied pages of a continuous crawl (crawl job with rss:).

    Changes go to the crawl's database (JOBDIR/state/rss.sqlite); a running crawl
    picks them up within a second or so, no restart needed. A new or reactivated feed
    joins its site's next round; a new minimum wait counts from the site's last round.
    """


@rss.command("list")
@_TARGET
@click.option("--json", "as_json", is_flag=True, help="JSON: sites with their state and feeds.")
def list_cmd(target: Path, as_json: bool) -> None:
    """List sites (state, rounds, minimum wait) with their feeds and implied pages."""
    from webark.crawl.rss.interval import format_interval

    with _store(target, create=False) as store:
        sites = store.listing()
    if as_json:
        click.echo(json.dumps(sites, indent=2))
        return
    for s in sites:
        off = "" if s["active"] else ", inactive"
        click.echo(f"{s['name']}: {s['state']} ({s['phase']}{off}), min wait "
                   f"{format_interval(s['min_wait'])}, {s['rounds']} rounds, "
                   f"{s['items_found']} items, last round {_when(s['last_feed_update'])}")
        for f in s["feeds"]:
            off = "" if f["active"] else " (inactive)"
            click.echo(f"  feed {f['uri']}{off}: {f['fetches']} fetches, {f['unchanged']} "
                       f"unchanged, most recent entry {_when(f['most_recent'])}")
            for p in f["implied_pages"]:
                click.echo(f"    implied {p}")
    if not sites:
        click.echo("no sites")


def _when(t: float | None) -> str:
    return "-" if t is None else datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")


@rss.group("site")
def site() -> None:
    """Add, change, deactivate sites."""


@site.command("add")
@_TARGET
@click.argument("name")
@click.option("--min-wait", metavar="WAIT", help="Between rounds: 90s, 10m, 1h30m, 2d (60s).")
@click.option("--inactive", is_flag=True, help="Add it inactive (no rounds until activated).")
def site_add(target: Path, name: str, min_wait: str | None, inactive: bool) -> None:
    """Add site NAME (its URIs get NAME as crawl.log source tag)."""
    wait = _wait(min_wait)
    s = _run(target, lambda st: st.add_site(name, min_wait=60.0 if wait is None else wait,
                                            active=not inactive), create=True)  # fmt: skip
    click.echo(f"site {s.name} added (min wait {s.min_wait:g} s{'' if s.active else ', inactive'})")


@site.command("change")
@_TARGET
@click.argument("name")
@click.option("--min-wait", metavar="WAIT", help="New minimum wait between rounds.")
@click.option("--activate", is_flag=True, help="Crawl it again.")
@click.option("--deactivate", is_flag=True, help="No more rounds (the current one ends).")
def site_change(target: Path, name: str, min_wait: str | None, activate: bool,
                deactivate: bool) -> None:  # fmt: skip
    """Change site NAME's minimum wait or whether it is active."""
    wait, active = _wait(min_wait), _active(activate, deactivate)
    if wait is None and active is None:
        raise click.UsageError("nothing to change: give --min-wait, --activate or --deactivate")
    s = _run(target, lambda st: st.change_site(name, min_wait=wait, active=active))
    click.echo(f"site {s.name}: min wait {s.min_wait:g} s, {'active' if s.active else 'inactive'}")


@site.command("deactivate")
@_TARGET
@click.argument("name")
def site_deactivate(target: Path, name: str) -> None:
    """No more rounds of site NAME (the current one ends)."""
    _run(target, lambda st: st.change_site(name, active=False))
    click.echo(f"site {name} deactivated")


@rss.group("feed")
def feed() -> None:
    """Add, change, deactivate feeds."""


@feed.command("add")
@_TARGET
@click.argument("site_name", metavar="SITE")
@click.argument("uri")
@click.option("--implied", "implied", multiple=True, metavar="URL",
              help="An implied page (fetched when the feed has a new entry); repeatable.")
@click.option("--inactive", is_flag=True, help="Add it inactive.")
def feed_add(target: Path, site_name: str, uri: str, implied: tuple[str, ...],
             inactive: bool) -> None:  # fmt: skip
    """Add feed URI (RSS or Atom) to SITE; it joins the site's next round."""
    f = _run(target, lambda st: st.add_feed(site_name, uri, implied_pages=implied,
                                            active=not inactive))  # fmt: skip
    click.echo(f"feed {f.uri} added to {f.site} ({len(f.implied_pages)} implied pages)")


@feed.command("change")
@_TARGET
@click.argument("uri")
@click.option("--activate", is_flag=True, help="Emit it with its site again.")
@click.option("--deactivate", is_flag=True, help="Stop emitting it.")
def feed_change(target: Path, uri: str, activate: bool, deactivate: bool) -> None:
    """Activate or deactivate feed URI."""
    active = _active(activate, deactivate)
    if active is None:
        raise click.UsageError("nothing to change: give --activate or --deactivate")
    f = _run(target, lambda st: st.change_feed(uri, active=active))
    click.echo(f"feed {f.uri}: {'active' if f.active else 'inactive'}")


@feed.command("deactivate")
@_TARGET
@click.argument("uri")
def feed_deactivate(target: Path, uri: str) -> None:
    """Stop emitting feed URI."""
    f = _run(target, lambda st: st.change_feed(uri, active=False))
    click.echo(f"feed {f.uri} deactivated")


@rss.group("implied")
def implied() -> None:
    """Add or remove implied pages of a feed."""


@implied.command("add")
@_TARGET
@click.argument("feed_uri", metavar="FEED")
@click.argument("url")
def implied_add(target: Path, feed_uri: str, url: str) -> None:
    """Add URL as an implied page of FEED."""
    f = _run(target, lambda st: st.add_implied_page(feed_uri, url))
    click.echo(f"feed {f.uri}: {len(f.implied_pages)} implied pages")


@implied.command("remove")
@_TARGET
@click.argument("feed_uri", metavar="FEED")
@click.argument("url")
def implied_remove(target: Path, feed_uri: str, url: str) -> None:
    """Remove URL from the implied pages of FEED."""
    f = _run(target, lambda st: st.remove_implied_page(feed_uri, url))
    click.echo(f"feed {f.uri}: {len(f.implied_pages)} implied pages")
