"""Shared fixtures: where the third-party corpus lives (never modified by tests).

The corpus is ``shared/corpus`` beside the repository (``../shared/corpus`` from the repo
root), also in CI, which runs from a fresh clone with ``shared/`` next to it. When it is
not there, ``$WEBARK_CORPUS`` names it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corpus_location import CORPUS, missing
from index_stores import StoreChoice
from pg_cluster import INSTALL as PG_INSTALL
from pg_cluster import PgCluster, find_bindir
from python_docs_site import crawl_python_docs
from system_packages import require


def pytest_configure(config: pytest.Config) -> None:
    """Stop before collection when the corpus is missing: test modules read it at
    import, which would fail as a FileNotFoundError per module. A usage error (exit
    status 4), not a skip: tests that silently skip cannot fail."""
    why = missing()
    if why is not None:
        raise pytest.UsageError(why)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Path of ../shared/corpus (or $WEBARK_CORPUS)."""
    return CORPUS


@pytest.fixture(scope="session")
def pg() -> Iterator[PgCluster]:
    """A throwaway PostgreSQL cluster for the session (:mod:`pg_cluster`), its password
    file exported as ``PGPASSFILE`` (child processes inherit it). Missing PostgreSQL or
    psycopg: skipped outside CI, failed under ``CI=true``."""
    require(find_bindir() is not None, "PostgreSQL (Debian's postgresql-15)", PG_INSTALL)
    require(importlib.util.find_spec("psycopg") is not None, "psycopg",
            "pip install -e '.[postgres]' (scripts/setup.sh installs it)")  # fmt: skip
    cluster = PgCluster()
    try:
        with cluster.password_file():
            yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def index_store(request: pytest.FixtureRequest) -> StoreChoice:
    """The index store a test runs on: each test using it runs on SQLite and on
    PostgreSQL (:mod:`index_stores`)."""
    if request.param == "postgres":
        return StoreChoice("postgres", request.getfixturevalue("pg"))
    return StoreChoice("sqlite")


@pytest.fixture(scope="session")
def python_docs_crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The python docs crawled once per session (:mod:`python_docs_site`; skipped or
    failed as it says when python3-doc is missing)."""
    yield from crawl_python_docs(tmp_path_factory.mktemp("pydocs"))
