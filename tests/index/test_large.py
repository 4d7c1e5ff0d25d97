"""A generated multi-hundred-MB sorted CDXJ (2.1 million lines, ~520 MB): queries read a
few blocks, never the file, and memory stays flat."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from webark.index.sorted_file import SortedCdxFile
from webark.index.source import KeyRange, key_range

HOSTS, PAGES, CAPS = 2000, 350, 3
_B32 = str.maketrans("0123456789", "ABCDEFGHIJ")


def _ts(h: int, p: int, c: int) -> str:
    return f"20{10 + c:02d}0{1 + p % 9}1{p % 10}12{h % 60:02d}{p % 60:02d}"


def generate(path: Path) -> int:
    """Sorted by construction: zero-padded hosts and pages, increasing timestamps."""
    n = 0
    with path.open("wb", buffering=1 << 22) as f:
        for h in range(HOSTS):
            chunk = []
            for p in range(PAGES):
                key = f"com,site{h:05d})/page/{p:05d}"
                url = f"http://site{h:05d}.com/page/{p:05d}"
                for c in range(CAPS):
                    digest = f"{(h * 7919 + p * 104729 + c) % 10**12:032d}".translate(_B32)
                    chunk.append(
                        f'{key} {_ts(h, p, c)} {{"url": "{url}", "mime": "text/html", '
                        f'"status": "200", "digest": "sha1:{digest}", "length": "{1000 + p}", '
                        f'"offset": "{n * 1000}", "filename": "crawl-{h % 50:05d}.warc.gz"}}\n'
                    )
                    n += 1
            f.write("".join(chunk).encode())
    return n


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("big") / "big.cdxj"
    assert generate(p) == HOSTS * PAGES * CAPS == 2_100_000
    assert p.stat().st_size > 500_000_000
    return p


@pytest.mark.parametrize("mapped", [True, False])
@pytest.mark.parametrize(("h", "p"), [(0, 0), (1234, 123), (1999, 349), (1000, 0)])
def test_exact_query_reads_a_few_blocks(big: Path, h: int, p: int, mapped: bool) -> None:
    src = SortedCdxFile(big)
    src.lines.use_mmap = mapped
    r0, b0, p0 = src.stats.reads, src.stats.bytes_read, src.stats.probes
    got = list(src.scan(key_range(f"http://site{h:05d}.com/page/{p:05d}")))
    reads, nbytes = src.stats.reads - r0, src.stats.bytes_read - b0
    # log2(2.1M lines) = 21 probes (+1 per blank or edge step)
    assert src.stats.probes - p0 <= 30, src.stats.probes - p0
    assert [x.timestamp for x in got] == [_ts(h, p, c) for c in range(CAPS)]
    assert got[0].url == f"http://site{h:05d}.com/page/{p:05d}"
    # mapped: the uncached probe lines and one chunk; read: log2(520 MB / 4 KiB) = 17
    # block reads, a few extra blocks; not the file
    assert reads <= 40, reads
    assert nbytes <= 256 * 1024, nbytes


def test_absent_keys_and_edges(big: Path) -> None:
    src = SortedCdxFile(big)
    for url in (
        "http://aaa.example/",
        "http://zzz.example/",
        "http://site01000.com/page/00350",
        "http://site99999.com/",
    ):
        r0 = src.stats.reads
        assert list(src.scan(key_range(url))) == []
        assert list(src.scan(key_range(url), reverse=True)) == []
        assert src.stats.reads - r0 <= 80


def test_from_to_reverse_host_prefix(big: Path) -> None:
    src = SortedCdxFile(big)
    one = list(src.scan(key_range("http://site01234.com/page/00123", from_ts="2011", to_ts="2011")))
    assert [x.timestamp for x in one] == [_ts(1234, 123, 1)]
    rev = list(src.scan(key_range("http://site01234.com/page/00123"), reverse=True))
    assert [x.timestamp for x in rev] == [_ts(1234, 123, c) for c in (2, 1, 0)]

    b0 = src.stats.bytes_read
    host = list(src.scan(key_range("site01234.com", "host")))
    span = sum(len(json.dumps(x.url)) for x in host)  # just to touch the lines
    assert len(host) == PAGES * CAPS and span
    host_bytes = src.stats.bytes_read - b0
    assert host_bytes < 2 * 1050 * 260 + 256 * 1024  # the host's lines, not the file
    hrev = list(src.scan(key_range("site01234.com", "host"), reverse=True))
    assert hrev == host[::-1]
    pre = list(src.scan(key_range("http://site01234.com/page/001*")))
    assert len(pre) == 100 * CAPS
    assert all(x.urlkey.startswith("com,site01234)/page/001") for x in pre)
    # domain query of a TLD spans the whole file: streamed, first lines come at once
    it = src.scan(key_range("com", "domain"))
    assert next(it).urlkey == "com,site00000)/page/00000"
    it.close()
    assert list(src.scan(KeyRange("com,site01999)/page/00349 2012", None)))[-1].timestamp == (
        _ts(1999, 349, 2)
    )


QUERY_SCRIPT = textwrap.dedent("""
    import json, random, resource, sys, time
    from webark.index.sorted_file import SortedCdxFile
    from webark.index.source import key_range
    src = SortedCdxFile(sys.argv[1])
    src.lines.use_mmap = sys.argv[2] == "mmap"
    rnd = random.Random(1)
    t = time.perf_counter()
    n = 0
    for _ in range(500):
        h, p = rnd.randrange(2000), rnd.randrange(350)
        n += len(list(src.scan(key_range(f"http://site{h:05d}.com/page/{p:05d}"))))
    exact_ms = (time.perf_counter() - t) * 1000 / 500
    t = time.perf_counter()
    hosts = sum(1 for h in range(0, 2000, 100)
                for _ in src.scan(key_range(f"site{h:05d}.com", "host")))
    host_ms = (time.perf_counter() - t) * 1000 / 20
    full = sum(1 for _ in src.lines.range(b"", None))  # a raw full pass, streamed
    # The program's own memory: anonymous RSS (ru_maxrss would include the forking
    # parent's; VmHWM counts the pages of the mapped index file, which are the kernel's
    # shared, reclaimable page cache, resident for pread() readers just the same).
    try:
        status = {ln.split(":")[0]: int(ln.split()[1]) for ln in open("/proc/self/status")
                  if ln.startswith(("RssAnon", "VmHWM"))}
        anon, peak = status["RssAnon"], status["VmHWM"]
    except (OSError, KeyError):
        anon = peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"exact": n, "hosts": hosts, "full": full, "exact_ms": exact_ms,
                      "host_ms": host_ms, "anon_kib": anon, "maxrss_kib": peak,
                      "probes": src.stats.probes}))
""")


@pytest.mark.parametrize("mode", ["mmap", "pread"])
def test_memory_stays_small(big: Path, mode: str) -> None:
    """500 exact queries, 20 host queries and one streamed pass over all 2.1M lines in a
    fresh process, on the mapped file and by positional reads: the process's own
    memory stays far below the file size."""
    out = subprocess.run(
        [sys.executable, "-c", QUERY_SCRIPT, str(big), mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    r = json.loads(out)
    assert r["exact"] == 500 * CAPS and r["hosts"] == 20 * PAGES * CAPS
    assert r["full"] == 2_100_000
    assert r["anon_kib"] < 100 * 1024, r  # the file is ~520 MB
    if mode == "pread":  # nothing mapped: all of the peak RSS is the program's own
        assert r["maxrss_kib"] < 100 * 1024, r
    print(
        f"\nsorted file ({mode}), 2.1M lines: exact {r['exact_ms'] * 1000:.0f} µs/query, "
        f"host (1050 lines) {r['host_ms']:.1f} ms/query, anonymous RSS {r['anon_kib']} KiB, "
        f"peak RSS {r['maxrss_kib']} KiB"
    )
