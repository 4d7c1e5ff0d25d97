"""WarcWriter: files, names, warcinfo first, rotation with exact byte counts, compression,
refusals and I/O errors."""

from __future__ import annotations

import errno
import gzip
import os
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zstandard
from fastwarc.warc import ArchiveIterator

import webark.warc.writer as writer_mod
from webark.core.errors import InvalidRecordError, WebarkError
from webark.core.ids import seeded_record_ids
from webark.warc.builders import MetadataFields, RecordBuilder, WarcinfoFields
from webark.warc.check import check_file
from webark.warc.headers import WarcHeaders
from webark.warc.reader import ArchiveReader
from webark.warc.record import WarcRecord
from webark.warc.writer import WarcWriter, is_already_compressed

WHEN = datetime(2024, 3, 1, 12, 30, 45, 123456, tzinfo=UTC)
INFO = WarcinfoFields(
    hostname="crawler1.example.org", ip="10.0.0.5", operator="Web Archive <archive@example.org>"
)
REQUEST = b"GET %s HTTP/1.1\r\nHost: example.com\r\nUser-Agent: webark/0.1\r\n\r\n"


def builder(seed: int = 1) -> RecordBuilder:
    return RecordBuilder(clock=lambda: WHEN, record_ids=seeded_record_ids(seed))


def make_writer(directory: Path, **kw: object) -> WarcWriter:
    kw.setdefault("builder", builder(99))
    return WarcWriter(directory, prefix="TEST", warcinfo=INFO, host="crawler1", port=8443, **kw)  # type: ignore[arg-type]


def response(body: bytes, ctype: str = "text/html; charset=utf-8") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
        % (ctype.encode(), len(body))
        + body
    )


def capture(
    b: RecordBuilder, i: int, size: int = 3000, ctype: str = "text/html; charset=utf-8"
) -> tuple[WarcRecord, ...]:
    body = (b"<p>page %d " % i + os.urandom(size // 2).hex().encode())[:size]
    path = b"/page/%d" % i
    return b.exchange(
        f"http://example.com/page/{i}",
        response(body, ctype),
        REQUEST % path,
        ip_address="93.184.216.34",
        metadata=MetadataFields(via="http://example.com/", hops_from_seed="L"),
    )


def serialized(r: WarcRecord) -> bytes:
    return r.headers.to_bytes(r.version) + r.block.read_all() + b"\r\n\r\n"


def members(data: bytes) -> list[bytes]:
    out = []
    while data:
        d = zlib.decompressobj(31)
        out.append(d.decompress(data))
        assert d.eof
        data = d.unused_data
    return out


def test_name_open_suffix_rename_and_close(tmp_path: Path) -> None:
    w = make_writer(tmp_path)
    assert w.paths == [] and w.bytes_written == 0 and w.current_path is None
    assert os.listdir(tmp_path) == []  # files are opened lazily
    written = w.write(*capture(w.builder, 1))
    name = f"TEST-20240301123045123-00000-{os.getpid()}~crawler1~8443.warc.gz"
    assert os.listdir(tmp_path) == [name + ".open"]
    assert w.current_path == str(tmp_path / name) + ".open"
    assert {r.path for r in written} == {str(tmp_path / name)}
    assert w.bytes_written == os.path.getsize(tmp_path / (name + ".open"))
    w.close()
    assert os.listdir(tmp_path) == [name]
    assert w.paths == [str(tmp_path / name)]
    w.close()  # idempotent
    with pytest.raises(WebarkError, match="closed"):
        w.write(*capture(w.builder, 2))


def test_never_overwrites_an_existing_file(tmp_path: Path) -> None:
    taken = f"TEST-20240301123045123-00000-{os.getpid()}~crawler1~8443.warc.gz"
    (tmp_path / taken).write_bytes(b"precious")
    with make_writer(tmp_path) as w:
        w.write(*capture(w.builder, 1))
    assert (tmp_path / taken).read_bytes() == b"precious"
    assert Path(w.paths[0]).name == taken.replace("-00000-", "-00001-")


def test_bad_configuration(tmp_path: Path) -> None:
    for kw in (
        {"template": "{prefix}.warc.gz"},
        {"template": "{prefix}-{nope}{ext}"},
        {"max_size": 0},
        {"compression": "bz2"},
    ):
        with pytest.raises(ValueError):
            make_writer(tmp_path, **kw)


def test_warcinfo_first_and_linked(tmp_path: Path) -> None:
    with make_writer(tmp_path) as w:
        written = w.write(*capture(w.builder, 1)) + w.write(*capture(w.builder, 2))
    data = Path(w.paths[0]).read_bytes()
    recs = members(data)
    assert len(recs) == 7
    info = recs[0].decode()
    assert info.startswith("WARC/1.1\r\nWARC-Type: warcinfo\r\n")
    assert f"WARC-Filename: {Path(w.paths[0]).name}\r\n" in info
    assert "operator: Web Archive <archive@example.org>\r\n" in info
    info_id = info.split("WARC-Record-ID: ")[1].split("\r\n")[0]
    for r in written:
        assert r.headers["WARC-Warcinfo-ID"] == info_id
        # each record's byte range is one gzip member holding exactly that record
        member = data[r.offset : r.offset + r.length]
        assert member[:2] == b"\x1f\x8b" and member[4:8] == b"\0\0\0\0"  # mtime 0
        assert gzip.decompress(member) == serialized(r)
    assert gzip.decompress(data[: written[0].offset]) == recs[0]  # warcinfo member first
    assert sum(r.length for r in written) + written[0].offset == len(data)


def test_rotation_before_passing_the_limit_exactly(tmp_path: Path) -> None:
    b = builder(5)
    groups = [capture(b, i, size=2000 + 1500 * i) for i in range(3)]

    def run(sub: str, max_size: int) -> tuple[WarcWriter, list[list[WarcRecord]]]:
        (tmp_path / sub).mkdir()
        w = make_writer(tmp_path / sub, max_size=max_size)
        out = []
        for g in groups:
            out.append(w.write(*g))
            assert w.bytes_written == os.path.getsize(w.current_path or "")
        w.close()
        return w, out

    _, ref = run("ref", 10**9)
    info_size = ref[0][0].offset
    sizes = [sum(r.length for r in g) for g in ref]
    # exactly at the limit: still one file
    w, out = run("exact", info_size + sizes[0] + sizes[1])
    assert [g[0].path for g in out] == [w.paths[0], w.paths[0], w.paths[1]]
    assert os.path.getsize(w.paths[0]) == info_size + sizes[0] + sizes[1]
    # one byte less: the second capture starts the next file
    w, out = run("less", info_size + sizes[0] + sizes[1] - 1)
    assert out[0][0].path == w.paths[0] and out[1][0].path == w.paths[1]
    assert os.path.getsize(w.paths[0]) == info_size + sizes[0]
    # a limit below one capture: each file holds its warcinfo and one capture
    w, out = run("tiny", 100)
    assert len(w.paths) == 3
    for path, g in zip(w.paths, out, strict=True):
        recs = members(Path(path).read_bytes())
        assert len(recs) == 4 and b"WARC-Type: warcinfo" in recs[0]
        assert all(r.path == path for r in g)
        info_id = recs[0].split(b"WARC-Record-ID: ")[1].split(b"\r\n")[0].decode()
        assert {r.headers["WARC-Warcinfo-ID"] for r in g} == {info_id}
    assert [Path(p).name.split("-")[2] for p in w.paths] == ["00000", "00001", "00002"]


def test_refuses_invalid_records_and_writes_nothing_of_the_group(tmp_path: Path) -> None:
    w = make_writer(tmp_path)
    b = w.builder
    good = capture(b, 1)
    rv_fields = [(n, v) for n, v in good[0].headers if n != "WARC-Payload-Digest"]
    rv_fields[0] = ("WARC-Type", "revisit")
    no_profile = WarcRecord(WarcHeaders(rv_fields), good[0].block)
    with pytest.raises(InvalidRecordError, match="revisit record without WARC-Profile"):
        w.write(good[0], no_profile)
    no_target = WarcRecord(
        WarcHeaders([(n, v) for n, v in good[0].headers if n != "WARC-Target-URI"]),
        good[0].block,
    )
    with pytest.raises(InvalidRecordError, match="response record without WARC-Target-URI"):
        w.write(no_target)
    with pytest.raises(InvalidRecordError, match="angle brackets"):
        w.write(b.response("<http://example.com/>", response(b"x")))
    with pytest.raises(InvalidRecordError, match="bad-field-value"):
        w.write(b.response("http://example.com/\r\nWARC-Type: evil", response(b"x")))
    bad_length = WarcRecord(good[0].headers.copy(), good[0].block)
    bad_length.headers.set("Content-Length", "1")
    with pytest.raises(InvalidRecordError, match="content-length-mismatch"):
        w.write(bad_length)
    assert os.listdir(tmp_path) == []
    w.close()


def test_zstd_one_frame_per_record(tmp_path: Path) -> None:
    with make_writer(tmp_path, compression="zstd") as w:
        written = w.write(*capture(w.builder, 1)) + w.write(*capture(w.builder, 2))
    path = w.paths[0]
    assert path.endswith(".warc.zst")
    data = Path(path).read_bytes()
    assert data[:4] == b"\x28\xb5\x2f\xfd"
    for r in written:
        frame = data[r.offset : r.offset + r.length]
        params = zstandard.get_frame_parameters(frame)
        assert params.content_size == len(serialized(r)) and params.has_checksum
        assert zstandard.ZstdDecompressor().decompress(frame) == serialized(r)
    with open(path, "rb") as f:
        seen = [
            (rec.headers.get("WARC-Type"), rec.verify_block_digest())
            for rec in ArchiveIterator(f, parse_http=False)
        ]
    assert seen == [("warcinfo", True)] + [
        (t, True) for t in ["response", "request", "metadata"] * 2
    ]


def test_uncompressed(tmp_path: Path) -> None:
    recs = capture(builder(3), 1, size=20000)
    with make_writer(tmp_path, compression="none") as w:
        written = w.write(*recs)
    data = Path(w.paths[0]).read_bytes()
    assert w.paths[0].endswith(".warc") and data.startswith(b"WARC/1.1\r\nWARC-Type: warcinfo")
    for r in written:  # lengths as the reader gives them: without the CRLF CRLF
        assert data[r.offset : r.offset + r.length + 4] == serialized(r)
    assert written[-1].offset + written[-1].length + 4 == len(data)


def test_fsync_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(writer_mod.os, "fsync", counting_fsync)
    with make_writer(tmp_path) as w:
        w.write(*capture(w.builder, 1))
    assert calls == []
    with make_writer(tmp_path, fsync=True) as w:
        w.write(*capture(w.builder, 1))
    assert len(calls) == 4  # warcinfo, the capture, file on close, directory after rename


@pytest.mark.parametrize("written_before_error", [0, 100])
def test_disk_full_cuts_the_file_back_and_next_write_starts_a_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written_before_error: int
) -> None:
    """A full disk in the middle of a record (part of it on disk, or nothing): the file
    is cut back to its last complete record and finished under its final name, a valid
    WARC; the next write starts a new file."""
    w = make_writer(tmp_path)
    w.write(*capture(w.builder, 1))
    real = writer_mod._write_all

    def full(fd: int, data: bytes) -> int:
        if written_before_error:
            os.write(fd, data[:written_before_error])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_mod, "_write_all", full)
    with pytest.raises(OSError, match="No space"):
        w.write(*capture(w.builder, 2))
    assert w.current_path is None
    first = w.paths[0]
    assert first.endswith(".warc.gz") and os.path.exists(first)
    assert not os.path.exists(first + ".open")
    report = check_file(first)
    assert report.ok, report.errors[:3]
    uris = [r.headers.target_uri for r in ArchiveReader(first) if r.type == "response"]
    assert uris == ["http://example.com/page/1"]
    monkeypatch.setattr(writer_mod, "_write_all", real)
    again = w.write(*capture(w.builder, 2))
    w.close()
    assert again[0].path == w.paths[1] and Path(w.paths[1]).name.split("-")[2] == "00001"
    assert b"WARC-Type: warcinfo" in members(Path(w.paths[1]).read_bytes())[0]


def test_disk_full_before_the_warcinfo_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = make_writer(tmp_path)

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_mod, "_write_all", full)
    with pytest.raises(OSError, match="No space"):
        w.write(*capture(w.builder, 1))
    assert w.paths == [] and os.listdir(tmp_path) == []


def test_hybrid_routes_compressed_media_with_its_request(tmp_path: Path) -> None:
    with make_writer(tmp_path, hybrid=True) as w:
        b = w.builder
        html = w.write(*capture(b, 1))
        jpeg = w.write(*capture(b, 2, ctype="image/jpeg"))
        svg = w.write(*capture(b, 3, ctype="image/svg+xml"))
        shot = w.write(b.resource("urn:view:http://example.com/", b"\x89PNG\r\n", "image/png"))
    gz, plain = w.paths
    assert gz.endswith(".warc.gz") and plain.endswith(".warc")
    assert {r.path for r in html + svg} == {gz}
    assert {r.path for r in jpeg + shot} == {plain}
    data = Path(plain).read_bytes()
    assert data.startswith(b"WARC/1.1\r\nWARC-Type: warcinfo")
    assert f"WARC-Filename: {Path(plain).name}".encode() in data[:1000]
    for r in jpeg + shot:
        assert data[r.offset : r.offset + r.length + 4] == serialized(r)
    # hybrid does nothing when everything is uncompressed anyway
    (tmp_path / "none").mkdir()
    with make_writer(tmp_path / "none", compression="none", hybrid=True) as w2:
        w2.write(*capture(w2.builder, 2, ctype="image/jpeg"))
    assert len(w2.paths) == 1


def test_already_compressed_policy() -> None:
    yes = [
        "image/jpeg",
        "image/png; charset=binary",
        "IMAGE/WEBP",
        "video/mp4",
        "audio/mpeg",
        "application/zip",
        "application/x-7z-compressed",
        "application/gzip",
        "application/pdf",
        "application/epub+zip",
        "font/woff2",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ]
    no = [
        None,
        "",
        "text/html",
        "image/svg+xml",
        "image/bmp",
        "image/x-icon",
        "application/json",
        "application/javascript",
        "application/octet-stream",
        "application/x-tar",
        "text/css",
    ]
    assert all(is_already_compressed(t) for t in yes)
    assert not any(is_already_compressed(t) for t in no)


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_spooled_block_is_compressed_in_pieces(tmp_path: Path, compression: str) -> None:
    """A block kept in a temporary file (over 16 MiB in real use) is never read whole."""
    import tempfile

    from webark.warc.record import Block

    body = os.urandom(1_500_000).hex().encode()  # 3 MB, several 1 MiB pieces
    wire = response(body, "text/plain")
    with tempfile.TemporaryFile() as f, make_writer(tmp_path, compression=compression) as w:
        f.write(wire)
        f.seek(0)
        rec = w.builder.response("http://example.com/big.txt", Block(file=f, size=len(wire)))
        assert not rec.block.in_memory
        [out] = w.write(rec)
        assert w.bytes_written == os.path.getsize(w.current_path or "")
    terminator = 4 if compression == "none" else 0  # uncompressed lengths exclude it
    stored = Path(w.paths[0]).read_bytes()[out.offset : out.offset + out.length + terminator]
    expected = out.headers.to_bytes("WARC/1.1") + wire + b"\r\n\r\n"
    if compression == "gzip":
        assert gzip.decompress(stored) == expected
    elif compression == "zstd":
        assert zstandard.get_frame_parameters(stored).content_size == len(expected)
        assert zstandard.ZstdDecompressor().decompress(stored) == expected
    else:
        assert stored == expected
    with open(w.paths[0], "rb") as fh:
        assert [r.verify_block_digest() for r in ArchiveIterator(fh, parse_http=False)] == [
            True,
            True,
        ]


def test_written_offsets_and_lengths_match_the_reader(tmp_path) -> None:
    """What write() returns is what ArchiveReader (and so every CDX line) will say."""
    from webark.warc.builders import WarcinfoFields
    from webark.warc.reader import ArchiveReader
    from webark.warc.writer import WarcWriter

    response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi"
    request = b"GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"
    for codec in ("gzip", "none", "zstd"):
        d = tmp_path / codec
        d.mkdir()
        with WarcWriter(d, compression=codec, warcinfo=WarcinfoFields(hostname="h")) as w:
            written = w.write(*w.builder.exchange("http://example.org/", response, request))
        read = [(r.offset, r.length) for r in ArchiveReader(w.paths[0]) if r.type != "warcinfo"]
        assert len(read) == 2
        assert [(r.offset, r.length) for r in written] == read, codec


def test_missing_output_directory_is_created(tmp_path) -> None:
    from webark.warc.builders import WarcinfoFields
    from webark.warc.writer import WarcWriter

    target = tmp_path / "a" / "b"
    with WarcWriter(target, warcinfo=WarcinfoFields(hostname="h")) as w:
        w.write(w.builder.resource("http://example.org/x", b"x", "text/plain"))
    assert len(list(target.glob("*.warc.gz"))) == 1
