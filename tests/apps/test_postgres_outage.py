"""A PostgreSQL index that cannot be reached answers 503 (never an empty 200), and a
server restart costs at most one failed request per connection: the next one
reconnects."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from index_stores import StoreChoice
from pg_cluster import PgCluster
from webark.apps.replay.app import create_server


def test_unreachable_server_is_503(tmp_path: Path, pg: PgCluster) -> None:
    d = tmp_path / "colls" / "web"
    d.mkdir(parents=True)
    (d / "collection.toml").write_text(
        '[collection]\nname = "web"\n[index]\nstore = "postgres"\n'
        'url = "postgresql://webark@127.0.0.1:1/webark?connect_timeout=2"\n'
    )  # fmt: skip
    with TestClient(create_server(tmp_path / "colls")) as client:
        r = client.get("/web/cdx", params={"url": "example.com"})
        assert r.status_code == 503 and "127.0.0.1:1" in r.text
        r = client.get("/web/2014/http://example.com/")
        assert r.status_code == 503 and "Archive unavailable" in r.text
        assert client.get("/web/search", params={"q": "x"}).status_code == 503


def test_restart_of_the_server(tmp_path: Path, corpus: Path, pg: PgCluster) -> None:
    own = PgCluster()  # a cluster of this test's own: it is restarted
    try:
        with own.password_file():
            _restart(own, tmp_path, corpus)
    finally:
        own.stop()


def _restart(own: PgCluster, tmp_path: Path, corpus: Path) -> None:
    """A query, a restart of the server, three queries: 200, at most 503s, 200."""
    coll = StoreChoice("postgres", own).init(tmp_path / "colls" / "web")
    list(coll.add([corpus / "pywb/warcs/example.warc.gz"]))
    coll.close()
    with TestClient(create_server(tmp_path / "colls")) as client:
        q = {"url": "example.com", "matchType": "host", "output": "json"}
        assert len(client.get("/web/cdx", params=q).text.splitlines()) == 2
        own.restart()
        codes = [client.get("/web/cdx", params=q) for _ in range(3)]
        assert all(r.status_code in (200, 503) for r in codes)
        assert codes[-1].status_code == 200 and len(codes[-1].text.splitlines()) == 2
        assert all(r.text.strip() for r in codes)  # never an empty 200


@pytest.mark.parametrize("path", ["/web/cdx?url=example.com", "/web/2014/http://example.com/"])
def test_bad_password_file_is_503_not_a_crash(tmp_path: Path, pg: PgCluster, path: str,
                                              corpus: Path) -> None:  # fmt: skip
    coll = StoreChoice("postgres", pg).init(tmp_path / "colls" / "web")
    list(coll.add([corpus / "pywb/warcs/example.warc.gz"]))
    coll.close()
    wrong = tmp_path / "pgpass"
    wrong.write_text(f"127.0.0.1:{pg.port}:*:webark:not-the-password\n")
    wrong.chmod(0o600)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PGPASSFILE", str(wrong))
        with TestClient(create_server(tmp_path / "colls")) as client:
            r = client.get(path)
            assert r.status_code == 503 and "password authentication failed" in r.text
            assert "not-the-password" not in r.text
