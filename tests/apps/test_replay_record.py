"""Record mode (``webark serve --record``, pywb's ``/{coll}/record/{url}``) through
curl, against a site served on 127.0.0.1: the page comes back rewritten with every
subresource and link pointing to the record endpoint, each fetch is archived once and
indexed at once, the WARCs pass ``webark warc check``, and the page replays from the
collection with the live site stopped."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

from http_wait import webark_serve_process
from record_site import DOT, SUBRESOURCES, new_collection, record_pages, warc_check
from sites import TestSite
from webark.apps.replay.paths import parse_target
from webark.apps.replay.record import upstream_headers
from webark.warc.reader import ArchiveReader

_ATTR = re.compile(rb'(?:src|href)="([^"]*)"')
_CSS_URL = re.compile(rb"url\(([^)]*)\)")


def curl(url: str, *args: str) -> tuple[int, bytes]:
    """``curl -s ARGS URL``: (status, body)."""
    r = subprocess.run(["curl", "-s", "-w", "%{stderr}%{http_code}", *args, url],
                       capture_output=True, timeout=60, check=True)  # fmt: skip
    return int(r.stderr.decode()[-3:]), r.stdout


def record_args() -> list[str]:
    return ["--record", "--allow-private", "--resolve-only"]


def responses(coll: Path) -> Counter[str]:
    """Target URIs of the response records in the collection's WARCs."""
    return Counter(r.target_uri for w in (coll / "warcs").iterdir()
                   for r in ArchiveReader(str(w)) if r.type == "response")  # fmt: skip


def test_record_through_curl_then_replay_with_the_site_stopped(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    site = TestSite(record_pages()).start()
    try:
        with webark_serve_process(str(tmp_path), *record_args()) as (base, _):
            rec = f"{base}rec/record/"
            status, page = curl(rec + site.url("/"))
            assert status == 200
            links = [m.decode() for m in _ATTR.findall(page)]
            o = site.origin
            assert links == ["/_webark/client.js", f"/rec/record/cs_/{o}/style.css",
                             f"/rec/record/js_/{o}/app.js", f"/rec/record/im_/{o}/img/dot.png",
                             f"/rec/record/{o}/second.html"]  # fmt: skip
            # what a browser then asks for: the page's links, the style sheet's image,
            # the JSON the script fetches (client.js sends it to the record prefix)
            got = {}
            for link in links[1:4]:
                got[link] = curl(base[:-1] + link)
            (bg,) = _CSS_URL.findall(got[f"/rec/record/cs_/{o}/style.css"][1])
            assert bg.decode() == f"/rec/record/im_/{o}/img/bg.png"
            got["bg"] = curl(base[:-1] + bg.decode())
            got["json"] = curl(f"{rec}{o}/data.json")
            assert all(s == 200 for s, _ in got.values())
            assert got[f"/rec/record/im_/{o}/img/dot.png"][1] == DOT
            # indexed at once: replay has it while the server still records
            status, _ = curl(f"{base}rec/{o}/img/dot.png", "-L")
            assert status == 200
        # every request reached the live site once, each through the recorder (curl's UA)
        hits = site.snapshot()
        assert Counter(h.path for h in hits) == Counter(["/", *SUBRESOURCES])
        assert all(h.user_agent.startswith("curl/") for h in hits)
    finally:
        site.stop()
    assert responses(coll) == Counter(site.url(p) for p in ["/", *SUBRESOURCES])
    check = warc_check(coll)
    assert check.returncode == 0, check.stdout + check.stderr
    assert " 0 errors" in check.stdout
    # the site is gone: replay from the collection alone
    with webark_serve_process(str(tmp_path)) as (base, _):
        status, page = curl(f"{base}rec/{site.url('/')}", "-L")
        assert status == 200 and b'<p id="p">recorded</p>' in page
        stamped = re.search(rb'src="(/rec/\d{14}im_/[^"]+/img/dot\.png)"', page)
        assert stamped is not None
        # the image may have been captured a second after the page: the page's timestamp
        # then redirects (302) to the image's own capture, as in any Wayback
        assert curl(base[:-1] + stamped.group(1).decode(), "-L") == (200, DOT)
        status, _ = curl(f"{base}rec/record/{site.url('/')}")
        assert status == 404  # no record mode without --record


def test_record_refuses_loopback_without_allow_private(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    args = ("--record", "--resolve-only")
    with TestSite(record_pages()) as site, webark_serve_process(str(tmp_path), *args) as (base, _):
        status, body = curl(f"{base}rec/record/{site.url('/')}")
        assert status == 403
        assert b"private" in body.lower() or b"loopback" in body.lower()
        assert site.paths() == []
    assert responses(coll) == Counter()


def test_record_upstream_failure_is_502_and_writes_nothing(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    with webark_serve_process(str(tmp_path), *record_args()) as (base, _):
        status, _ = curl(f"{base}rec/record/http://127.0.0.1:1/")
        assert status == 502
    assert responses(coll) == Counter()


def test_record_refuses_what_is_no_web_url_with_400(tmp_path: Path) -> None:
    """A typo (no dotted host) or another scheme: 400 before any lookup or fetch (they
    were 502 after a resolver lookup)."""
    coll = new_collection(tmp_path)
    with webark_serve_process(str(tmp_path), *record_args()) as (base, _):
        for target in ("notaurl", "ftp://127.0.0.1/x"):
            status, body = curl(f"{base}rec/record/{target}")
            assert status == 400, (target, body[:300])
    assert responses(coll) == Counter()
    assert not list(coll.rglob("crawl.log")) or all(
        p.read_text() == "" for p in coll.rglob("crawl.log"))


def test_record_paths_parse() -> None:
    t = parse_target("/c/record/im_/http://a.org/i.png", "v=1")
    assert (t.kind, t.coll, t.url, t.modifier) == ("record", "c", "http://a.org/i.png?v=1", "im_")
    t = parse_target("/c/record/http://a.org/")
    assert (t.kind, t.url, t.modifier) == ("record", "http://a.org/", "")
    t = parse_target("/c/record/a.org/x")
    assert (t.kind, t.url) == ("record", "http://a.org/x")


def test_upstream_headers_keep_the_browser_s_and_map_the_referer() -> None:
    sent = upstream_headers([
        ("User-Agent", "UA"), ("Cookie", "replay=1"), ("Accept-Encoding", "gzip, zstd, br"),
        ("Referer", "http://127.0.0.1:8080/c/record/cs_/http://a.org/s.css"),
        ("Range", "bytes=0-1"), ("Accept", "*/*"),
    ], "/c/record/")  # fmt: skip
    assert sent == [("User-Agent", "UA"), ("Accept-Encoding", "gzip, br"),
                    ("Referer", "http://a.org/s.css"), ("Accept", "*/*")]  # fmt: skip
    assert upstream_headers([("Referer", "http://127.0.0.1:8080/c/2014/http://a.org/")],
                            "/c/record/") == []  # fmt: skip


def test_record_options_are_checked(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from webark.cli.serve_cmds import serve

    r = CliRunner().invoke(serve, [str(tmp_path), "--record", "--workers", "2"])
    assert r.exit_code == 2 and "one worker" in r.output
    r = CliRunner().invoke(serve, [str(tmp_path), "--allow-private"])
    assert r.exit_code == 2 and "go with --record" in r.output
    r = CliRunner().invoke(serve, [str(tmp_path), "--record", "--resolve", "nohost"])
    assert r.exit_code == 2 and "expected HOST:IP (or HOST=IP)" in r.output
    r = CliRunner().invoke(serve, [str(tmp_path), "--record", "--resolve", "a.test=127.0.0.300"])
    assert r.exit_code == 2 and "does not appear to be an IPv4 or IPv6 address" in r.output


def test_resolve_takes_the_crawls_form_too() -> None:
    """``HOST:IP`` (as ``webark crawl --resolve``) and ``HOST=IP`` alike."""
    from webark.cli.user_io import resolve_overrides

    assert resolve_overrides(["A.test:127.0.0.2", "b.test=127.0.0.3", "c.test:[::1]"]) == {
        "a.test": "127.0.0.2", "b.test": "127.0.0.3", "c.test": "::1"}


def test_patch_records_only_what_the_collection_lacks(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    site = TestSite(record_pages()).start()
    o = site.origin
    try:
        with webark_serve_process(str(tmp_path), *record_args()) as (base, _):
            patch = f"{base}rec/patch/"
            assert curl(f"{base}rec/record/im_/{o}/img/dot.png") == (200, DOT)
            status, page = curl(f"{patch}{o}/")  # not in the collection: recorded
            assert status == 200
            assert f'src="/rec/patch/im_/{o}/img/dot.png"'.encode() in page
            assert f'href="/rec/patch/cs_/{o}/style.css"'.encode() in page
            assert curl(f"{patch}im_/{o}/img/dot.png") == (200, DOT)  # archived: not fetched
            assert curl(f"{patch}cs_/{o}/style.css")[0] == 200  # missing: recorded
            again = curl(f"{patch}{o}/")  # archived now: served, not fetched
            assert again == (200, page)
            assert Counter(site.paths()) == Counter(["/img/dot.png", "/", "/style.css"])
    finally:
        site.stop()
    assert responses(coll) == Counter(site.url(p) for p in ["/img/dot.png", "/", "/style.css"])


def test_patch_paths_parse() -> None:
    t = parse_target("/c/patch/js_/https://a.org/a.js")
    assert (t.kind, t.coll, t.url, t.modifier) == ("patch", "c", "https://a.org/a.js", "js_")


def test_record_follows_a_redirect_into_the_record_endpoint(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    with TestSite(record_pages()) as site, \
            webark_serve_process(str(tmp_path), *record_args()) as (base, _):  # fmt: skip
        r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}",
                            f"{base}rec/record/{site.url('/moved')}"],
                           capture_output=True, text=True, check=True)  # fmt: skip
        assert r.stdout == f"301 {base}rec/record/{site.url('/second.html')}"
        status, page = curl(f"{base}rec/record/{site.url('/moved')}", "-L")
        assert status == 200 and b"<p>two</p>" in page
    # every visit is recorded (pywb's "keep"): the redirect twice, its target once
    assert responses(coll) == Counter({site.url("/moved"): 2, site.url("/second.html"): 1})


def test_record_https_by_a_resolved_name_keeps_the_tls_fields(tmp_path: Path) -> None:
    import ssl

    import trustme

    coll = new_collection(tmp_path)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    trustme.CA().issue_cert("site.test").configure_cert(ctx)  # self-signed: not checked
    site = TestSite(record_pages())
    site.server.socket = ctx.wrap_socket(site.server.socket, server_side=True)
    origin = f"https://site.test:{site.port}"
    with site, webark_serve_process(str(tmp_path), "--record", "--allow-private",
                                    "--resolve-only", "--resolve",
                                    "site.test=127.0.0.1") as (base, _):  # fmt: skip
        status, page = curl(f"{base}rec/record/{origin}/")
        assert status == 200
        assert f'href="/rec/record/cs_/{origin}/style.css"'.encode() in page
        assert site.paths() == ["/"]
        assert site.snapshot()[0].headers["host"] == f"site.test:{site.port}"
        status, _ = curl(f"{base}rec/record/https://other.test:{site.port}/")
        assert status == 502  # not in --resolve: never looked up
    recs = [r for w in (coll / "warcs").iterdir() for r in ArchiveReader(str(w))
            if r.type in ("response", "request")]  # fmt: skip
    assert [(r.type, r.target_uri) for r in recs] == [("response", f"{origin}/"),
                                                     ("request", f"{origin}/")]  # fmt: skip
    for r in recs:
        assert r.headers.get_all("warc-protocol") == ["http/1.1", "tls/1.3"]
        assert r.headers.get("warc-cipher-suite", "").startswith("TLS_")


def test_record_into_a_cdxj_store_collection_is_409(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    toml = coll / "collection.toml"
    toml.write_text(toml.read_text().replace('store = "sqlite"', 'store = "cdxj"'))
    with TestSite(record_pages()) as site, \
            webark_serve_process(str(tmp_path), *record_args()) as (base, _):  # fmt: skip
        status, body = curl(f"{base}rec/record/{site.url('/')}")
        assert status == 409 and b"cdxj" in body
        assert site.paths() == []  # nothing fetched when it cannot be written


def test_record_of_a_url_the_access_rules_block_answers_451(tmp_path: Path) -> None:
    coll = new_collection(tmp_path)
    site = TestSite(record_pages())
    (coll / "access-rules.yaml").write_text(f"- url: {site.url('/style.css')}\n  policy: block\n")
    with site, webark_serve_process(str(tmp_path), *record_args()) as (base, _):
        status, _ = curl(f"{base}rec/record/cs_/{site.url('/style.css')}")
        assert status == 451
        status, _ = curl(f"{base}rec/record/{site.url('/')}")
        assert status == 200
