#!/usr/bin/env bash
# README command 1, scripts/demo.sh, end to end into a temporary directory: every step runs, and its last step
# shows what works (the trained questions answered, the interactive answer right) and says plainly what a model
# this small cannot do, instead of leaving a bare EM 0.0 / F1 0.0 for the reader to take as a fault.
source "$(dirname "$0")/lib.sh"
[ -x "$BIN/bert-train" ] || { echo "skipped: the demo needs the LibTorch tools"; exit 77; }
cd "$SRC"
run env BERTKIT_BUILD="$(dirname "$BIN")" bash scripts/demo.sh "$TMP/demo"
expect_rc 0 "scripts/demo.sh"
CASES=$((CASES + 1))
trained=$(printf '%s\n' "$ERR" | sed -n 's/^ *the 45 questions it was trained on: {"exact_match": [0-9.]*, "f1": \([0-9.]*\)}$/\1/p')
[ -n "$trained" ] && awk -v f="$trained" 'BEGIN { exit !(f > 50) }' || fail_case "the trained questions' F1 is shown and above 50: '$trained'"
CASES=$((CASES + 1))
printf '%s\n' "$ERR" | grep -q "on new questions it scores about 0, and that is the expected result, not a fault" \
  || fail_case "the demo does not say what a model this small cannot do"
CASES=$((CASES + 1))
printf '%s\n' "$ERR" | grep -q '^   A: {"answer":"Hester Fennick"' || fail_case "the interactive answer: $(printf '%s\n' "$ERR" | grep '   A: ')"
CASES=$((CASES + 1)); [ -f "$TMP/demo/hf/model.safetensors" ] && [ -f "$TMP/demo/loss.png" ] || fail_case "the demo's outputs"
finish
