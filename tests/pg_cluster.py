"""A throwaway PostgreSQL cluster for the tests and benchmarks: Debian's postgresql-15
binaries, ``initdb`` into a new temporary folder, the server on 127.0.0.1 and a free
port (its unix socket in the same folder), stopped by its own PID and deleted.

PostgreSQL refuses to run as root: when the tests run as root (CI), ``initdb`` and
``postgres`` run as the ``postgres`` user the Debian package creates (``setpriv``, which
execs, so the PID we hold is the server's), in a folder owned by that user. Clients
connect as the role ``webark`` over TCP with a password (scram-sha-256), which they find
in a password file written beside the cluster (``PGPASSFILE``), as a collection's users
would: no password in any URL. The superuser connects over the unix socket (trust).

Install the server with ``WEBARK_POSTGRES=1 bash scripts/setup.sh`` (as ``.ci/run``
does); :func:`find_bindir` returns None when it is missing.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

INSTALL = "WEBARK_POSTGRES=1 bash scripts/setup.sh   (Debian's postgresql-15)"
ROLE, DATABASE, SUPERUSER = "webark", "webark", "webark_admin"


def find_bindir() -> Path | None:
    """The folder of ``initdb`` and ``postgres`` (``/usr/lib/postgresql/N/bin``, the
    newest), or None."""
    def version(p: str) -> int:
        v = Path(p).parts[4]
        return int(v) if v.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """One running throwaway cluster (see the module docstring).

    Args:
        durable: keep PostgreSQL's durability settings (fsync on: benchmarks); the tests
            run with ``fsync=off`` (they kill clients, never the server).

    Attributes:
        url: ``postgresql://webark@127.0.0.1:PORT/webark`` (no password).
        passfile: the password file clients need (``PGPASSFILE``).
        pid: the server's PID.
    """

    def __init__(self, *, durable: bool = False) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(f"PostgreSQL is not installed: {INSTALL}")
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="webark-pg-"))
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._as = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
        data = self.dir / "data"
        subprocess.run([*self._as, str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER,
                        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                        "--locale=C", "--no-sync", "--no-instructions"],
                       check=True, capture_output=True)  # fmt: skip
        self.settings = ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"]
        if not durable:
            self.settings += ["-c", "fsync=off", "-c", "synchronous_commit=off",
                              "-c", "full_page_writes=off"]  # fmt: skip
        self.log = self.dir / "server.log"
        self._start()
        try:
            self._psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{self.password}'",
                       f"CREATE DATABASE {DATABASE} OWNER {ROLE}")  # fmt: skip
        except BaseException:
            self.stop()
            raise
        self.passfile = self.dir / "pgpass"
        self.passfile.write_text(f"127.0.0.1:{self.port}:*:{ROLE}:{self.password}\n")
        self.passfile.chmod(0o600)
        self.url = f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def _start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*self._as, str(self.bindir / "postgres"), "-D", str(self.dir / "data"),
                 "-p", str(self.port), "-k", str(self.dir), *self.settings],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        self.pid = self.proc.pid
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def restart(self) -> None:
        """Stop the server (fast shutdown: every client connection is cut) and start it
        again on the same port and data."""
        self._shutdown()
        self._start()

    def _psql(self, *statements: str, db: str = "postgres") -> str:
        out = ""
        for sql in statements:
            res = subprocess.run(
                [str(self.bindir / "psql"), "-X", "-q", "-At", "-h", str(self.dir), "-p",
                 str(self.port), "-U", SUPERUSER, "-d", db, "-c", sql],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if res.returncode != 0:
                raise RuntimeError(f"psql {sql!r}: {res.stderr}")
            out += res.stdout
        return out

    def sql(self, statement: str) -> str:
        """Run one statement as the superuser in the ``webark`` database; its output
        (unaligned, tuples only)."""
        return self._psql(statement, db=DATABASE)

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited: {self.log.read_text(errors='replace')}")
            res = subprocess.run([str(self.bindir / "pg_isready"), "-q", "-h", str(self.dir),
                                  "-p", str(self.port)], capture_output=True)  # fmt: skip
            if res.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"postgres did not start: {self.log.read_text(errors='replace')}")

    def env(self) -> dict[str, str]:
        """What a client process needs in its environment (the password file)."""
        return {"PGPASSFILE": str(self.passfile)}

    @contextlib.contextmanager
    def password_file(self) -> Iterator[None]:
        """``PGPASSFILE`` set to this cluster's password file for the ``with`` block (and
        the processes started in it), then set back."""
        before = os.environ.get("PGPASSFILE")
        os.environ["PGPASSFILE"] = str(self.passfile)
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("PGPASSFILE", None)
            else:
                os.environ["PGPASSFILE"] = before

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the server's own PID), then delete the folder."""
        self._shutdown()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _shutdown(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
