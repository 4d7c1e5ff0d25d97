"""What the post-acquisition commands (``extract``, ``stats``, ``crawllog to-warc``)
share in talking to their user:

* :func:`fail`: an error that, with ``--json``, also prints ``{"error": MESSAGE,
  "exit_status": 1}`` on stdout (the message goes to stderr as usual, ``Error: …``,
  exit status 1), so that a script reading stdout always gets valid JSON;
* :func:`unique_regular_files`: inputs checked before any work (missing, folder,
  pipe) and the same file given twice read once;
* :class:`StatusLine`: ``--progress`` on stderr;
* :func:`open_collection`: a collection folder, or a clean error;
* :func:`resolve_overrides`: ``--resolve HOST=IP`` (or ``HOST:IP``) options (``webark
  proxy``, ``webark serve --record``).
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable
from typing import NoReturn

import click

from webark.crawl.job import resolve_item
from webark.index.collection import Collection, CollectionError


def resolve_overrides(items: Iterable[str]) -> dict[str, str]:
    """``HOST=IP`` or ``HOST:IP`` options (as ``webark crawl --resolve``) as
    ``{host: ip}`` (:func:`webark.crawl.job.resolve_item`).

    Raises:
        click.BadParameter: an item has no separator, or its address is no IPv4/IPv6
            address.
    """
    overrides = {}
    for item in items:
        try:
            host, ip = resolve_item(item)
            overrides[host] = str(ipaddress.ip_address(ip.strip("[]")))
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--resolve") from None
    return overrides


def open_collection(path: str) -> Collection:
    """The collection at ``path``.

    Raises:
        click.ClickException: not a collection, or a bad ``collection.toml``.
    """
    try:
        return Collection.open(path)
    except CollectionError as exc:
        raise click.ClickException(str(exc)) from exc


def fail(message: str, *, as_json: bool) -> NoReturn:
    """Stop the command with ``message`` (exit status 1).

    Raises:
        click.ClickException: always (click prints ``Error: message`` on stderr).
    """
    if as_json:
        click.echo(json.dumps({"error": message, "exit_status": 1}))
    raise click.ClickException(message)


def unique_regular_files(
    paths: Iterable[str], *, what: str, as_json: bool, dirs_ok: bool = False
) -> list[str]:
    """``paths`` without repeats (the same file given twice, by any name, is read
    once; a warning says so), each checked to be a regular file.

    Args:
        paths: file paths as given.
        what: what the files are, for messages (``"crawl.log"``, ``"WARC/ARC file"``).
        as_json: report errors as JSON too (:func:`fail`).
        dirs_ok: folders are passed through (the command walks them).

    Raises:
        click.ClickException: a path is missing, a directory, or not a regular file
            (a FIFO or ``<(…)`` process substitution: the tools read their inputs
            more than once).
    """
    seen: dict[tuple[int, int], str] = {}
    out: list[str] = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError as e:
            fail(f"{p}: cannot read {what}: {e.strerror or e}", as_json=as_json)
        if dirs_ok and os.path.isdir(p):
            out.append(p)
            continue
        if not os.path.isfile(p):
            kind = "is a directory" if os.path.isdir(p) else "is not a regular file (a pipe?)"
            fail(f"{p} {kind}: give a {what} saved as a file (inputs are read more than "
                 "once)", as_json=as_json)
        key = (st.st_dev, st.st_ino)
        if key in seen:
            click.echo(f"warning: {p} is the same file as {seen[key]}: read once", err=True)
            continue
        seen[key] = p
        out.append(p)
    return out


class StatusLine:
    """A one-line progress report on stderr, rewritten in place (``\\r``) at most every
    0.2 s, ended with a newline by :meth:`done`; silent when ``enabled`` is False.
    Used by ``webark extract`` and ``webark crawllog to-warc`` (``--progress``)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._last = 0.0
        self._shown = False

    def show(self, text: str, *, force: bool = False) -> None:
        import time

        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        self._shown = True
        click.echo(f"\r{text}\x1b[K", err=True, nl=False)

    def done(self) -> None:
        if self.enabled and self._shown:
            click.echo("", err=True)


def archive_files(inputs: Iterable[str], *, as_json: bool) -> list[str]:
    """The (W)ARC files named by ``inputs`` (files, folders walked, collection folders:
    :func:`webark.tools.input_files.archive_inputs`), each once, for the commands that
    read WARCs (``stats``, ``extract``).

    Raises:
        click.ClickException (through :func:`fail`): an input is missing or no regular
            file, a collection cannot be read, or no (W)ARC file was found.
    """
    from webark.index.collection import CollectionError
    from webark.tools.input_files import archive_inputs

    given = unique_regular_files(inputs, what="WARC/ARC file", as_json=as_json, dirs_ok=True)
    try:
        files = archive_inputs(given)
    except (OSError, CollectionError) as e:
        fail(str(e), as_json=as_json)
    if not files:
        fail(f"no WARC/ARC files found in {', '.join(given)} (looked for *.warc, "
             "*.warc.gz, *.warc.zst, *.arc, *.arc.gz)", as_json=as_json)
    return files
