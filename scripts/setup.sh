#!/usr/bin/env bash
# Installs what bertkit needs and builds it. Idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh            system packages + build
#   scripts/setup.sh --python   also the Python environment of compat tests and benchmarks
# The Python environment lives outside the checkout (BERTKIT_CACHE, default ~/.cache/bertkit) so that a fresh
# clone reuses it; it is rebuilt when tests/requirements.txt changes.
set -euo pipefail
cd "$(dirname "$0")/.."
want_python=0
[ "${1:-}" = "--python" ] && want_python=1

APT_PACKAGES=(build-essential cmake ninja-build pkg-config libboost-program-options-dev libicu-dev zlib1g-dev
              libbz2-dev libfmt-dev doctest-dev nlohmann-json3-dev libhdf5-dev bzip2 python3-venv)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "$want_python" = 1 ]; then
  CACHE=${BERTKIT_CACHE:-$HOME/.cache/bertkit}
  VENV=$CACHE/venv
  stamp=$(sha256sum tests/requirements.txt | cut -c1-16)
  if [ "$(cat "$VENV/.bertkit-stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "setup: preparing the Python environment in $VENV" >&2
    mkdir -p "$CACHE"
    PY=$(command -v python3)
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r tests/requirements.txt
    echo "$stamp" >"$VENV/.bertkit-stamp"
  fi
fi

BUILD=${BERTKIT_BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
        -DBERTKIT_PYTHON="${BERTKIT_CACHE:-$HOME/.cache/bertkit}/venv/bin/python" >/dev/null
fi
cmake --build "$BUILD" -- -j"$(nproc)" | grep -vE '^\[[0-9]+/[0-9]+\]' || true
test -x "$BUILD/tools/wiki-clean"
