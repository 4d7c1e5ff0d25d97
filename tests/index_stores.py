"""The index stores the existing index and replay suites run on (``index_store``
fixture of tests/conftest.py): SQLite and PostgreSQL, same tests, same assertions.

:class:`StoreChoice` makes collections and bare stores of one kind. With PostgreSQL
each collection or store gets a schema of its own in the session's throwaway cluster
(:mod:`pg_cluster`), so tests never see each other's lines.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pg_cluster import PgCluster
from webark.index.collection import Collection
from webark.index.sqlite_store import SqliteStore
from webark.index.store import IndexStore

_SCHEMAS = itertools.count(1)


@dataclass(frozen=True)
class StoreChoice:
    """``kind`` is ``"sqlite"`` or ``"postgres"`` (then ``pg`` is the cluster)."""

    kind: str
    pg: PgCluster | None = None

    def schema(self) -> str:
        """A new schema name, unique in the session."""
        return f"t{os.getpid()}_{next(_SCHEMAS)}"

    def init(self, root: str | os.PathLike[str], **kw: Any) -> Collection:
        """``Collection.init(root, **kw)`` with this store."""
        if self.kind == "postgres":
            assert self.pg is not None
            kw.setdefault("url", self.pg.url)
            kw.setdefault("schema", self.schema())
        return Collection.init(root, store=self.kind, **kw)

    def new_store(self, sqlite_path: str | os.PathLike[str]) -> IndexStore:
        """An empty store: SQLite at ``sqlite_path``, or a new PostgreSQL schema."""
        if self.kind == "postgres":
            from webark.index.postgres_store import PostgresStore

            assert self.pg is not None
            return PostgresStore(self.pg.url, self.schema())
        return SqliteStore(Path(sqlite_path))
