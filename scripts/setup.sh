#!/usr/bin/env bash
# Set up webark on a fresh Debian machine: system packages (when root and missing) and a
# virtualenv in .venv with webark and its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3 python3-venv)
# The crawl demo site (Debian's python3-doc, 530 HTML pages) is installed on request.
if [ "${WEBARK_DEMO_SITE:-0}" = 1 ]; then
  [ -d /usr/share/doc/python3/html ] || [ -d /usr/share/doc/python3.11/html ] || need_apt+=(python3-doc)
fi
# The browser of the replay tests (tests/browser/): Debian's Chromium, driven by Playwright
# through executable_path (never `playwright install`, which downloads its own build).
if [ "${WEBARK_BROWSER:-0}" = 1 ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  # npm fetches the JavaScript packages below (ReplayWeb.page, browsertrix-behaviors)
  command -v npm >/dev/null || need_apt+=(npm)
fi
# Peer tools of the tests (GNU wget: a recrawl against a wget-made index).
if [ "${WEBARK_TEST_TOOLS:-0}" = 1 ]; then
  command -v wget >/dev/null || need_apt+=(wget)
fi
# PostgreSQL for the shared index store and search backend (tests start a throwaway
# cluster of their own with these binaries; nothing is set up system-wide). A real PDF
# for the search tests comes with shared-mime-info (its specification).
if [ "${WEBARK_POSTGRES:-0}" = 1 ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql-15)
  [ -f /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf ] || need_apt+=(shared-mime-info)
fi
# Apache Spark jobs (webark spark, tests/spark/): Debian's headless Java runtime here,
# PySpark below (the optional extra webark[spark]).
if [ "${WEBARK_SPARK:-0}" = 1 ]; then
  command -v java >/dev/null || [ -n "${JAVA_HOME:-}" ] || need_apt+=(openjdk-17-jre-headless)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: apt-get install ${need_apt[*]}" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install: ${need_apt[*]} (needs root)" >&2
  fi
fi

# ReplayWeb.page (npm package replaywebpage: its prebuilt ui.js and sw.js, no build) for
# the browser test that opens `webark wacz create` packages in it. `npm pack` fetches the
# one tarball, without resolving the package's build-time dependencies.
RWP_VERSION=2.5.3
if [ "${WEBARK_BROWSER:-0}" = 1 ] && [ ! -f ".cache/replaywebpage-$RWP_VERSION/package/sw.js" ]; then
  if command -v npm >/dev/null; then
    mkdir -p ".cache/replaywebpage-$RWP_VERSION"
    (cd ".cache/replaywebpage-$RWP_VERSION" && npm pack --silent "replaywebpage@$RWP_VERSION" >/dev/null \
      && tar xzf "replaywebpage-$RWP_VERSION.tgz" package/ui.js package/sw.js package/LICENSE) \
      || echo "setup: could not fetch replaywebpage@$RWP_VERSION with npm" >&2
  else
    echo "setup: npm not found: the ReplayWeb.page test needs it (Node.js's npm)" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
extras=dev
[ "${WEBARK_SPARK:-0}" = 1 ] && extras=dev,spark
.venv/bin/python -m pip install -q -e ".[$extras]" 2>&1 | grep -v "is ignored: it is neither" || true
.venv/bin/python -c "import webark, fastwarc, warcio" && echo "setup: ok (.venv ready)" >&2
