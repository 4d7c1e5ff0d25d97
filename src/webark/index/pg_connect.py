"""Connections to PostgreSQL for the index store and the search backend (psycopg 3).

psycopg is an optional dependency (``pip install 'webark[postgres]'``): it is imported
only when a collection asks for PostgreSQL, and its absence is reported with the
command that installs it (:class:`PostgresUnavailable`).

**URLs and passwords.** A collection names its server with a libpq connection URL,
``postgresql://[user@]host[:port]/dbname[?param=value…]``, kept in ``collection.toml``,
a file the collection shares with whoever can read the folder. A password never goes
there: :func:`check_url` refuses a URL with a password (in the user part or as a
``password=`` parameter). libpq finds it by its standard means instead — the password
file (``~/.pgpass``, or the file named by ``PGPASSFILE``, mode 0600), ``PGPASSWORD``, or
a connection service file (``?service=NAME``: ``~/.pg_service.conf`` or
``PGSERVICEFILE``) — or needs none (peer or certificate authentication).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from webark.core.errors import ConfigError
from webark.index.source import IndexUnavailable

if TYPE_CHECKING:
    import psycopg

INSTALL_HINT = "pip install 'webark[postgres]'"
PASSWORD_HELP = (
    "put the password in ~/.pgpass (or the file named by PGPASSFILE, mode 0600), in "
    "PGPASSWORD, or in a service file (?service=NAME), never in collection.toml"
)
#: Longest PostgreSQL identifier, in bytes (NAMEDATALEN - 1).
MAX_IDENTIFIER = 63
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PostgresConfigError(ConfigError, ValueError):
    """A connection URL or schema name that cannot be used (not a ``postgresql://``
    URL, a password in it, a bad schema name)."""


class PostgresUnavailable(IndexUnavailable):
    """PostgreSQL cannot be used: psycopg is not installed, or the server cannot be
    reached (the resolution API answers 503)."""


class DuplicateKey(PostgresUnavailable):
    """A write broke a unique constraint (another writer committed the same key
    first)."""


def check_url(url: str) -> str:
    """``url`` stripped, if it is a ``postgresql://`` (or ``postgres://``) URL without a
    password.

    Raises:
        PostgresConfigError: another scheme, or a password in the URL (see the module
            docstring for where passwords go).
    """
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise PostgresConfigError(f"PostgreSQL URL {url!r}: {exc}") from None
    if parts.scheme not in ("postgresql", "postgres"):
        raise PostgresConfigError(
            f"PostgreSQL URL {url!r}: expected postgresql://[user@]host[:port]/dbname"
        )
    has_password = "@" in parts.netloc and ":" in parts.netloc.rsplit("@", 1)[0]
    if has_password or any(k == "password" for k, _ in parse_qsl(parts.query)):
        raise PostgresConfigError(
            f"PostgreSQL URL {redact(url)!r} holds a password: {PASSWORD_HELP}"
        )
    return url


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages)."""
    url = re.sub(r"(://[^/@:]*):[^/@]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


def check_schema(name: str) -> str:
    """``name`` if it is a lowercase unquoted PostgreSQL identifier (``[a-z_][a-z0-9_]*``,
    at most 63 bytes).

    Raises:
        PostgresConfigError: otherwise.
    """
    if not _SCHEMA_NAME.match(name):
        raise PostgresConfigError(
            f"PostgreSQL schema {name!r}: use lowercase letters, digits and _ "
            f"(starting with a letter or _), at most {MAX_IDENTIFIER} characters"
        )
    return name


def schema_for(collection: str) -> str:
    """The default schema of a collection: ``webark_`` + its name lowercased, other
    characters than ``[a-z0-9_]`` made ``_``, cut to 63 bytes."""
    base = re.sub(r"[^a-z0-9_]", "_", collection.lower())
    return ("webark_" + base)[:MAX_IDENTIFIER]


def psycopg_module() -> ModuleType:
    """The ``psycopg`` module, imported on first use.

    Raises:
        PostgresUnavailable: psycopg is not installed (the message names the extra).
    """
    try:
        import psycopg
    except ImportError as exc:
        raise PostgresUnavailable(
            f"PostgreSQL support is not installed ({exc}); install it with: {INSTALL_HINT}"
        ) from None
    return psycopg


def connect(
    url: str, *, schema: str | None = None, timeout: float = 10.0
) -> psycopg.Connection[Any]:
    """An autocommit connection to ``url`` (checked by :func:`check_url`) whose
    ``search_path`` is ``schema`` (if given), named ``webark`` in ``pg_stat_activity``.

    Raises:
        PostgresConfigError: a bad URL.
        PostgresUnavailable: psycopg missing, or the server refused or cannot be reached
            (the message has no password).
    """
    pg = psycopg_module()
    url = check_url(url)
    try:
        conn = pg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout)),
                          application_name="webark")  # fmt: skip
        if schema is not None:
            conn.execute(f"SET search_path TO {check_schema(schema)}")
    except pg.Error as exc:
        raise PostgresUnavailable(f"PostgreSQL {redact(url)}: {exc}".strip()) from exc
    return conn


class PgDb:
    """Connections to one PostgreSQL schema for many threads: one autocommit connection
    per thread (opened on first use, ``search_path`` set to ``schema``); a connection
    that failed (server restart, network) is dropped and the next call opens a new one.

    Args:
        url: libpq URL without a password (:func:`check_url`).
        schema: the schema (:func:`check_schema`).
        timeout: seconds to wait when connecting.

    Raises:
        PostgresUnavailable: psycopg is not installed.
        PostgresConfigError: a bad URL or schema name.
    """

    def __init__(self, url: str, schema: str, *, timeout: float = 10.0):
        self.url = check_url(url)
        self.schema = check_schema(schema)
        self.timeout = timeout
        self.pg = psycopg_module()
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PgDb({redact(self.url)!r}, {self.schema!r})"

    def conn(self) -> Any:
        """This thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed:
            return conn
        conn = connect(self.url, schema=self.schema, timeout=self.timeout)
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def _error(self, exc: BaseException) -> PostgresUnavailable:
        """The error to raise for a psycopg error; drops this thread's connection when
        the error is about the connection."""
        pg = self.pg
        where = f"PostgreSQL {redact(self.url)} ({self.schema})"
        if isinstance(exc, pg.errors.UniqueViolation):
            return DuplicateKey(f"{where}: {str(exc).splitlines()[0]}")
        if isinstance(exc, (pg.OperationalError, pg.InterfaceError)):
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
                self._local.conn = None
        return PostgresUnavailable(f"{where}: {exc}")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor inside one transaction on this thread's connection; psycopg errors
        become :class:`PostgresUnavailable` (a unique violation :class:`DuplicateKey`)
        and the transaction is rolled back."""
        conn = self.conn()
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        except self.pg.Error as exc:
            raise self._error(exc) from exc

    def fetch(self, sql: str, args: Sequence[object] | Mapping[str, object] = ()) -> list[Any]:
        """All rows of one autocommit statement."""
        try:
            return list(self.conn().execute(sql, args).fetchall())
        except self.pg.Error as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        """Close every connection (of any thread)."""
        with self._lock:
            for c in self._all:
                with contextlib.suppress(Exception):
                    c.close()
            self._all.clear()
        self._local = threading.local()
