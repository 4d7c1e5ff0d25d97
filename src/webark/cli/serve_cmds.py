"""``webark serve COLLECTIONS_DIR``: replay and the resolution API (CDX server) over HTTP
(uvicorn).

The work is done by :func:`webark.apps.replay.app.create_server` (replay, which hands
``/{coll}/cdx``, ``/{coll}/timemap/…`` and ``/openapi.json`` to
:func:`webark.apps.cdx.api.create_app`); this module parses the options, binds the
socket(s), prints the URLs to open and runs uvicorn.

Sockets: ``TCP_NODELAY`` is set on the listening socket (accepted connections inherit
it), otherwise a keep-alive response written as headers + body waits ~40 ms for the
client's delayed ACK (Nagle) — the stall BASELINE.md measured in pywb. And uvicorn runs
with :mod:`webark.apps.http_protocol`, which sends such a response in one write.

Workers (``--workers N``, N > 1): N forked processes, each with its *own* listening
socket on the same port (``SO_REUSEPORT``), so the kernel spreads connections over them
by a hash of the client's address. uvicorn's own ``--workers`` shares one socket, and
then the first worker to wake accepts a whole burst of keep-alive connections: measured
here, 16 keep-alive clients all landed on one of two workers (one core busy, one idle).
The parent only reserves the port, prints the URL, restarts a worker that dies and
forwards Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from typing import Any

import click


def _socket(host: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _bind(host: str, port: int, *, reuseport: bool = False, listen: bool = True) -> socket.socket:
    sock = _socket(host)
    if reuseport:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc
    if listen:
        sock.listen(2048)
    return sock


def _log_config(log_level: str, access_log: bool) -> dict[str, Any]:
    """uvicorn's logging configuration with the server's messages at ``log_level`` and
    the access log (logger ``uvicorn.access``, level INFO) on when asked: uvicorn gives
    both loggers its ``log_level``, so at the default ``warning`` the access log it was
    asked for printed nothing."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    level = log_level.upper()
    config["loggers"]["uvicorn"]["level"] = level
    config["loggers"]["uvicorn.error"] = {**config["loggers"].get("uvicorn.error", {}),
                                          "level": level}
    config["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    return config


def _run_one(sock: socket.socket, app_args: dict[str, Any], common: dict[str, Any]) -> None:
    import uvicorn

    from webark.apps.http_protocol import http_protocol
    from webark.apps.replay.app import create_server
    from webark.core.malloc import limit_arenas

    limit_arenas()  # before any thread: flat RSS under long loads (core.malloc)
    app = create_server(**app_args)
    config = uvicorn.Config(app, http=http_protocol(), **common)
    uvicorn.Server(config).run(sockets=[sock])


def _worker(host: str, port: int, app_args: dict[str, Any], common: dict[str, Any]) -> int:
    """Fork one worker process with its own SO_REUSEPORT socket; returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sock = _bind(host, port, reuseport=True)
        _run_one(sock, app_args, common)
    except BaseException as exc:  # report and leave the child without running parent code
        if not isinstance(exc, SystemExit | KeyboardInterrupt):
            print(f"webark serve: worker {os.getpid()} failed: {exc!r}", file=sys.stderr)
            code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _supervise(
    host: str, port: int, workers: int, app_args: dict[str, Any], common: dict[str, Any]
) -> None:
    pids = {_worker(host, port, app_args, common) for _ in range(workers)}
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for p in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGTERM)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    last_restart = 0.0
    while pids:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        pids.discard(pid)
        if not stopping:
            click.echo(f"webark serve: worker {pid} exited ({status}); starting another", err=True)
            if time.monotonic() - last_restart < 1.0:
                time.sleep(1.0)
            last_restart = time.monotonic()
            pids.add(_worker(host, port, app_args, common))


@click.command("serve")
@click.argument("collections_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
    help="Port (0: any free port; the URL printed says which).",
)  # fmt: skip
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(1, 64),
    help="Server processes, each with its own socket on the port (about one per core).",
)  # fmt: skip
@click.option(
    "--replay-base", default=None,
    help="Base URL of the replay app for Memento links (default: this server).",
)  # fmt: skip
@click.option(
    "--access-rules", "access_rules", default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Access rules (YAML: SURT prefix -> allow / block (451) / exclude (404), with "
    "optional capture-time range or embargo) for every collection; a collection may "
    "add its own access-rules.yaml.",
)  # fmt: skip
@click.option(
    "--rewrite-budget", "rewrite_budget_mib", default=32, show_default=True,
    type=click.IntRange(1, 65536), metavar="MIB",
    help="MiB of large pages (over 1 MiB) each worker rewrites or sends at once; more "
    "wait their turn. Bounds memory when many clients ask for big pages; small pages "
    "never wait.",
)  # fmt: skip
@click.option(
    "--rewrite-limit", "rewrite_limit_mib", default=20, show_default=True,
    type=click.IntRange(1, 65536), metavar="MIB",
    help="Largest page, stylesheet or script rewritten, in MiB once its gzip/br "
    "Content-Encoding is undone; a larger one is sent as archived, not rewritten "
    "(header X-Webark-Not-Rewritten). Stops a small gzip bomb from inflating to "
    "gigabytes in the server.",
)  # fmt: skip
@click.option(
    "--access-log/--no-access-log", default=False, show_default=True,
    help="One line per request on stdout (client, request line, status), whatever "
    "--log-level is.",
)  # fmt: skip
@click.option(
    "--proxy-headers/--no-proxy-headers", default=False, show_default=True,
    help="Trust X-Forwarded-Proto/For (behind a reverse proxy; affects Memento links).",
)  # fmt: skip
@click.option(
    "--record", is_flag=True,
    help="Record mode (the manual crawler): /{coll}/record/{url} fetches the live page, "
    "archives it into the collection (indexed at once) and serves it rewritten so that "
    "what it loads and links to is recorded too. One worker only.",
)  # fmt: skip
@click.option("--allow-private", is_flag=True,
              help="Record mode may fetch private and loopback addresses.")  # fmt: skip
@click.option("--resolve", "resolve", multiple=True, metavar="HOST:IP",
              help="Record mode: connect to IP for HOST (like curl --resolve); "
                   "repeatable.")  # fmt: skip
@click.option("--resolve-only", is_flag=True,
              help="Record mode: look up no name through the system resolver (only "
                   "--resolve hosts and IP literals are fetched).")  # fmt: skip
@click.option(
    "--log-level", default="warning", show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)  # fmt: skip
def serve(
    collections_dir: str,
    host: str,
    port: int,
    workers: int,
    replay_base: str | None,
    access_rules: str | None,
    rewrite_budget_mib: int,
    rewrite_limit_mib: int,
    access_log: bool,
    proxy_headers: bool,
    record: bool,
    allow_private: bool,
    resolve: tuple[str, ...],
    resolve_only: bool,
    log_level: str,
) -> None:
    """Serve the collections in COLLECTIONS_DIR for replay in a browser and through the
    resolution API. Open the printed URL: the home page lists the collections and has a
    URL search box. Nothing is ever fetched from the live web, except with --record.

    \b
    Replay URLs (Wayback/pywb style; {url} as archived, query string included):
      /{coll}/                            collection page, search
      /{coll}/*/{url}                     captures of {url} (calendar by year/month/day)
      /{coll}/*/{url}*   /{coll}/*/*.host  URLs below a prefix / in a domain
      /{coll}/{timestamp}/{url}           the capture closest to timestamp (1-14 digits,
                                          UTC; redirects to the capture's own timestamp)
      /{coll}/{timestamp}id_/{url}        the archived bytes untouched (also im_ js_ cs_
                                          if_ oe_ mp_ modifiers, pywb's)
      /{coll}/{url}                       Memento TimeGate (Accept-Datetime; latest)
      /{coll}/diff/{ts1}/{ts2}/{url}      text diff of two captures of a page
      /{coll}/record/{url}                with --record: fetch the live page, archive
                                          it, serve it rewritten (pywb's record mode)
      /{coll}/patch/{url}                 with --record: the archived page if there is
                                          one, else recorded (patch mode)
    Resolution API: /{coll}/cdx?url=... (CDX server), /{coll}/timemap/link/{url}
    (Memento TimeMap), /openapi.json.

    \b
    A URL without a capture of its own gets a near miss of the same path and type if
    one answers it (cache-buster, tracking or version parameters, extra parameters of a
    static page, a folder's index page; named in the X-Webark-Fuzzy-Match header, see
    docs/replay-fuzzy.md). POST and PUT requests of replayed pages are answered by the
    capture of the same method and body. WebSockets are refused.

    \b
    webark serve archive/                      # http://127.0.0.1:8080/
    webark serve archive/ --port 0 --workers 2 --access-rules rules.yaml
    curl 'http://127.0.0.1:8080/demo/cdx?url=example.com/*&output=json&limit=5'
    """
    from webark.apps.cdx.sources import DirectoryCollections

    root = os.path.abspath(collections_dir)
    if os.path.exists(os.path.join(root, "collection.toml")):
        parent = os.path.dirname(root)
        raise click.UsageError(
            f"{collections_dir} is a collection; give the folder that holds it "
            f"(webark serve {parent}) — its collections are served side by side"
        )
    names = DirectoryCollections(root).names()
    if access_rules:
        from webark.apps.replay.access import AccessConfig

        try:  # report a bad rules file now, not in each worker
            AccessConfig(access_rules)
        except (ValueError, OSError) as exc:
            raise click.ClickException(f"--access-rules {access_rules}: {exc}") from exc
        access_rules = os.path.abspath(access_rules)
    if (allow_private or resolve or resolve_only) and not record:
        raise click.UsageError("--allow-private, --resolve and --resolve-only go with --record")
    if record and workers > 1:
        raise click.UsageError("--record runs in one worker (each would write its own WARCs)")
    record_settings = None
    if record:
        from webark.apps.replay.record import RecordSettings
        from webark.cli.user_io import resolve_overrides

        record_settings = RecordSettings(allow_private=allow_private,
                                         resolve=resolve_overrides(resolve),
                                         resolve_only=resolve_only)  # fmt: skip
    app_args: dict[str, Any] = {
        "collections_dir": root, "replay_base": replay_base, "access_rules": access_rules,
        "rewrite_budget": rewrite_budget_mib << 20, "rewrite_limit": rewrite_limit_mib << 20,
        "record": record_settings,
    }  # fmt: skip
    common: dict[str, Any] = {
        "log_config": _log_config(log_level, access_log),
        "log_level": None,  # the levels are in log_config (uvicorn would reset them)
        "access_log": access_log,
        "timeout_graceful_shutdown": 5,
        "proxy_headers": proxy_headers,
        # no "Server: uvicorn" beside the archived Server header of an id_ memento
        "server_header": False,
    }
    if workers == 1:
        sock = _bind(host, port)
    else:
        # a plain bind first: fails if anything (another `webark serve` too) has the port,
        # which an SO_REUSEPORT bind would silently share; then reserve it for the
        # workers (bound with SO_REUSEPORT, not listening: gets no connections)
        probe = _bind(host, port, listen=False)
        port = probe.getsockname()[1]
        probe.close()
        sock = _bind(host, port, reuseport=True, listen=False)
    real_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    plural = "s" if workers > 1 else ""
    base = f"http://{shown}:{real_port}/"
    click.echo(
        f"webark: serving {len(names)} collection(s) from {root} at {base}"
        f" ({workers} worker{plural}; Ctrl-C to stop)"
    )
    for name in names[:20]:
        click.echo(f"  replay {name}: {base}{name}/   (captures of a URL: {base}{name}/*/URL)")
        if record:
            click.echo(f"  record {name}: {base}{name}/record/URL")
    if len(names) > 20:
        click.echo(f"  … and {len(names) - 20} more collections: {base}")
    sys.stdout.flush()
    if workers == 1:
        _run_one(sock, app_args, common)
        return
    try:
        _supervise(host, real_port, workers, app_args, common)
    finally:
        sock.close()
