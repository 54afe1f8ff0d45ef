#!/usr/bin/env bash
# bench/gpu_check.sh as CI runs it (SMOKE=1 DEVICE=cpu: two-layer models, small batches), from a bundle made by
# scripts/bundle.sh, so that the check a GPU window runs cannot rot between windows: every step runs (the CUDA cases,
# the syncs, bert-train's cases and HF's eager and compiled peers), the table has every line, and none FAILs. A
# missing bundle is a usage error; a check whose runs cannot start FAILs.
source "$(dirname "$0")/lib.sh"
need_fixtures
BUILD=${BUILD:-$(cd "$BIN/.." && pwd)}
[ -x "$BIN/bert-train" ] || { echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; }
for tool in patchelf xz; do
  command -v $tool >/dev/null || { echo "skipped: no $tool (scripts/setup.sh installs it)"; exit 77; }
done
"${PYTHON:-python3}" -c 'import torch, transformers, h5py' 2>/dev/null || { echo "skipped: no torch/transformers for the HF peer"; exit 77; }
export BERTKIT_TORCH_LIB
BERTKIT_TORCH_LIB=$("$PYTHON" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
bash "$SRC/scripts/bundle.sh" "$BUILD" "$TMP/bundle" 2>/dev/null || fail_case "scripts/bundle.sh failed"

run env SMOKE=1 DEVICE=cpu PYTHON="$PYTHON" FIXTURES="$FIXTURES" RESULTS="$TMP/results" bash "$SRC/bench/gpu_check.sh" "$TMP/bundle"
expect_rc 0 "SMOKE=1 DEVICE=cpu bench/gpu_check.sh"
CASES=$((CASES + 1))
for check in "cuda cases" "syncs, adamw" "syncs, lamb" "base128 experimental" "large128 experimental" \
    "large512-packed experimental" "base128 graphs" "large128 graphs" "large128 LAMB" "large128 MFU" \
    "large128 vs hf-masked " "large128 vs hf-masked-compiled" "large512 packed" "modernbert1024 vs hf-masked " \
    "modernbert1024 vs hf-masked-compiled"; do
  grep -q "^[a-zA-Z/]* *$check" "$TMP/results/check.txt" || fail_case "the table has no line '$check'"
done
CASES=$((CASES + 1)); grep -q "^0 FAIL of 15 lines$" "$TMP/results/check.txt" ||
  fail_case "$(cat "$TMP/results/check.txt"; tail -20 "$TMP/results/runs.log")"

run bash "$SRC/bench/gpu_check.sh" "$TMP/nothing"
expect_rc 2 "no bundle"
expect_err "^usage: bench/gpu_check.sh BUNDLE" "no bundle: message"
# (issue 44, item 5) A bundle that finds no LibTorch: one FAIL line that says why, and nothing run.
mkdir -p "$TMP/no-torch"
run env BERTKIT_TORCH_LIB="$TMP/no-torch" SMOKE=1 DEVICE=cpu PYTHON="$PYTHON" FIXTURES="$FIXTURES" RESULTS="$TMP/no-lib" \
  bash "$SRC/bench/gpu_check.sh" "$TMP/bundle"
expect_rc 1 "a bundle without LibTorch"
CASES=$((CASES + 1))
[ "$(head -1 "$TMP/no-lib/check.txt")" != "" ] && head -1 "$TMP/no-lib/check.txt" | grep -q "^FAIL libtorch  bundle-run: bert-train needs LibTorch" &&
  grep -q "^1 FAIL of 1 lines$" "$TMP/no-lib/check.txt" || fail_case "no LibTorch: $(cat "$TMP/no-lib/check.txt" 2>/dev/null)"
CASES=$((CASES + 1)); [ ! -e "$TMP/no-lib/runs.log" ] || fail_case "no LibTorch: runs were started"
# Without its data (no fixtures), every run fails and the check says so in its exit status.
run env SMOKE=1 DEVICE=cpu PYTHON="$PYTHON" FIXTURES="$TMP/none" RESULTS="$TMP/broken" bash "$SRC/bench/gpu_check.sh" "$TMP/bundle"
CASES=$((CASES + 1)); [ "$RC" -gt 0 ] || fail_case "a check whose runs all failed exited 0"
CASES=$((CASES + 1)); grep -q "^FAIL large128 *failed\|^FAIL large128 *no run" "$TMP/broken/check.txt" || fail_case "no FAIL line for large128: $(cat "$TMP/broken/check.txt")"
finish
