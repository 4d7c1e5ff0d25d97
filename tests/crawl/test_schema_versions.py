"""A crawl database written by another schema version is refused and left as it was
(frontier and continuous crawling's feed database), and a new one records its version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from webark.crawl.frontier_store import SCHEMA_VERSION, FrontierError, open_store
from webark.crawl.politeness import FrontierConfig
from webark.crawl.rss.store import RssStore, RssStoreError


def _schema_of(path: Path) -> object:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()[0]


def _set_schema(path: Path, version: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET v = ? WHERE k = 'schema'", (version,))


def test_frontier_records_then_refuses_another_schema(tmp_path: Path) -> None:
    db = tmp_path / "frontier.sqlite"
    conn, put_back = open_store(db, FrontierConfig(), lambda: 0.0)
    conn.close()
    assert put_back == () and _schema_of(db) == SCHEMA_VERSION
    _set_schema(db, SCHEMA_VERSION + 1)
    with pytest.raises(FrontierError, match=f"frontier schema {SCHEMA_VERSION + 1}, need"):
        open_store(db, FrontierConfig(), lambda: 0.0)
    assert _schema_of(db) == SCHEMA_VERSION + 1


def test_rss_store_records_then_refuses_another_schema(tmp_path: Path) -> None:
    db = tmp_path / "rss.sqlite"
    RssStore.open(db).close()
    assert _schema_of(db) == 1
    _set_schema(db, 7)
    with pytest.raises(RssStoreError, match="RSS database schema 7, need 1"):
        RssStore.open(db)
    assert _schema_of(db) == 7
