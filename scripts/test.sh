#!/usr/bin/env bash
# README command 2: installs what the tests need, builds, and runs every test (unit, cli, compat) with ctest.
# Compat tests read the third-party fixtures in ../shared/fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --python
cd "${BERTKIT_BUILD:-build}"
ctest --output-on-failure -j2 "$@"
