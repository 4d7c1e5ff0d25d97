"""Replay over index lines that point outside their collection and over damaged storage
(issue 20 items 4 and 7).

Two collections under one ``colls/``: ``B`` holds a private capture; ``A`` holds its own
capture plus a hand-written CDXJ under ``indexes/`` whose lines name B's WARC as
``../../B/warcs/NAME``, by its absolute path, and a WARC A does not have. A must never
serve B's bytes, and no page may show a server path. A record cut by a truncated WARC
and a capture whose WARC was deleted are damaged storage: 503 "Capture damaged", never
a 200 with a short body nor a 404 "Not in archive".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import _capture, _ok, when
from starlette.testclient import TestClient

from webark.apps.replay.app import create_server
from webark.index.capture_select import captures
from webark.index.collection import Collection
from webark.index.locations import LocationResolver, PrefixLocator, WarcNameRefused
from webark.warc.writer import WarcWriter

SECRET = b"<html><title>B only</title>" + b"s" * 2000 + b"</html>"
OWN = b"<html><title>A page</title></html>"
LONG = b"<html><title>cut</title>" + b"z" * 50_000 + b"</html>"


def _write(out: Path, prefix: str, captures: list[tuple[str, bytes]]) -> Path:
    w = WarcWriter(out, prefix=prefix, compression="none")
    with w:
        for i, (url, body) in enumerate(captures):
            _capture(w, url, _ok(body), when(f"2021-01-01 00:00:{i:02d}"))
    return Path(w.paths[0])


def _cdxj(url: str, ts: str, filename: str, offset: int, length: int) -> str:
    fields = {"url": url, "mime": "text/html", "status": "200", "filename": filename,
              "offset": str(offset), "length": str(length)}  # fmt: skip
    key = "test,site)/" + url.rsplit("/", 1)[-1]
    return f"{key} {ts} {json.dumps(fields)}\n"


@pytest.fixture(scope="module")
def colls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("damaged")
    b = Collection.init(root / "colls" / "B")
    with b:
        warc_b = _write(root / "w" / "b", "B", [("http://site.test/secret.html", SECRET)])
        assert [r.status for r in b.add([warc_b])] == ["indexed"]
    a = Collection.init(root / "colls" / "A")
    with a:
        own = _write(root / "w" / "a", "A", [("http://site.test/own.html", OWN)])
        cut = _write(root / "w" / "cut", "CUT", [("http://site.test/cut.html", LONG)])
        gone = _write(root / "w" / "gone", "GONE", [("http://site.test/gone.html", OWN)])
        assert [r.status for r in a.add([own, cut, gone])] == ["indexed"] * 3
    (a.warcs_dir / gone.name).unlink()
    cut_copy = a.warcs_dir / cut.name
    with cut_copy.open("r+b") as f:
        f.truncate(cut_copy.stat().st_size // 2)
    # the offset of B's response record, as B's own index has it
    line = next(captures(b.source(), "http://site.test/secret.html"))
    stolen = [
        ("escape.html", "20210101000001", f"../../B/warcs/{warc_b.name}"),
        ("absolute.html", "20210101000002", str(b.warcs_dir / warc_b.name)),
        ("dotdot.html", "20210101000003", f"sub/../../../B/warcs/{warc_b.name}"),
        ("passwd.html", "20210101000004", "/etc/passwd"),
    ]
    lines = sorted(_cdxj(f"http://site.test/{u}", ts, fn, line.offset, line.length)
                   for u, ts, fn in stolen)  # fmt: skip
    (a.indexes_dir / "planted.cdxj").write_text("".join(lines))
    return root / "colls"


@pytest.fixture(scope="module")
def client(colls: Path) -> Iterator[TestClient]:
    with TestClient(create_server(colls), raise_server_exceptions=True) as c:
        yield c


def _no_server_paths(text: str, colls: Path) -> None:
    assert str(colls.parent) not in text and "/etc/passwd" not in text, text[:2000]
    assert "Traceback" not in text


def test_own_capture_replays(client: TestClient) -> None:
    r = client.get("/A/20210101000000id_/http://site.test/own.html")
    assert r.status_code == 200 and r.content == OWN


@pytest.mark.parametrize("name", ["escape", "absolute", "dotdot", "passwd"])
@pytest.mark.parametrize("mode", ["", "id_"])
def test_filenames_outside_the_collection_are_refused(
    client: TestClient, colls: Path, name: str, mode: str
) -> None:
    r = client.get(f"/A/2021{mode}/http://site.test/{name}.html", follow_redirects=True)
    assert r.status_code == 503 and "Capture damaged" in r.text
    assert b"B only" not in r.content and b"root:" not in r.content
    _no_server_paths(r.text, colls)


def test_b_still_serves_its_own_capture(client: TestClient) -> None:
    r = client.get("/B/20210101000000id_/http://site.test/secret.html")
    assert r.status_code == 200 and r.content == SECRET


def test_truncated_record_is_a_damaged_capture(client: TestClient, colls: Path) -> None:
    for mode in ("", "id_"):
        r = client.get(f"/A/20210101000000{mode}/http://site.test/cut.html")
        assert r.status_code == 503 and "Capture damaged" in r.text, mode
        assert b"zzzzzzzzzz" not in r.content
        _no_server_paths(r.text, colls)


def test_missing_warc_is_a_damaged_capture(client: TestClient, colls: Path) -> None:
    r = client.get("/A/20210101000000/http://site.test/gone.html")
    assert r.status_code == 503 and "Capture damaged" in r.text
    assert "Not in archive" not in r.text
    _no_server_paths(r.text, colls)


def test_a_url_never_archived_is_still_not_in_archive(client: TestClient) -> None:
    r = client.get("/A/2021/http://site.test/never.html")
    assert r.status_code == 404 and "Not in archive" in r.text


@pytest.mark.parametrize(
    "name", ["../x.warc", "/abs/x.warc", "a/../../x.warc", "..", "a\\..\\x.warc", "x\x00.warc", ""]
)
def test_resolver_refuses_names_that_leave_the_folder(tmp_path: Path, name: str) -> None:
    (tmp_path / "x.warc").write_bytes(b"WARC/1.1\r\n")
    resolver = LocationResolver([PrefixLocator(tmp_path / "warcs")])
    with pytest.raises(WarcNameRefused):
        resolver.resolve(name)


def test_resolver_keeps_plain_and_subfolder_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.warc").write_bytes(b"WARC/1.1\r\n")
    (tmp_path / "y.warc").write_bytes(b"WARC/1.1\r\n")
    resolver = LocationResolver([PrefixLocator(tmp_path)])
    assert resolver.resolve("y.warc") == str(tmp_path / "y.warc")
    assert resolver.resolve("sub/x.warc") == str(tmp_path / "sub" / "x.warc")



@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``x``: an SQLite index that is not a database; ``y``: a folder named like a CDXJ."""
    root = tmp_path_factory.mktemp("broken") / "colls"
    x = Collection.init(root / "x")
    x.sqlite_path.write_bytes(b"garbage" * 1000)
    y = Collection.init(root / "y")
    (y.indexes_dir / "a.cdxj").mkdir()
    return root


@pytest.mark.parametrize("coll", ["x", "y"])
@pytest.mark.parametrize("path", ["/{}/cdx?url=site.test/", "/{}/2021/http://site.test/"])
def test_unreadable_indexes_name_no_server_path(broken: Path, coll: str, path: str) -> None:
    with TestClient(create_server(broken)) as c:
        r = c.get(path.format(coll))
    assert r.status_code == 503
    assert str(broken.parent) not in r.text, r.text[:500]
    assert "index.sqlite3" in r.text or "a.cdxj" in r.text  # the file, not where it is
