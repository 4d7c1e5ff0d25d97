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

# npm packages of the browser tests and workers, one tarball each: `npm pack` fetches the
# one tarball, without resolving the package's build-time dependencies, into
# .cache/NAME-VERSION/ and only the FILES named are unpacked. Usage: npm_tarball NAME VERSION FILE...
npm_tarball() {
  local name=$1 version=$2
  shift 2
  [ -f ".cache/$name-$version/$1" ] && return 0
  if command -v npm >/dev/null; then
    mkdir -p ".cache/$name-$version"
    (cd ".cache/$name-$version" && npm pack --silent "$name@$version" >/dev/null \
      && tar xzf "$name-$version.tgz" "$@") \
      || echo "setup: could not fetch $name@$version with npm" >&2
  else
    echo "setup: npm not found: $name is fetched with it (Node.js's npm)" >&2
  fi
}
if [ "${WEBARK_BROWSER:-0}" = 1 ]; then
  # ReplayWeb.page (npm package replaywebpage: its prebuilt ui.js and sw.js, no build) for
  # the browser test that opens `webark wacz create` packages in it.
  npm_tarball replaywebpage 2.5.3 package/sw.js package/ui.js package/LICENSE
  # Webrecorder's browsertrix-behaviors (what Browsertrix runs in each page: autoscroll,
  # autoplay, autofetch, autoclick), one injectable file for the browser workers
  # (webark.crawl.browser; its BEHAVIORS_VERSION must be this version). AGPL-3.0: fetched
  # here, never vendored in the repository.
  npm_tarball browsertrix-behaviors 0.8.4 package/dist/behaviors.js package/LICENSE.md
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
