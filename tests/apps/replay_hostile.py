"""A collection of hostile captures for the robustness tests of replay
(``test_replay_hostile.py``): pathological HTML, mislabelled charsets, odd URLs, a
revisit without any original, and records whose WARC is damaged after indexing.

``build_hostile(root)`` writes the WARCs with webark's :class:`WarcWriter` (every
capture at 2021-01-01 plus seconds), adds them to ``root/colls/hostile`` and then damages
the files on disk the way archives get damaged: one WARC deleted, one truncated in the
middle of a record, one with bytes overwritten inside a gzip member.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from pathlib import Path

from replay_support import _capture, _ok, http_response, when

from webark.index.collection import Collection
from webark.warc.builders import Original
from webark.warc.writer import WarcWriter

T0 = when("2021-01-01 00:00:00")
#: A 10 MB HTML page on one line (no newline at all), links every 1,000 bytes.
HUGE_LINE = (
    b"<html><head><title>one line</title></head><body>"
    + b"".join(b'<a href="/p%d.html">x</a>' % i + b"y" * 975 for i in range(10_000))
    + b"</body></html>"
)
#: Markup that trips naive parsers.
PATHOLOGICAL = {
    "unclosed-comment.html": b'<html><head><title>c</title></head><body><a href="/a">a</a>'
    b"<!-- never closed <a href=\"http://live.example/x\">x</a>",
    "nested-scripts.html": b"<html><head><script>document.write('<script src=\"http://live"
    b".example/a.js\"><\\/script>');var s='</scr'+'ipt>';</script><script><script>"
    b"</script></head><body><img src=\"http://live.example/i.png\"></body></html>",
    "broken-tags.html": b"<html><head><title>t</title><base href=\"http://[::1\"><meta "
    b"http-equiv=refresh content=\"0; url=http://%zz\"></head><body><a href=\"http://"
    b"\xff\xfe/\"><img srcset=\", , ,\" src=\"\"><a href='javascript:'><form action=\"http"
    b"://a:99999/\"><style>@import url(\"http://live.example/%\");</style><a href=\"",
    "no-html.html": b"\x00\x01\x02\xff" * 1000,
    "deep.html": b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000,
}
#: Mislabelled charsets: header says one thing, bytes are another.
MISLABELLED = {
    # UTF-8 bytes declared as Shift_JIS
    "sjis-but-utf8.html": ("text/html; charset=shift_jis",
                           "<html><head><title>Grüße 日本</title></head><body>"
                           '<a href="/é">é</a></body></html>'.encode()),
    # Windows-1252 bytes declared as UTF-8
    "utf8-but-cp1252.html": ("text/html; charset=utf-8",
                             b'<html><head><title>Caf\xe9</title></head><body><a href="/caf'
                             b'\xe9.html">caf\xe9 \x93quoted\x94</a></body></html>'),
    # an unknown charset name and a UTF-16 page without BOM
    "bogus-charset.html": ("text/html; charset=Big5_Solaris",
                           b'<html><title>b</title><a href="/x">x</a></html>'),
    "utf16-no-bom.html": ("text/html; charset=utf-16",
                          '<html><title>u</title><a href="/x">x</a></html>'.encode("utf-16-le")),
    "css-bad.css": ("text/css; charset=koi8-r", b"a{background:url(\"/\xff\xfe.png\")}"
                    b" @import 'http://live.example/x.css'; url(  "),
}
#: URLs that are valid captures but odd to replay.
ODD_URLS = [
    "http://[2001:db8::1]:8080/ipv6.html",
    "http://xn--bcher-kva.example/idn.html",
    "http://site.test:8443/port/a:b:c.html",
    "http://site.test/pct/%E2%82%AC%zz%.html",
    "http://site.test/q?x=%ff&y=%&z=1",
]


def build_hostile(root: Path) -> Path:
    """Write, index and damage the ``hostile`` collection (module docstring); returns the
    collections folder ``root/colls``."""
    out = root / "written"
    keep = WarcWriter(out / "keep", prefix="HOSTILE")
    with keep as w:
        t = T0
        for name, body in [("huge-line.html", HUGE_LINE), *PATHOLOGICAL.items()]:
            _capture(w, f"http://site.test/{name}", _ok(body), t)
            t += timedelta(seconds=1)
        for name, (ctype, body) in MISLABELLED.items():
            _capture(w, f"http://site.test/{name}", _ok(body, ctype), t)
            t += timedelta(seconds=1)
        for url in ODD_URLS:
            _capture(w, url, _ok(b"<html><title>odd</title><a href='x'>x</a></html>"), t)
            t += timedelta(seconds=1)
        # client-side pages asked for with a query they were never captured with
        _capture(w, "http://site.test/search.html",
                 _ok(b"<html><title>search</title><script>q=location.search</script></html>"), t)
        _capture(w, "http://site.test/list.php", _ok(b"<html><title>list</title></html>"), t)
        # a revisit whose original was never archived (non-empty digest)
        orphan = b"<title>orphan</title>"
        digest = "sha1:" + base64.b32encode(hashlib.sha1(orphan).digest()).decode()
        _capture(w, "http://site.test/orphan.html", _ok(orphan), t,
                 Original("http://elsewhere.test/", "2020-01-01T00:00:00Z",
                          "<urn:uuid:00000000-0000-0000-0000-000000000000>", digest))  # fmt: skip
        # header names that are not tokens and a control character in a value (node-warc
        # records Chrome's "X-Content-Type-Options" as "X-Content Type Options")
        script = b"var ok = 1;"
        _capture(w, "http://site.test/bad-headers.js", http_response("200 OK", [
            ("Content-Type", "text/javascript"), ("X-Content Type Options", "nosniff"),
            ("X-Odd", "a\x01b"), ("Content-Length", str(len(script))),
        ], script), t)  # fmt: skip
        # a redirect to a live-web URL that is not archived
        _capture(w, "http://site.test/away", http_response(
            "302 Found", [("Location", "http://live.example/elsewhere"), ("Content-Length", "0")]
        ), t)  # fmt: skip
    doomed = {}
    for kind in ("deleted", "truncated", "corrupt"):
        wr = WarcWriter(out / kind, prefix=f"HOSTILE-{kind.upper()}",
                        compression="gzip" if kind == "corrupt" else "none")
        with wr as w:
            _capture(w, f"http://site.test/{kind}.html",
                     _ok(b"<html><title>" + kind.encode() + b"</title>" + b"z" * 50_000), T0)
        doomed[kind] = Path(wr.paths[0])
    coll = Collection.init(root / "colls" / "hostile")
    with coll:
        for res in coll.add([*(Path(p) for p in keep.paths), *doomed.values()]):
            assert res.status == "indexed", res
    warcs = coll.warcs_dir
    (warcs / doomed["deleted"].name).unlink()
    truncated = warcs / doomed["truncated"].name
    with truncated.open("r+b") as f:
        f.truncate(truncated.stat().st_size // 2)
    corrupt = warcs / doomed["corrupt"].name
    data = bytearray(corrupt.read_bytes())
    for i in range(len(data) // 3, 2 * len(data) // 3, 5):
        data[i] ^= 0x5A
    corrupt.write_bytes(bytes(data))
    return root / "colls"
