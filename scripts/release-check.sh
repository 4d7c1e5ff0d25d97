#!/usr/bin/env bash
# Release check (CI runs it after the tests, from .ci/run): what a user gets from the
# release files, tried as they would use them.
#   1. build the sdist, and the wheel from that sdist (python -m build), so a file the
#      sdist misses fails here; the version in their names is webark.__version__ and
#      CHANGELOG.md has an entry for it;
#   2. install the wheel into a fresh virtualenv (no repository, no .venv, dependencies
#      from the package index) and run `webark --version` from it;
#   3. with that install alone: serve a small site on 127.0.0.1, crawl it, check and index
#      the WARCs, stop the site, and replay the pages (rewritten, and id_ byte for byte)
#      from `webark serve`.
# Needs python3 with venv and a package index; touches only a temporary folder.
# Exit status: 0 when every step worked.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
BUILD_PY=${BUILD_PY:-$ROOT/.venv/bin/python}   # has `build` (pyproject [dev])
WORK=$(mktemp -d "${TMPDIR:-/tmp}/webark-release.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { printf '\n== release-check: %s\n' "$*"; }
fail() { echo "release-check: FAILED: $*" >&2; exit 1; }

VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' src/webark/__init__.py)
[ -n "$VERSION" ] || fail "no __version__ in src/webark/__init__.py"
grep -q "^## \[$VERSION\]" CHANGELOG.md || fail "CHANGELOG.md has no entry '## [$VERSION]'"

step "1. sdist and wheel of webark $VERSION"
"$BUILD_PY" -m build --outdir "$WORK/dist" . >"$WORK/build.log" 2>&1 \
  || { tail -n 30 "$WORK/build.log"; fail "python -m build"; }
WHEEL="$WORK/dist/webark-$VERSION-py3-none-any.whl"
SDIST="$WORK/dist/webark-$VERSION.tar.gz"
[ -f "$WHEEL" ] && [ -f "$SDIST" ] || { ls -l "$WORK/dist"; fail "expected $WHEEL and $SDIST"; }
ls -l "$WORK/dist"
# what replay and the rewriter load at run time must be in the wheel
"$PY" - "$WHEEL" <<'PY' || fail "files missing from the wheel"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["webark/py.typed", "webark/rewrite/client.js", "webark/apps/replay/static/banner.js",
        "webark/apps/replay/static/webark.css", "webark/apps/replay/templates/base.html",
        "webark/apps/replay/templates/error.html"]
missing = [n for n in need if n not in names]
print(f"wheel: {len(names)} files" + (f"; missing {missing}" if missing else ""))
sys.exit(1 if missing else 0)
PY

step "2. a fresh virtualenv with the wheel alone"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$WORK/venv/bin/python" -m pip install -q "$WHEEL" >"$WORK/pip.log" 2>&1 \
  || { grep -v "is ignored: it is neither" "$WORK/pip.log" | tail -n 30; fail "pip install $WHEEL"; }
export PATH="$WORK/venv/bin:$PATH"
cd "$WORK"   # nothing of the repository on sys.path
[ "$(command -v webark)" = "$WORK/venv/bin/webark" ] || fail "webark is not the installed one"
webark --version | tee "$WORK/version.txt"
head -n 1 "$WORK/version.txt" | grep -qx "webark $VERSION" || fail "webark --version is not $VERSION"
grep -q '^fastwarc [0-9]' "$WORK/version.txt" || fail "no fastwarc version"
grep -q '^warcio [0-9]' "$WORK/version.txt" || fail "no warcio version"
grep -q "^Python [0-9.]* (.*$WORK/venv/bin/python" "$WORK/version.txt" || fail "not the fresh venv's Python"
python -c "import webark, sys; sys.exit(0 if webark.__file__.startswith('$WORK/venv/') else 1)" \
  || fail "webark imported from outside the fresh venv"

step "3. crawl -> index -> replay, from the installed wheel"
SITE="$WORK/site"
mkdir -p "$SITE/docs"
printf 'User-agent: *\nDisallow: /private/\n' >"$SITE/robots.txt"
cat >"$SITE/index.html" <<'HTML'
<!doctype html><html><head><title>Release check home</title>
<link rel="stylesheet" href="style.css"></head>
<body><h1>Release check</h1><a href="docs/page.html">the docs page</a>
<a href="private/secret.html">not to be crawled</a><img src="logo.svg" alt="logo"></body></html>
HTML
cat >"$SITE/docs/page.html" <<'HTML'
<!doctype html><html><head><title>Docs page</title></head>
<body><p>Archived text 7f3a.</p><a href="../index.html">home</a></body></html>
HTML
printf 'body { background: url("logo.svg") no-repeat; }\n' >"$SITE/style.css"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\n' >"$SITE/logo.svg"
mkdir -p "$SITE/private" && echo "secret" >"$SITE/private/secret.html"

free_port() { python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 100); do python -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1])" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
SITE_PORT=$(free_port)
python -m http.server --bind 127.0.0.1 "$SITE_PORT" --directory "$SITE" >"$WORK/site.log" 2>&1 &
SITE_PID=$!
pids+=("$SITE_PID")
wait_http "http://127.0.0.1:$SITE_PORT/" || fail "the test site did not start"
BASE="http://127.0.0.1:$SITE_PORT/"

cat >"$WORK/job.yaml" <<YAML
seeds: [$BASE]
job_dir: $WORK/job
contact: mailto:release-check@example.org
allow_private: true     # the site is on loopback
min_delay: 0
max_delay: 0
YAML
webark crawl --no-progress "$WORK/job.yaml" >"$WORK/crawl.out" 2>&1 || { cat "$WORK/crawl.out"; fail "webark crawl"; }
LOG="$WORK/job/logs/crawl.log"
for path in robots.txt "" docs/page.html style.css logo.svg; do
  grep -Eq "^\S+ +200 +[0-9]+ $BASE$path " "$LOG" || { cat "$LOG"; fail "crawl.log has no 200 for /$path"; }
done
grep -q "private/secret.html" "$LOG" && ! grep -Eq "^\S+ +200 +[0-9]+ ${BASE}private/" "$LOG" \
  || { cat "$LOG"; fail "robots.txt was not obeyed (or the disallowed link not logged)"; }
webark warc check "$WORK"/job/warcs/*.warc.gz || fail "webark warc check"
webark index -o "$WORK/all.cdxj" "$WORK/job/warcs" || fail "webark index"
[ "$(grep -c '"status": "200"' "$WORK/all.cdxj")" -ge 5 ] || { cat "$WORK/all.cdxj"; fail "index lines"; }
webark collection init "$WORK/colls/site" >/dev/null 2>&1
webark collection add --no-progress "$WORK/colls/site" "$WORK"/job/warcs/*.warc.gz || fail "collection add"
kill "$SITE_PID"; wait "$SITE_PID" 2>/dev/null || true   # replay from the archive alone

SERVE_PORT=$(free_port)
webark serve "$WORK/colls" --port "$SERVE_PORT" --access-log >"$WORK/serve.log" 2>&1 &
pids+=("$!")
wait_http "http://127.0.0.1:$SERVE_PORT/" || { cat "$WORK/serve.log"; fail "webark serve did not start"; }
python - "http://127.0.0.1:$SERVE_PORT/site" "$BASE" "$SITE" <<'PY' || fail "replay"
import json, re, sys, urllib.request
replay, base, site = sys.argv[1], sys.argv[2], sys.argv[3]
def get(url):
    with urllib.request.urlopen(url) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()
status, _, raw = get(f"{replay}/cdx?url={base}docs/page.html&output=json")
lines = [json.loads(x) for x in raw.decode().splitlines()]
assert status == 200 and len(lines) == 1, raw
ts = lines[0]["timestamp"]
status, ctype, body = get(f"{replay}/{ts}/{base}docs/page.html")
text = body.decode()
assert status == 200 and ctype.startswith("text/html"), (status, ctype)
assert "Archived text 7f3a." in text and "<title>Docs page</title>" in text
home = re.escape(f"{base}index.html")
assert re.search(rf'href="(http://[^/"]+)?/site/\d{{14}}/{home}"', text), text  # in the archive
status, _, raw = get(f"{replay}/{ts}id_/{base}docs/page.html")
assert status == 200 and raw == open(f"{site}/docs/page.html", "rb").read(), raw[:200]
status, _, body = get(f"{replay}/{ts}/{base}")
assert status == 200 and "Release check" in body.decode()
print(f"replay: {replay}/{ts}/{base}docs/page.html 200, rewritten; id_ byte for byte")
PY
grep -q '"GET /site/' "$WORK/serve.log" || { cat "$WORK/serve.log"; fail "no access log lines"; }

step "ok: webark $VERSION builds, installs into a fresh venv, crawls, indexes and replays"
