"""``webark proxy``: the archiving proxy (:mod:`webark.apps.proxy`); this module only
parses the options and starts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path

import click

from webark.apps.control.app import new_token
from webark.apps.proxy.ca import CertAuthority
from webark.apps.proxy.run import DEFAULT_CA_FILE, ProxySettings, run_proxy
from webark.apps.proxy.server import ArchivingProxy, ProxyConfig
from webark.cli.user_io import resolve_overrides
from webark.core.errors import WebarkError
from webark.core.malloc import limit_arenas
from webark.core.private_file import write_private_json
from webark.fetch.limits import FetchLimits

PROXY_INFO = "proxy-{port}.json"
"""File (mode 0600) in the job or collection folder with the running proxy's ``url``,
``port``, ``pid`` and the ``token`` of ``GET /status``; removed when it stops. Named by
port: several proxies may record into one collection, each with its own file."""


@click.group("proxy", invoke_without_command=True)
@click.option("--job", "job_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Job folder to record into (warcs/, logs/crawl.log, state/).")
@click.option("--collection", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Collection folder (DIR/NAME) to record into, indexed as it goes.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int,
              help="Port to listen on (0: any free port, printed).")
@click.option("--prefix", default="WEBARK", show_default=True, help="Default WARC prefix.")
@click.option("--dedup/--no-dedup", default=True, show_default=True,
              help="Write revisit records for payloads already archived.")
@click.option("--allow-private", is_flag=True,
              help="Allow upstream connections to private and loopback addresses.")
@click.option("--compression", type=click.Choice(["gzip", "zstd", "none"]), default="gzip",
              show_default=True)
@click.option("--max-warc-size", default=10**9, show_default=True, type=int,
              help="Rotate WARC files at this many bytes.")
@click.option("--connect-timeout", default=20.0, show_default=True, type=float,
              help="Seconds to connect upstream (more: 504).")
@click.option("--read-timeout", default=60.0, show_default=True, type=float,
              help="Seconds to wait for upstream bytes (none before the head: 504).")
@click.option("--ca-file", type=click.Path(dir_okay=False, path_type=Path),
              default=str(DEFAULT_CA_FILE), show_default=True,
              help="CA of HTTPS man-in-the-middle (made on first use, mode 0600).")
@click.option("--resolve", "resolve", multiple=True, metavar="HOST:IP",
              help="Connect to IP for HOST (like curl --resolve); repeatable.")
@click.option("--resolve-only", is_flag=True,
              help="Look up no name through the system resolver (only --resolve hosts "
                   "and IP literals are fetched).")
@click.pass_context
def proxy(ctx: click.Context, job_dir: Path | None, collection: Path | None, host: str,
          port: int, prefix: str, dedup: bool, allow_private: bool, compression: str,
          max_warc_size: int, connect_timeout: float, read_timeout: float,
          ca_file: Path, resolve: tuple[str, ...], resolve_only: bool) -> None:  # fmt: skip
    """Run an archiving HTTP/1.1 proxy: every exchange relayed is written to WARC
    (response + request records, revisits for known payloads) and crawl.log.

    Point a browser or client at it (curl -x http://127.0.0.1:8000 URL); for HTTPS
    the client must trust the proxy's CA (`webark proxy ca`). Upstream
    failures answer 502 (504 on timeouts) and write nothing. Stops on SIGTERM/SIGINT,
    closing its WARCs.
    """
    if ctx.invoked_subcommand is not None:
        return
    if (job_dir is None) == (collection is None):
        raise click.UsageError("give --job DIR or --collection DIR (one of them)")
    token = new_token()
    overrides = resolve_overrides(resolve)
    settings = ProxySettings(
        job_dir=job_dir, collection=collection, prefix=prefix, dedup=dedup,
        allow_private=allow_private, compression=compression,  # type: ignore[arg-type]
        max_size=max_warc_size,
        server=ProxyConfig(host=host, port=port, status_token=token, limits=FetchLimits(
            connect_timeout=connect_timeout, read_timeout=read_timeout,
            total_timeout=3600.0)),
        ca_file=ca_file.expanduser(), resolve=overrides, resolve_only=resolve_only,
    )  # fmt: skip
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    where = collection or job_dir
    assert where is not None
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"webark proxy: warning: listening on {host}, not loopback: anyone who "
                   f"reaches it can record through it into {where}", err=True)  # fmt: skip
    written: list[Path] = []

    def ready(p: ArchivingProxy) -> None:
        # the token goes to a 0600 file, not to the console (logs keep consoles)
        url = f"http://{host}:{p.port}/"
        info = where / PROXY_INFO.format(port=p.port)
        written.append(info)
        write_private_json(info, {"url": url, "port": p.port, "token": token,
                                  "pid": os.getpid()})  # fmt: skip
        click.echo(f"webark proxy: recording into {where} at {url} "
                   f"(GET /status with the bearer token in {info}, mode 0600)")

    limit_arenas()  # before any thread: flat RSS under long loads (core.malloc)
    try:
        asyncio.run(run_proxy(settings, ready))
    except (WebarkError, ValueError, OSError) as e:
        raise click.ClickException(str(e)) from e
    finally:
        for info in written:
            with contextlib.suppress(FileNotFoundError):
                info.unlink()


@proxy.command("ca")
@click.option("--ca-file", type=click.Path(dir_okay=False, path_type=Path),
              default=str(DEFAULT_CA_FILE), show_default=True,
              help="The proxy's CA (made when missing, mode 0600).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the certificate here instead of standard output.")
def ca(ca_file: Path, output: Path | None) -> None:
    """Print the proxy's CA certificate (PEM) for clients to trust: curl --cacert,
    a browser's certificate authorities. The private key is never printed."""
    try:
        pem = CertAuthority(ca_file.expanduser()).cert_pem()
    except (ValueError, OSError) as e:
        raise click.ClickException(str(e)) from e
    if output is not None:
        output.write_bytes(pem)
    else:
        click.echo(pem.decode("ascii"), nl=False)
