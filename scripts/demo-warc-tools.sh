#!/usr/bin/env bash
# The WARC tools demo: list, check, migrate, write and repair real third-party files.
# (README's main demo, crawl -> index -> resolution API, is scripts/demo.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
CORPUS="${WEBARK_CORPUS:-$(cd .. && pwd)/shared/corpus}"
OUT="${1:-demo-out}"
rm -rf "$OUT" && mkdir -p "$OUT"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. list a real crawl (pywb's iana.org WARC): first records"
webark warc ls "$CORPUS/pywb/warcs/iana.warc.gz" | head -n 4 || true

step "2. validate it: framing, fields, block + payload digests (both readings)"
webark warc check "$CORPUS/pywb/warcs/iana.warc.gz"

step "3. a broken file: the error is reported at its offset and reading goes on"
webark warc check "$CORPUS/pywb/warcs/example.warc" || echo "(exit status $? as expected: the file has an error)"

step "4. migrate a 2008 Heritrix ARC to WARC/1.1, one gzip member per record"
webark warc recompress "$CORPUS/jwat/arc/IAH-20080430204825-00000-blackbook.arc.gz" "$OUT/blackbook.warc.gz"
webark warc check "$OUT/blackbook.warc.gz"
warcio check "$OUT/blackbook.warc.gz" && echo "warcio check: passed"

step "5. write a capture with webark's WarcWriter (examples/write_capture.py)"
mkdir -p "$OUT/written"
python examples/write_capture.py "$OUT/written"
webark warc check "$OUT"/written/*.warc.gz
warcio check "$OUT"/written/*.warc.gz && echo "warcio check: passed" || echo \
  "(warcio hashes a chunked body with its chunk framing; webark follows WARC 1.1: the payload
  digest is over the transfer-decoded body, warc-specifications issue 22. webark warc check
  says which reading a digest matches.)"

step "6. a crawl killed mid-write: repair the .open file"
head -c 1500000 "$OUT/blackbook.warc.gz" > "$OUT/killed.warc.gz.open"
webark warc repair "$OUT/killed.warc.gz.open"
webark warc check "$OUT/killed.warc.gz"

step "done: outputs in $OUT/"
ls -l "$OUT"
