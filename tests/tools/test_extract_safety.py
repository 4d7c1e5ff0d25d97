"""webark extract against hostile URLs and a hostile output folder: nothing may be
written outside DIR, whatever the URL, and symlinks in DIR are never followed."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest

from webark.tools.extract import MANIFEST_NAME, OutputInUse, UnsafeOutput, extract
from webark.tools.extract_paths import MAX_COMPONENT, url_to_path

HOSTILE = [
    "http://evil.example/../../../../tmp/escape.txt",
    "http://evil.example/%2e%2e/%2e%2e/%2E%2E/escape2.txt",
    "http://evil.example/..%2f..%2f..%2fescape3.txt",
    "http://evil.example/a/%2F%2Fabs/escape4.txt",
    "http://evil.example//etc/passwd",
    "http://evil.example/..\\..\\escape5.txt",
    "http://evil.example/%5C..%5C..%5Cescape6.txt",
    "http://evil.example/nul%00byte.txt",
    "http://evil.example/CON",
    "http://evil.example/aux.txt",
    "http://evil.example/trailing.",
    "http://evil.example/a:b*c?d|e<f>g\"h",
    "http://evil.example/?q=../../x",
    "http://evil.example/" + "x" * 400 + ".txt",
    "http://evil.example/" + "/".join(["deep" * 20] * 40),
    "http://..:80/escape7.txt",
    "http://%2e%2e/escape8.txt",
    "http://evil.example/%ff%fe%00/bytes",
    "http://evil.example/Case.txt",
    "http://evil.example/case.TXT",
    "http://evil.example/case.txt",
    "http://evil.example/dir",
    "http://evil.example/dir/",
    "http://evil.example/dir/child.txt",
]


def hostile_warc(tmp_path: Path, urls: list[str]) -> Path:
    """An uncompressed WARC with one response per URL, written byte by byte: WarcWriter
    rightly refuses some of these URLs, but WARCs in the wild contain them."""
    out = bytearray()
    for i, url in enumerate(urls):
        body = f"payload {i}".encode()
        block = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body)) + body
        out += (
            "WARC/1.1\r\nWARC-Type: response\r\n"
            f"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-{i:012d}>\r\n"
            f"WARC-Date: 2020-01-01T00:00:{i % 60:02d}Z\r\nWARC-Target-URI: {url}\r\n"
            "Content-Type: application/http;msgtype=response\r\n"
            f"Content-Length: {len(block)}\r\n\r\n"
        ).encode() + block + b"\r\n\r\n"
    path = tmp_path / "in" / "hostile.warc"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def all_files(root: Path) -> set[Path]:
    return {Path(r, n) for r, _, names in os.walk(root) for n in names}


def test_no_path_leaves_the_output_folder(tmp_path: Path) -> None:
    warc = hostile_warc(tmp_path, HOSTILE)
    before = all_files(tmp_path)
    out = tmp_path / "sandbox" / "out"
    report = extract([warc], out)
    after = all_files(tmp_path)
    new = after - before
    root = os.path.realpath(out)
    for p in new:  # every new file is inside out/, with no symlink on the way
        assert os.path.realpath(p).startswith(root + os.sep), p
        assert not os.path.islink(p)
    assert report.files == len(HOSTILE) - 1  # host '..' has no place in the tree
    assert report.skipped == {"unsupported-url": 1}
    with open(out / f"{MANIFEST_NAME}.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == report.files
    assert {str(out / r["file"]) for r in rows} == {str(p) for p in new} - {
        str(out / f"{MANIFEST_NAME}.csv")
    }
    by_url = {r["url"]: r for r in rows}
    # each file holds its own capture's payload
    for i, url in enumerate(HOSTILE):
        if url in by_url:
            assert (out / by_url[url]["file"]).read_bytes() == f"payload {i}".encode()
    for r in rows:
        for part in r["file"].split("/"):
            assert part not in ("", ".", "..")
            assert "\\" not in part and "\0" not in part and ":" not in part
            assert len(part.encode()) <= 255
    # names differing only in case never share a file (case-insensitive file systems)
    folded = [r["file"].casefold() for r in rows]
    assert len(set(folded)) == len(folded)
    # /dir is needed as a folder (for /dir/child.txt): the file moves inside it
    assert by_url["http://evil.example/dir/"]["file"] == "evil.example/dir/index.html"
    assert by_url["http://evil.example/dir"]["file"] == "evil.example/dir/index~2.html"
    assert by_url["http://evil.example/../../../../tmp/escape.txt"]["file"] == (
        "evil.example/%2E%2E/%2E%2E/%2E%2E/%2E%2E/tmp/escape.txt"
    )
    assert by_url["http://evil.example/case.txt"]["file"] == "evil.example/case~3.txt"
    assert by_url["http://evil.example/dir/child.txt"]["file"] == "evil.example/dir/child.txt"
    assert by_url["http://evil.example/CON"]["file"] == "evil.example/CON_"


def test_symlink_planted_in_output_is_not_followed(tmp_path: Path) -> None:
    warc = hostile_warc(tmp_path, ["http://victim.example/secret/file.txt"])
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "victim.example").symlink_to(outside, target_is_directory=True)
    # a folder that is not empty and holds no extract is refused before any write
    with pytest.raises(OutputInUse, match="not empty"):
        extract([warc], out)
    assert list(outside.iterdir()) == [] and os.listdir(out) == ["victim.example"]
    # an earlier extract whose folder was swapped for a symlink: --replace refuses too
    out2 = tmp_path / "out2"
    extract([warc], out2)
    shutil.rmtree(out2 / "victim.example")
    (out2 / "victim.example").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeOutput, match="symlink"):
        extract([warc], out2, replace=True)
    assert list(outside.iterdir()) == []


def test_replace_never_deletes_through_a_symlink(tmp_path: Path) -> None:
    """The earlier extract listed victim.example/secret/file.txt; its folder is now a
    symlink to a folder outside holding a file of that name. Replacing the extract
    with one that no longer has that URL must not delete the outside file."""
    first = hostile_warc(tmp_path, ["http://victim.example/secret/file.txt"])
    out = tmp_path / "out"
    extract([first], out)
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "file.txt").write_bytes(b"keep me")
    shutil.rmtree(out / "victim.example")
    (out / "victim.example").symlink_to(outside, target_is_directory=True)
    second = tmp_path / "second.warc"
    second.write_bytes(hostile_warc(tmp_path, ["http://other.example/x.txt"]).read_bytes())
    report = extract([second], out, replace=True)
    assert report.files == 1 and report.removed == 0
    assert (outside / "secret" / "file.txt").read_bytes() == b"keep me"
    assert (out / "victim.example").is_symlink()


def test_symlinked_file_is_not_written_through(tmp_path: Path) -> None:
    warc = hostile_warc(tmp_path, ["http://victim.example/f.txt"])
    target = tmp_path / "target.txt"
    target.write_bytes(b"keep me")
    out = tmp_path / "out"
    (out / "victim.example").mkdir(parents=True)
    (out / "victim.example" / "f.txt").symlink_to(target)
    with pytest.raises(OutputInUse):
        extract([warc], out)
    assert target.read_bytes() == b"keep me"
    # the same file of an earlier extract replaced by a symlink: --replace refuses it
    out2 = tmp_path / "out2"
    extract([warc], out2)
    (out2 / "victim.example" / "f.txt").unlink()
    (out2 / "victim.example" / "f.txt").symlink_to(target)
    with pytest.raises(UnsafeOutput):
        extract([warc], out2, replace=True)
    assert target.read_bytes() == b"keep me"


def test_rerun_replaces_regular_files(tmp_path: Path) -> None:
    warc = hostile_warc(tmp_path, ["http://a.example/x.txt"])
    extract([warc], tmp_path / "out")
    with pytest.raises(OutputInUse, match="--replace"):
        extract([warc], tmp_path / "out")
    report = extract([warc], tmp_path / "out", replace=True)
    assert report.files == 1
    assert (tmp_path / "out/a.example/x.txt").read_bytes() == b"payload 0"


@pytest.mark.parametrize("url", HOSTILE[:14])
def test_url_to_path_components_are_plain_names(url: str) -> None:
    parts = url_to_path(url)
    assert parts[0] == "evil.example"
    for p in parts:
        assert p not in ("", ".", "..") and "/" not in p and "\\" not in p and "\0" not in p
        assert len(p.encode()) <= MAX_COMPONENT
