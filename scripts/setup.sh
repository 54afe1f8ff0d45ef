#!/usr/bin/env bash
# Installs what bertkit needs and builds it. Idempotent: a second run only rebuilds what changed.
#   scripts/setup.sh            system packages + build
#   scripts/setup.sh --python   also the Python environment of compat tests and benchmarks (and LibTorch)
#   scripts/setup.sh --torch    only what the demo needs: the torch wheel LibTorch comes from, and matplotlib
# BERTKIT_BUILD names the build directory (default build); BERTKIT_SETUP_BUILD=0 stops after configuring it.
# The Python environment lives outside the checkout (BERTKIT_CACHE, default ~/.cache/bertkit) so that a fresh
# clone reuses it; it is rebuilt when tests/requirements.txt changes.
set -euo pipefail
cd "$(dirname "$0")/.."
want_python=0 want_torch=0
[ "${1:-}" = "--python" ] && want_python=1 want_torch=1
[ "${1:-}" = "--torch" ] && want_torch=1

APT_PACKAGES=(build-essential cmake ninja-build pkg-config libboost-program-options-dev libicu-dev zlib1g-dev
              libbz2-dev liblzma-dev libzstd-dev libfmt-dev doctest-dev nlohmann-json3-dev libhdf5-dev libgloo-dev
              openmpi-bin bzip2 xz-utils zstd python3-venv patchelf strace)
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
  wheels_stamp=$(sha256sum tests/peer_wheels.txt | cut -c1-16)
  if [ "$(cat "$CACHE/wheels/.bertkit-stamp" 2>/dev/null)" != "$wheels_stamp" ]; then
    echo "setup: downloading the peer wheels of tests/peer_wheels.txt into $CACHE/wheels" >&2
    mkdir -p "$CACHE/wheels"
    grep -v '^#' tests/peer_wheels.txt | xargs "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps \
      --only-binary :all: -d "$CACHE/wheels"
    echo "$wheels_stamp" >"$CACHE/wheels/.bertkit-stamp"
  fi
fi

CACHE=${BERTKIT_CACHE:-$HOME/.cache/bertkit}
# The demo's packages, at the versions tests/requirements.txt pins: torch (LibTorch) and matplotlib (the loss plot
# of scripts/plot_loss.py). Only the missing ones are installed.
demo_packages=()
if [ "$want_torch" = 1 ]; then
  for module in torch matplotlib; do
    "$CACHE/venv/bin/python" -c "import $module" 2>/dev/null || demo_packages+=("$(grep -E "^$module==" tests/requirements.txt)")
  done
fi
if [ ${#demo_packages[@]} -gt 0 ]; then
  echo "setup: installing ${demo_packages[*]} into $CACHE/venv" >&2
  mkdir -p "$CACHE"
  [ -x "$CACHE/venv/bin/python" ] || "$(command -v python3)" -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install -q --disable-pip-version-check "${demo_packages[@]}"
fi

BUILD=${BERTKIT_BUILD:-build}
cmake_args=(-G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBERTKIT_PYTHON="$CACHE/venv/bin/python")
# The LibTorch tools are built when the Python environment (which brings the torch wheel) is there.
if [ "$want_torch" = 1 ] || [ -n "${BERTKIT_WITH_TORCH:-}" ]; then
  torch_prefix=$("$CACHE/venv/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  [ -n "$torch_prefix" ] && cmake_args+=(-DBERTKIT_WITH_TORCH=ON -DCMAKE_PREFIX_PATH="$torch_prefix")
fi
# What configuring prints (CMake's notes, LibTorch's warnings about CUDA architectures and kineto) asks nothing of
# the user: it goes to a log, shown only when configuring fails.
mkdir -p "$BUILD"
if ! cmake "${cmake_args[@]}" >"$BUILD/configure.log" 2>&1; then
  { grep -E -A6 'CMake Error' "$BUILD/configure.log" || tail -20 "$BUILD/configure.log"; } | head -40 >&2
  echo "setup: configuring the build failed; the whole log is $BUILD/configure.log" >&2
  exit 1
fi
[ "${BERTKIT_SETUP_BUILD:-1}" = 0 ] && exit 0
if ! cmake --build "$BUILD" -- -j"$(nproc)" >"$BUILD/build.log" 2>&1; then
  { grep -E 'error|Error' "$BUILD/build.log" || tail -20 "$BUILD/build.log"; } | head -40 >&2
  echo "setup: the build failed; the whole log is $BUILD/build.log" >&2
  exit 1
fi
test -x "$BUILD/tools/wiki-clean"
