"""``WarcWriter.write_stored``, which ``webark reduplicate`` copies records with: bytes
kept exactly, offsets/lengths as the reader gives them, rotation, warcinfo first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webark.core.errors import WebarkError
from webark.warc.reader import ArchiveReader, stored_record_bytes
from webark.warc.writer import WarcWriter


@pytest.mark.parametrize("compression", ["gzip", "none", "zstd"])
def test_records_copied_byte_for_byte_with_rotation(corpus: Path, tmp_path: Path,
                                                    compression: str) -> None:
    src = corpus / "pywb/warcs/iana.warc.gz"
    records = list(ArchiveReader(src))
    raws = [stored_record_bytes(r) for r in records]
    assert all(raws)
    placed = []
    with WarcWriter(tmp_path, prefix="COPY", compression=compression,  # type: ignore[arg-type]
                    max_size=200_000) as w:
        fd = os.open(src, os.O_RDONLY)
        try:
            for rec, raw in zip(records, raws, strict=True):
                if compression == "gzip" and rec.offset % 2 == 0:  # the member as it is
                    member = os.pread(fd, rec.length, rec.offset)
                    placed.append(w.write_stored(member, encoded=True))
                else:
                    assert raw is not None
                    placed.append(w.write_stored(raw))
        finally:
            os.close(fd)
    files = sorted(tmp_path.iterdir())
    assert len(files) > 1 and not [f for f in files if f.name.endswith(".open")]
    got = {}
    for f in files:
        out = list(ArchiveReader(f))
        assert out[0].type == "warcinfo" and out[0].headers.filename == f.name
        for r in out[1:]:
            got[(str(f), r.offset)] = r
    assert len(got) == len(records)
    for (path, offset, length), raw in zip(placed, raws, strict=True):
        r = got[(path, offset)]
        assert r.length == length
        # an uncompressed file's stored length leaves out the CRLF CRLF after the block
        tail = b"\r\n\r\n" if compression == "none" else b""
        assert (stored_record_bytes(r) or b"") + tail == raw


def test_write_stored_after_close_is_refused(tmp_path: Path) -> None:
    w = WarcWriter(tmp_path)
    w.close()
    with pytest.raises(WebarkError):
        w.write_stored(b"WARC/1.1\r\n\r\n\r\n\r\n")
