"""``collection.toml``: a collection's configuration (TOML, read with :mod:`tomllib`).

Written by ``webark collection init``; missing keys take these defaults::

    [collection]
    format = 1                # version of this layout
    name = "NAME"
    created = "2026-11-30T03:00:00Z"

    [index]
    store = "sqlite"          # "sqlite" | "cdxj" | "postgres"
    compat = "cdxj-indexer"   # indexer flavour (webark.cdx.indexer): "cdxj-indexer" | "pywb"
    post_append = true        # POST/PUT captures keyed by method and body (?__wb_method=post&…,
                              # as pywb's wb-manager does): replay finds a POST by its body
    # store = "postgres" only:
    url = "postgresql://webark@db.example.org:5432/archive"   # never with a password
    schema = "webark_NAME"    # the collection's PostgreSQL schema

    [search]
    backend = "sqlite"        # full-text search index: "sqlite" (search/search.sqlite3)
                              # or "postgres" (default when store = "postgres")
    url = "…"                 # backend = "postgres" with another store: its server
    schema = "…"              #   and schema (default: those of [index])

    [warcs]
    add = "copy"              # default of `collection add`: "copy" | "link" | "in-place"
    locations = []            # more folders or URL prefixes where WARCs may be found

An unknown value is an error (:class:`CollectionError`), and so is a PostgreSQL URL with
a password in it (:func:`webark.index.pg_connect.check_url`: the file is shared with the
collection; libpq finds passwords in ``~/.pgpass``/``PGPASSFILE``, ``PGPASSWORD`` or a
service file).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from webark.core.errors import StorageError
from webark.index.pg_connect import PostgresConfigError, check_schema, check_url, schema_for

AddMode = Literal["copy", "link", "in-place"]
StoreKind = Literal["sqlite", "cdxj", "postgres"]
SearchBackend = Literal["sqlite", "postgres"]
Compat = Literal["cdxj-indexer", "pywb"]

CONFIG_NAME = "collection.toml"
LAYOUT_VERSION = 1


class CollectionError(StorageError):
    """A collection operation that cannot be done (no collection there, bad
    configuration, a name clash between two different WARCs, …)."""


def _s(v: str) -> str:
    """A TOML basic string."""
    out = v.replace("\\", "\\\\").replace('"', '\\"')
    for c in "\b\t\n\f\r":
        out = out.replace(c, f"\\u{ord(c):04x}")
    return f'"{out}"'


@dataclass
class CollectionConfig:
    """The contents of ``collection.toml`` (see the module docstring).

    ``url``/``schema``: the PostgreSQL index of ``store = "postgres"`` (``schema`` ''
    means :func:`~webark.index.pg_connect.schema_for` the name). ``search_backend`` ''
    means the default (``postgres`` with a PostgreSQL store, else ``sqlite``);
    ``search_url``/``search_schema`` '' mean those of the index.
    """

    name: str
    created: str = ""
    store: StoreKind = "sqlite"
    compat: Compat = "cdxj-indexer"
    post_append: bool = True
    add_mode: AddMode = "copy"
    locations: list[str] = field(default_factory=list)
    url: str = ""
    schema: str = ""
    search_backend: str = ""
    search_url: str = ""
    search_schema: str = ""

    @property
    def pg_schema(self) -> str:
        """The index's PostgreSQL schema (configured, or derived from the name)."""
        return self.schema or schema_for(self.name)

    @property
    def search(self) -> SearchBackend:
        """The search backend in force."""
        if self.search_backend:
            return self.search_backend  # type: ignore[return-value]
        return "postgres" if self.store == "postgres" else "sqlite"

    def search_pg(self) -> tuple[str, str]:
        """(URL, schema) of a PostgreSQL search backend.

        Raises:
            CollectionError: no URL (neither ``[search] url`` nor a PostgreSQL index).
        """
        url = self.search_url or (self.url if self.store == "postgres" else "")
        if not url:
            raise CollectionError(
                '[search] backend = "postgres" needs [search] url (or [index] store = '
                '"postgres" with its url)'
            )
        return url, self.search_schema or self.pg_schema

    def to_toml(self) -> str:
        """The file text (hand-written TOML: the standard library reads TOML only)."""
        locs = ", ".join(_s(x) for x in self.locations)
        pg = ""
        if self.store == "postgres":
            pg = ("# PostgreSQL: no password here (~/.pgpass, PGPASSFILE, PGPASSWORD or a "
                  "service file)\n"
                  f"url = {_s(self.url)}\nschema = {_s(self.pg_schema)}\n")  # fmt: skip
        search = ""
        if self.search_backend or self.search_url or self.search_schema:
            search = "\n[search]\n" + "".join(
                f"{k} = {_s(v)}\n"
                for k, v in (("backend", self.search_backend), ("url", self.search_url),
                             ("schema", self.search_schema)) if v
            )  # fmt: skip
        return (
            "# webark collection configuration (TOML); see `webark collection --help`.\n"
            "[collection]\n"
            f"format = {LAYOUT_VERSION}\n"
            f"name = {_s(self.name)}\n"
            f"created = {_s(self.created)}\n"
            "\n[index]\n"
            '# "sqlite": indexes/index.sqlite3; "cdxj": indexes/per-warc/NAME.cdxj;\n'
            '# "postgres": a PostgreSQL schema shared by several writers and servers\n'
            f"store = {_s(self.store)}\n"
            '# indexer flavour: "cdxj-indexer" or "pywb"\n'
            f"compat = {_s(self.compat)}\n"
            "# POST/PUT captures keyed by method and body (?__wb_method=post&...), so that\n"
            "# replay finds them for the same request (WARCs added before a change keep\n"
            "# their keys: re-add them with --reindex)\n"
            f"post_append = {'true' if self.post_append else 'false'}\n"
            f"{pg}{search}"
            "\n[warcs]\n"
            '# default of `webark collection add`: "copy", "link" or "in-place"\n'
            f"add = {_s(self.add_mode)}\n"
            "# more folders or URL prefixes where WARCs are looked for, after\n"
            "# locations.loc and warcs/\n"
            f"locations = [{locs}]\n"
        )

    @classmethod
    def from_toml(cls, text: str, where: str = CONFIG_NAME) -> CollectionConfig:
        """Parse and check ``collection.toml``.

        Raises:
            CollectionError: not TOML, a newer layout, a value out of its choices, a
                PostgreSQL store without a usable URL (or with a password in it).
        """
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CollectionError(f"{where}: {exc}") from exc
        coll, idx, warcs = d.get("collection", {}), d.get("index", {}), d.get("warcs", {})
        search = d.get("search", {})
        fmt = coll.get("format", LAYOUT_VERSION)
        if fmt != LAYOUT_VERSION:
            raise CollectionError(f"{where}: collection format {fmt} is not supported")

        def choice(section: dict[str, Any], key: str, default: str, allowed: object) -> Any:
            v = section.get(key, default)
            opts = get_args(allowed)
            if v not in opts:
                raise CollectionError(f"{where}: {key} = {v!r}; expected one of {opts}")
            return v

        def text_of(section: dict[str, Any], key: str) -> str:
            v = section.get(key, "")
            if not isinstance(v, str):
                raise CollectionError(f"{where}: {key} must be a string")
            return v

        post_append = idx.get("post_append", True)
        if not isinstance(post_append, bool):
            raise CollectionError(f"{where}: post_append = {post_append!r}; expected true or false")
        locs = warcs.get("locations", [])
        if not isinstance(locs, list) or not all(isinstance(x, str) for x in locs):
            raise CollectionError(f"{where}: [warcs] locations must be a list of strings")
        cfg = cls(
            name=str(coll.get("name", "")),
            created=str(coll.get("created", "")),
            store=choice(idx, "store", "sqlite", StoreKind),
            compat=choice(idx, "compat", "cdxj-indexer", Compat),
            post_append=post_append,
            add_mode=choice(warcs, "add", "copy", AddMode),
            locations=list(locs),
            url=text_of(idx, "url"),
            schema=text_of(idx, "schema"),
            search_backend=choice(search, "backend", "", (Literal["", "sqlite", "postgres"])),
            search_url=text_of(search, "url"),
            search_schema=text_of(search, "schema"),
        )
        cfg.check(where)
        return cfg

    def check(self, where: str = CONFIG_NAME) -> None:
        """Check the PostgreSQL settings (URL without a password, schema names).

        Raises:
            CollectionError: ``store = "postgres"`` without ``url``, or a bad URL/schema.
        """
        try:
            if self.store == "postgres":
                if not self.url:
                    raise CollectionError(
                        f'{where}: [index] store = "postgres" needs url = '
                        '"postgresql://user@host:port/dbname"'
                    )
                check_url(self.url)
                check_schema(self.pg_schema)
            if self.search_url:
                check_url(self.search_url)
            if self.search_schema:
                check_schema(self.search_schema)
        except PostgresConfigError as exc:
            raise CollectionError(f"{where}: {exc}") from exc
