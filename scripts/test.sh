#!/usr/bin/env bash
# Run webark's checks and tests: set-up (idempotent), ruff, import layers, mypy, pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh -k reader -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
V=.venv/bin
echo "== ruff" && $V/ruff check --no-cache src tests bench
echo "== import layers (DESIGN.md)" && $V/lint-imports
echo "== mypy" && $V/mypy
echo "== pytest" && $V/pytest "$@"
