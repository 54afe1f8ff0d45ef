#!/usr/bin/env bash
# scripts/bundle.sh: the relocatable folder a GPU window or a cluster without a compiler gets. Made from this build,
# moved to a fresh directory and run from an empty one with a clean environment (no build or source tree on any
# path, LD_LIBRARY_PATH unset, LibTorch named by BERTKIT_TORCH_LIB alone): every tool prints what the built one
# prints for --version, a 2-step bert-train finds the preset bert-L2-H128 in the bundle itself, every RUNPATH is
# $ORIGIN-relative, the unpacked copy is readable by other users and found through a symbolic link to a launcher,
# and the folder stays within the 50 MiB that travels with a checkout. A LibTorch tool without LibTorch says what to
# set, in one line.
source "$(dirname "$0")/lib.sh"
need_fixtures
BUILD=${BUILD:-$(cd "$BIN/.." && pwd)}
for tool in patchelf xz; do
  command -v $tool >/dev/null || { echo "skipped: no $tool (scripts/setup.sh installs it)"; exit 77; }
done
mkdir -p "$TMP/empty" "$TMP/elsewhere" "$TMP/home"
run bash "$SRC/scripts/bundle.sh" "$BUILD" "$TMP/made"
expect_rc 0 "scripts/bundle.sh BUILD OUT"
expect_err "^bundle.sh: $TMP/made: [0-9]+ programs \([0-9]+ need LibTorch\), [0-9]+ libraries, " "summary line"
run bash "$SRC/scripts/bundle.sh" "$BUILD" "$TMP/made"
expect_rc 1 "bundle.sh into a folder that is not empty"
expect_err "^bundle.sh: $TMP/made exists and is not empty; remove it first$" "not empty: message"
bytes=$(du -sb "$TMP/made" | cut -f1)
CASES=$((CASES + 1)); [ "$bytes" -le $((50 * 1024 * 1024)) ] || fail_case "the bundle is $bytes bytes, over 50 MiB"
echo "bundle: $bytes bytes"
mv "$TMP/made" "$TMP/elsewhere/bundle"
B=$TMP/elsewhere/bundle

# The launcher looks for LibTorch for exactly the programs that need it.
if [ -x "$BIN/bert-train" ]; then
  CASES=$((CASES + 1))
  [ "$(sort "$B/torch-tools" | tr '\n' ' ')" = "bert-eval bert-finetune bert-finetune-torch bert-train ckpt-convert torch_unit_tests " ] ||
    fail_case "torch-tools lists $(tr '\n' ' ' <"$B/torch-tools")"
fi
torch_lib=""
if [ -s "$B/torch-tools" ]; then
  torch_lib=$("${PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') ||
    fail_case "no torch for the LibTorch tools"
fi
# clean CMD...: from the empty directory, with nothing of the build's in the environment.
clean() { (cd "$TMP/empty" && env -i HOME="$TMP/home" LC_ALL=C.UTF-8 PATH=/usr/bin:/bin BERTKIT_TORCH_LIB="$torch_lib" "$@"); }

for tool in $(sed -n 's/^set(BERTKIT_TEXT_TOOLS \(.*\))$/\1/p; s/^set(BERTKIT_TORCH_TOOLS \(.*\))$/\1/p' "$SRC/tools/CMakeLists.txt"); do
  [ -x "$BIN/$tool" ] || continue
  run clean "$B/bin/$tool" --version
  expect_rc 0 "bundle's $tool --version"
  expect_out "$("$BIN/$tool" --version)" "bundle's $tool --version prints what the built one prints"
done
CASES=$((CASES + 1))
for f in "$B"/.unpacked-*/bin/* "$B"/.unpacked-*/libexec/bertkit/* "$B"/.unpacked-*/lib/*; do
  runpath=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  case $runpath in '$ORIGIN'*) ;; *) fail_case "$f: RUNPATH '$runpath' is not \$ORIGIN-relative" ;; esac
done
# The unpacked copy is readable by the other users of a shared folder; a launcher linked from elsewhere finds it.
CASES=$((CASES + 1))
[ "$(stat -c %a "$B"/.unpacked-*)" = 755 ] || fail_case "the unpacked folder is mode $(stat -c %a "$B"/.unpacked-*), not 755"
ln -s "$B/bin/wordpiece" "$TMP/home/wordpiece"
run clean "$TMP/home/wordpiece" --version
expect_rc 0 "a launcher run through a symbolic link"
CASES=$((CASES + 1))
! grep -rlF "$SRC/configs" "$B"/.unpacked-*/bin "$B"/.unpacked-*/libexec >/dev/null || fail_case "a binary names $SRC/configs"

if [ -n "$torch_lib" ]; then
  run clean "$B/bin/mkpretrain" -q --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-seq-length 64 \
    --max-predictions 10 -o "$TMP/data.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
  expect_rc 0 "bundle's mkpretrain"
  run clean "$B/bin/bert-train" -q --precision fp32 --device cpu --config bert-L2-H128 --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" \
    --input "$TMP/data.hdf5" --train-batch-size 4 --max-steps 2 --no-tensorboard --output-dir "$TMP/run"
  expect_rc 0 "bundle's bert-train --config bert-L2-H128, 2 steps"
  CASES=$((CASES + 1)); [ -f "$TMP/run/checkpoints/step-00000002/model.safetensors" ] || fail_case "no checkpoint at step 2"
  run clean "$B/bin/torch_unit_tests" -tc='cuda*'
  expect_rc 0 "bundle's torch_unit_tests"
  run env -i HOME="$TMP/home" PATH=/usr/bin:/bin BERTKIT_TORCH_LIB="$TMP/empty" "$B/bin/bert-train" --version
  expect_rc 1 "a LibTorch tool without LibTorch"
  expect_err "^bundle-run: bert-train needs LibTorch \(torch 2\.[0-9]+[^)]*\): set BERTKIT_TORCH_LIB" "without LibTorch: message"
fi
# (issue 38, items 13 and 15) A bundle in a folder whose name ends in a newline runs itself, not the folder of the
# name without it (which holds no bundle: the launcher failed there); a killed unpacking's .unpacking-HOST-PID-*
# (its process gone) is removed by the next one.
nl_dir="$TMP/nl/bundle"$'\n'
mkdir -p "$TMP/nl/bundle" && cp -r "$B" "$nl_dir" && rm -rf "$nl_dir"/.unpacked-*
mkdir "$nl_dir/.unpacking-$(uname -n | tr -c 'A-Za-z0-9.\n-' '_')-999999999-AbCdEf"
run clean "$nl_dir/bin/wordpiece" --version
expect_rc 0 "a bundle in a folder whose name ends in a newline"
expect_out "$("$BIN/wordpiece" --version)" "the newline folder's own wordpiece ran"
OUT=$(ls -A "$nl_dir" | grep '^\.unpacking-' || true); expect_out "" "a dead unpacking's folder is removed"
finish
