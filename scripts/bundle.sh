#!/usr/bin/env bash
# scripts/bundle.sh [BUILD] OUT: one relocatable folder of this build, for a machine without a compiler (a GPU
# node, a cluster): the installed tools and torch_unit_tests, stripped; the shared libraries they need beyond glibc,
# libstdc++ and LibTorch (Boost program_options, ICU, fmt, zstd, libaec/libsz, ...); the presets, man pages,
# Makefile.data and pipelines. LibTorch itself is not carried (a CUDA torch is gigabytes): OUT/bin/TOOL finds it
# in BERTKIT_TORCH_LIB or in the torch that `python3` imports, with the CUDA runtime beside that wheel.
#
# Layout of OUT:
#   bin/TOOL          a launcher for each tool and for torch_unit_tests: runs OUT/bundle-run TOOL
#   bundle-run        unpacks the payload once, sets LD_LIBRARY_PATH to LibTorch's folders, execs the tool
#   payload.tar.xz    bin/, libexec/bertkit/, lib/ and share/bertkit/ of the installation, compressed so that the
#                     folder stays under 50 MiB (the binaries and ICU's data are ~80 MB, ~20 MB compressed)
#   payload.id        the payload's hash: where it is unpacked (OUT/.unpacked-ID, or ~/.cache/bertkit/ when OUT is
#                     read-only), so a new bundle never runs an old one's binaries
#   torch-tools       the tools that need LibTorch (the launcher says what to set when it is missing)
#   torch-version     the torch they were built against
#   build-info        the commit and whether bertkit's CUDA kernels were built
#   share/            the man pages, presets, Makefile.data and pipelines, readable without unpacking
# Nothing in it names this machine's paths: the binaries' RUNPATH is $ORIGIN-relative, presets are found beside
# the executable (config_presets.cpp). Needs patchelf and xz (scripts/setup.sh installs them).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 2 ]; then BUILD=$1; OUT=$2
elif [ $# -eq 1 ]; then BUILD=$SRC/build; OUT=$1
else echo "usage: scripts/bundle.sh [BUILD] OUT" >&2; exit 2; fi
BUILD=$(cd "$BUILD" && pwd)
for tool in patchelf xz; do
  command -v $tool >/dev/null || { echo "bundle.sh: needs $tool (scripts/setup.sh installs it)" >&2; exit 1; }
done
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
  echo "bundle.sh: $OUT exists and is not empty; remove it first" >&2; exit 1
fi
STAGE=$(mktemp -d); trap 'rm -rf "$STAGE"' EXIT

cmake --install "$BUILD" --prefix "$STAGE/p" --strip >/dev/null
if [ -x "$BUILD/tests/torch_unit_tests" ]; then
  strip -o "$STAGE/p/libexec/bertkit/torch_unit_tests" "$BUILD/tests/torch_unit_tests"
fi
mkdir -p "$STAGE/p/lib"
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
executables=()
for f in "$STAGE"/p/bin/* "$STAGE"/p/libexec/bertkit/*; do is_elf "$f" && executables+=("$f"); done

# The libraries to carry: what ldd resolves outside the base system (glibc, libstdc++, libgcc) and outside
# LibTorch and the CUDA runtime, which the launcher finds on the target.
base='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libutil|libresolv|libstdc\+\+|libgcc_s)\.so'
outside='^(libtorch|libc10|libgomp|libcudart|libcuda|libnvrtc|libcupti|libcu[a-z]+|libnccl|libnvshmem|libnvJitLink|libcudnn)'
torch_tools=()
for f in "${executables[@]}"; do
  # Read once: `ldd | grep -q` under pipefail fails whenever grep stops reading before ldd is done writing.
  deps=$(ldd "$f")
  if grep -q 'not found' <<<"$deps"; then
    echo "bundle.sh: $f: $(grep 'not found' <<<"$deps" | head -1 | sed 's/^[[:space:]]*//'): build on a machine that has it" >&2
    exit 1
  fi
  grep -q 'libtorch' <<<"$deps" && torch_tools+=("$(basename "$f")")
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' <<<"$deps" | while read -r name path; do
    [[ $name =~ $base || $name =~ $outside ]] && continue
    [ -e "$STAGE/p/lib/$name" ] || cp -L "$path" "$STAGE/p/lib/$name"
  done
done
# The torch the LibTorch tools were built against, for the launcher's message when none is found.
torch_dir=$(ldd "${executables[@]}" 2>/dev/null | sed -n 's|.*libtorch_cpu.so => \(.*\)/lib/libtorch_cpu.so.*|\1|p' | sed -n 1p)
torch_version=$(sed -n "s/^__version__ = '\(.*\)'$/\1/p" "$torch_dir/version.py" 2>/dev/null)
echo "torch ${torch_version:-of the build}" >"$STAGE/torch-version"
for f in "${executables[@]}"; do
  case $f in */libexec/*) patchelf --set-rpath '$ORIGIN/../../lib' "$f" ;; *) patchelf --set-rpath '$ORIGIN/../lib' "$f" ;; esac
done
for f in "$STAGE"/p/lib/*; do chmod u+w "$f"; patchelf --set-rpath '$ORIGIN' "$f"; done

# Made in the staging folder and moved into place at the end: a failure leaves no partial OUT.
DEST=$STAGE/out
mkdir -p "$DEST/bin"
# The payload, the same bytes for the same files: sorted names, no owners or times.
# xz -1: the 82 MB payload in 12 s of CPU and 26.6 MB, against -6's 45 s and 18.4 MB (measured on this project's
# 2-core machine); both far under the 50 MiB a bundle may take, and a loaded machine waits a quarter as long.
tar -C "$STAGE/p" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - bin libexec lib share/bertkit |
  xz -1 -T0 >"$DEST/payload.tar.xz"
sha256sum "$DEST/payload.tar.xz" | cut -c1-16 >"$DEST/payload.id"
# bert-finetune runs its LibTorch half, bert-finetune-torch: it needs LibTorch too.
[[ " ${torch_tools[*]} " == *" bert-finetune-torch "* ]] && torch_tools+=(bert-finetune)
printf '%s\n' "${torch_tools[@]}" >"$DEST/torch-tools"
cp "$STAGE/torch-version" "$DEST/torch-version"
# What was built, for the reports made with it (bench/gpu_check.sh prints it).
commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$SRC" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit (modified)"
echo "commit $commit, $(grep -q '^BERTKIT_CUDA_KERNELS:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null &&
  grep -q '^CMAKE_CUDA_COMPILER:FILEPATH=/' "$BUILD/CMakeCache.txt" && echo 'CUDA kernels' || echo 'no CUDA kernels')" >"$DEST/build-info"
cp -r "$STAGE/p/share" "$DEST/share"
install -m 755 "$SRC/scripts/bundle-run" "$DEST/bundle-run"
for f in "${executables[@]}"; do
  name=$(basename "$f")
  [ "$name" = bert-finetune-torch ] && continue  # bert-finetune's own back end, run by it
  printf '#!/bin/sh\nexec "$(dirname -- "$(readlink -f -- "$0")")/../bundle-run" %s "$@"\n' "$name" >"$DEST/bin/$name"
  chmod 755 "$DEST/bin/$name"
done
[ -d "$OUT" ] && rmdir "$OUT"
mkdir -p "$(dirname "$OUT")"
mv "$DEST" "$OUT"
echo "bundle.sh: $OUT: ${#executables[@]} programs ($(echo "${torch_tools[@]}" | wc -w) need LibTorch), $(ls "$STAGE/p/lib" | wc -l) libraries, $(du -sh "$OUT" | cut -f1) ($(du -sh "$STAGE/p" | cut -f1) unpacked)" >&2
