"""webark stats on corpus WARCs/ARCs, checked against counts made independently with
warcio (records, captures, payload lengths, revisits resolved by digest)."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from webark.cli.main import cli
from webark.index.collection import Collection
from webark.tools.stats import archive_stats, harvest_of_name
from webark.tools.stats_html import render_html

PYWB = "pywb/warcs"


def warcio_view(paths: list[Path]) -> dict[str, object]:
    """What stats must say, computed with warcio: captures, revisits, URLs, payload
    bytes of responses, bytes represented (revisits at their original's length)."""
    sizes: dict[str, int] = {}
    revisit_digests: list[str] = []
    captures = 0
    urls = set()
    payload = 0
    for p in paths:
        with open(p, "rb") as f:
            for rec in WarcioIterator(f, arc2warc=True):
                url = rec.rec_headers.get_header("WARC-Target-URI")
                if rec.rec_type not in ("response", "resource", "revisit") or not url:
                    continue
                captures += 1
                urls.add(url)
                digest = rec.rec_headers.get_header("WARC-Payload-Digest")
                if rec.rec_type == "revisit":
                    revisit_digests.append(digest)
                    continue
                n = len(rec.content_stream().read())
                payload += n
                if digest:
                    sizes.setdefault(digest, n)
    represented = payload + sum(sizes[d] for d in revisit_digests if d in sizes)
    return {
        "captures": captures, "revisits": len(revisit_digests), "urls": len(urls),
        "payload": payload, "represented": represented,
        "unresolved": sum(1 for d in revisit_digests if d not in sizes),
    }


def test_counts_and_dedup_savings_match_warcio(corpus: Path) -> None:
    paths = [corpus / PYWB / "iana.warc.gz", corpus / PYWB / "dupes.warc.gz"]
    expected = warcio_view(paths)
    s = archive_stats(paths)
    assert s.total.captures == expected["captures"] == 183
    assert s.total.revisits == expected["revisits"] == 132
    assert s.urls == expected["urls"]
    assert s.total.payload_stored == expected["payload"]
    assert s.total.represented == expected["represented"]
    assert s.unresolved_revisits == expected["unresolved"] == 0
    assert s.total.savings == s.total.represented - s.total.payload_stored > 0
    # per-record gzip: the stored lengths of all records add up to the files' size
    assert s.stored == s.file_bytes == sum(os.path.getsize(p) for p in paths)
    assert round(s.revisit_ratio, 4) == round(132 / 183, 4)
    # both files say isPartOf: liveweb in their warcinfo
    assert list(s.harvest) == ["liveweb"]
    assert list(s.year) == ["2014"]
    assert sum(b.captures for b in s.mime.values()) == s.total.captures
    assert sum(b.represented for b in s.mime.values()) == s.total.represented


def test_revisit_without_its_original_is_unresolved(corpus: Path) -> None:
    only = [corpus / PYWB / "dupes.warc.gz"]
    expected = warcio_view(only)
    s = archive_stats(only)
    assert s.unresolved_revisits == expected["unresolved"] > 0
    assert s.total.represented == expected["represented"]


def test_years_harvests_and_arc(corpus: Path) -> None:
    warc = corpus / "jwat/warc/IAH-20080430204825-00000-blackbook.warc.gz"
    arc = corpus / "jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz"
    s = archive_stats([warc, arc])
    w = warcio_view([warc, arc])
    assert s.total.captures == w["captures"]
    assert s.total.payload_stored == w["payload"]
    assert list(s.year) == ["2008"]
    # the WARC's warcinfo names its crawl; the ARC has none, so its name prefix is used
    assert sorted(s.harvest) == ["IAH", "archive.org-shallow"]
    assert s.harvest["IAH"].captures == s.harvest["archive.org-shallow"].captures
    hosts: Counter[str] = Counter()
    with open(warc, "rb") as f:
        for rec in WarcioIterator(f):
            if rec.rec_type == "response":
                url = rec.rec_headers.get_header("WARC-Target-URI")
                host = url[4:] if url.startswith("dns:") else url.split("/")[2]
                hosts[host.split(":")[0].lower()] += 2  # the ARC holds the same captures
    assert dict(s.hosts) == dict(hosts)


def test_harvest_of_name() -> None:
    assert harvest_of_name("WEB-20240101120000123-00001-9~h~0.warc.gz") == "WEB"
    assert harvest_of_name("IAH-20080430204825-00000-blackbook.arc.gz") == "IAH"
    assert harvest_of_name("dir/iana.warc.gz") == "iana"


def test_html_page_is_self_contained(corpus: Path, tmp_path: Path) -> None:
    s = archive_stats([corpus / PYWB / "iana.warc.gz", corpus / PYWB / "dupes.warc.gz"])
    page = render_html(s)
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(svgs) == 4
    for svg in svgs:
        root = ET.fromstring(svg)  # well-formed SVG
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # no external resource: only the SVG namespace is a URL
    assert re.findall(r"(?:src|href)=", page) == []
    assert "<script" not in page
    assert "text/css" in page and f"132 ({132 / 183:.1%} of captures)" in page


def test_cli_collection_json_and_html(corpus: Path, tmp_path: Path) -> None:
    coll = Collection.init(tmp_path / "coll")
    added = list(coll.add([corpus / PYWB / "iana.warc.gz", corpus / PYWB / "dupes.warc.gz"]))
    coll.close()
    assert [a.status for a in added] == ["indexed", "indexed"]
    html = tmp_path / "stats.html"
    res = CliRunner().invoke(cli, ["stats", str(tmp_path / "coll"), "--json",
                                   "--html", str(html)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    direct = archive_stats([corpus / PYWB / "iana.warc.gz", corpus / PYWB / "dupes.warc.gz"])
    assert got["captures"] == direct.total.to_json()
    assert got["files"] == 2 and got["urls"] == direct.urls
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    res = CliRunner().invoke(cli, ["stats", str(corpus / PYWB / "iana.warc.gz")])
    assert res.exit_code == 0
    assert "dedup savings" in res.output and "www.iana.org" in res.output


def test_a_304_revisit_counts_under_its_originals_type(tmp_path: Path) -> None:
    """A recrawl's 304 is a server-not-modified revisit whose head has no Content-Type;
    it was counted under MIME type 'unknown'. It counts where its original is (and so
    does each revisit), with its original's size; the recrawl alone (original not among
    the inputs) has nothing to say better than its own head."""
    from reduplicate_recrawl import write_recrawl

    rc = write_recrawl(tmp_path)
    crawl1, crawl2 = sorted(rc.crawl1.glob("*.warc.gz")), sorted(rc.crawl2.glob("*.warc.gz"))
    nm = [rec for rec in WarcioIterator(open(crawl2[0], "rb"))  # noqa: SIM115
          if rec.rec_headers.get_header("WARC-Target-URI") == rc.not_modified_uri
          and rec.rec_type == "revisit"]
    assert len(nm) == 1 and nm[0].rec_headers.get_header("WARC-Profile").endswith(
        "/server-not-modified")
    assert nm[0].http_headers.get_statuscode() == "304"
    assert nm[0].http_headers.get_header("Content-Type") is None
    s = archive_stats([*crawl1, *crawl2])
    assert set(s.mime) == {"text/html"}  # before: also "unknown", holding the 304
    html = s.mime["text/html"]
    assert (html.captures, html.revisits) == (s.total.captures, s.total.revisits) == (17, 8)
    assert html.to_json() == s.total.to_json()
    # sizes as warcio finds them: the 304 represents its original p4's payload
    view = warcio_view([*crawl1, *crawl2])
    assert html.represented == view["represented"]
    assert s.unresolved_revisits == view["unresolved"] == 1  # the one of a lost WARC
    alone = archive_stats(crawl2)
    assert alone.mime["unknown"].captures == 1 and alone.mime["unknown"].represented == 0
    assert alone.unresolved_revisits == 8
