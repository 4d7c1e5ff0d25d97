#!/usr/bin/env bash
# The webark demo (README's first command): set up, then the main job on a real site.
#   1. serve Debian's python3-doc (530 HTML pages) on 127.0.0.1,
#   2. crawl it politely into WARCs + crawl.log + reports,
#   3. validate the WARCs, build a collection and its index,
#   4. start `webark serve` (resolution API + replay) and query the CDX server,
#   5. stop the live site and check that the crawled docs replay from the archive alone;
#      print the URL to open,
#   6. pack the job as a WACZ (ReplayWeb.page). On a terminal it then keeps serving
#      until Ctrl-C; otherwise (CI, scripts) it stops after the checks.
# The WARC tools demo is scripts/demo-warc-tools.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
WEBARK_DEMO_SITE=1 bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
OUT="${1:-demo-out}"
rm -rf "$OUT" && mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

SITE=""
for d in /usr/share/doc/python3/html /usr/share/doc/python3.11/html; do
  [ -f "$d/index.html" ] && SITE="$d" && break
done
[ -n "$SITE" ] || { echo "python3-doc is not installed (apt-get install python3-doc)"; exit 1; }

free_port() { python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SITE_PORT=$(free_port)
API_PORT=$(free_port)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

step "1. serve $SITE on http://127.0.0.1:$SITE_PORT/"
python -m http.server --bind 127.0.0.1 "$SITE_PORT" --directory "$SITE" >"$OUT/site-access.log" 2>&1 &
SITE_PID=$!
pids+=("$SITE_PID")
for _ in $(seq 50); do python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$SITE_PORT/')" 2>/dev/null && break; sleep 0.1; done

step "2. crawl it (robots.txt obeyed, one request at a time; delays off for a local demo)"
cat > "$OUT/job.yaml" <<YAML
seeds: [http://127.0.0.1:$SITE_PORT/]
job_dir: $OUT/job
contact: webarchive@example.org
allow_private: true     # the demo site is on loopback
min_delay: 0
max_delay: 0
scope: {max_trans_hops: 0}   # stay on the demo host: no embeds from other hosts
YAML
time webark crawl --no-progress "$OUT/job.yaml"
echo "WARCs:     $(ls "$OUT"/job/warcs/*.warc.gz)"
echo "crawl.log: $OUT/job/logs/crawl.log ($(wc -l < "$OUT/job/logs/crawl.log") lines)"
echo "reports:   $(ls "$OUT"/job/reports | tr '\n' ' ')"
head -n 3 "$OUT/job/logs/crawl.log"

step "3. validate the WARCs and index them into a collection"
webark warc check "$OUT"/job/warcs/*.warc.gz
webark collection init "$OUT/collections/pydocs"
webark collection add --link "$OUT/collections/pydocs" "$OUT"/job/warcs/*.warc.gz

step "4. the resolution API: http://127.0.0.1:$API_PORT/pydocs/cdx"
webark serve "$OUT/collections" --port "$API_PORT" >"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
pids+=("$SERVE_PID")
for _ in $(seq 100); do python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$API_PORT/')" 2>/dev/null && break; sleep 0.1; done
q() { echo "\$ curl '$1'"; python -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" "$1"; }
q "http://127.0.0.1:$API_PORT/pydocs/cdx?url=127.0.0.1:$SITE_PORT/library/&matchType=prefix&limit=3"
q "http://127.0.0.1:$API_PORT/pydocs/cdx?url=http://127.0.0.1:$SITE_PORT/tutorial/index.html&output=json"
q "http://127.0.0.1:$API_PORT/pydocs/timemap/link/http://127.0.0.1:$SITE_PORT/"

step "5. replay: the live site is stopped, the archive answers"
kill "$SITE_PID" && wait "$SITE_PID" 2>/dev/null || true
REPLAY="http://127.0.0.1:$API_PORT/pydocs"
# a capture of the index page (its timestamp from the CDX API), and the replay of it and of
# the library index: 200, rewritten HTML (links into the archive), the banner
python - "$REPLAY" "http://127.0.0.1:$SITE_PORT/" <<'PY'
import json, re, sys, time, urllib.request
replay, site = sys.argv[1], sys.argv[2]
cdx = urllib.request.urlopen(f"{replay}/cdx?url={site}&output=json&limit=1").read()
ts = json.loads(cdx)["timestamp"]
for page, link in (("", "library/index.html"), ("library/index.html", "functions.html")):
    url = f"{replay}/{ts}/{site}{page}"
    t0 = time.perf_counter()
    with urllib.request.urlopen(url) as r:
        body, status, ctype = r.read().decode("utf-8"), r.status, r.headers["Content-Type"]
    ms = (time.perf_counter() - t0) * 1000
    target = re.escape(site + ("library/" if page else "") + link)
    inside = re.search(rf'href="(http://[^/"]+)?/pydocs/\d{{1,14}}/{target}"', body)
    checks = {"200": status == 200, "text/html": ctype.startswith("text/html"),
              "links rewritten into the archive": inside is not None,
              "banner": "__webark_banner" in body}
    print(f"GET {url}\n    {status} {ctype}, {len(body):,} chars in {ms:.0f} ms; "
          + ", ".join(f"{k}: {'ok' if v else 'MISSING'}" for k, v in checks.items()))
    if not all(checks.values()):
        sys.exit(f"replay check failed for {url}")
print(f"\nOpen in a browser:\n  {replay}/{ts}/{site}\n  {replay}/*/{site}*   (every URL of the crawl)"
      f"\n  {replay}/   (search the collection)")
PY

step "6. the same crawl as a WACZ package (for ReplayWeb.page; pages/pages.jsonl lists its pages)"
webark wacz create "$OUT/job" -o "$OUT/pydocs.wacz"
head -c 300 "$OUT/job/pages/pages.jsonl"; echo " …"

step "done: everything is in $OUT/"
if [ -t 1 ]; then
  echo "Serving $OUT/collections at http://127.0.0.1:$API_PORT/ until Ctrl-C."
  wait "$SERVE_PID" || true
else
  echo "Serve it again: webark serve $OUT/collections   (then open http://127.0.0.1:8080/)"
fi
