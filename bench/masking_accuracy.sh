#!/usr/bin/env bash
# Does dynamic masking train as well as static masks? A small BERT (bert-L2-H128) pretrained on the CPU for STEPS
# steps from the demo corpus through Makefile.data, on the same budget (steps, batch, learning rate) along three
# paths: static masks (dupe factor 10, MASKING=static), dynamic masks (MASKING=dynamic: dupe factor 1, masks drawn
# every epoch), and MosaicBERT's recipe (dynamic, 30% masking, no next-sentence pairs). Each is scored by bert-eval
# on one fixed, masked held-out set (Makefile.data's eval set); static and dynamic run with two seeds, whose
# difference is the run-to-run noise the comparison is read against. Not a test: nothing is asserted.
#   bench/masking_accuracy.sh [STEPS] [BATCH]
# Environment: BIN (built tools; default build/tools), PYTHON.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${BIN:-$SRC/build/tools}" && pwd)
STEPS=${1:-300}
BATCH=${2:-32}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
MAKE=(make -s -f "$SRC/Makefile.data" BIN="$BIN" QUIET=1 -j "$(nproc)")
"${MAKE[@]}" OUT="$TMP/static" phase1 eval
VOCAB=$TMP/static/vocab.txt
"${MAKE[@]}" OUT="$TMP/dynamic" VOCAB="$VOCAB" MASKING=dynamic phase1
mkdir -p "$TMP/mlm"
for shard in "$TMP"/static/shards/wiki_training-*.txt; do
  "$BIN/mkpretrain" -q --vocab "$VOCAB" --no-nsp --masking none -o "$TMP/mlm/$(basename "$shard" .txt).hdf5" "$shard"
done
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "data: the demo corpus; $(ls "$TMP"/static/phase1/*.hdf5 | wc -l) shards; vocabulary $(wc -l <"$VOCAB") tokens;" \
     "bert-L2-H128, $STEPS steps of $BATCH, the default learning rate; eval: $TMP/static/eval/eval.hdf5 (static, masked once)"

train() {  # NAME SEED INPUT [FLAGS...]: trains, then prints NAME SEED final-loss eval-accuracy eval-loss
  local name=$1 seed=$2 input=$3
  shift 3
  "$BIN/bert-train" -q --precision fp32 --config bert-L2-H128 --vocab "$VOCAB" --input "$input" --output-dir "$TMP/run-$name-$seed" \
    --train-batch-size "$BATCH" --max-steps "$STEPS" --seed "$seed" --no-tensorboard "$@"
  local eval
  eval=$("$BIN/bert-eval" -q --precision fp32 --checkpoint "$TMP/run-$name-$seed" --input "$TMP/static/eval/eval.hdf5")
  "${PYTHON:-python3}" - "$TMP/run-$name-$seed/log.jsonl" "$eval" "$name" "$seed" <<'PY'
import json, sys
loss = [r["loss"] for r in map(json.loads, open(sys.argv[1])) if "loss" in r]
e = json.loads(sys.argv[2])
print(sys.argv[3], sys.argv[4], f"{sum(loss[-20:]) / len(loss[-20:]):.4f}", f"{e['mlm_accuracy']:.4f}", f"{e['mlm_loss']:.4f}")
PY
}
{
  for seed in 1 2; do
    train static "$seed" "$TMP/static/phase1" --max-predictions 20
    train dynamic "$seed" "$TMP/dynamic/phase1" --max-predictions 20
  done
  train mlm-30 1 "$TMP/mlm" --no-nsp --masked-lm-prob 0.3 --max-predictions 40
} > "$TMP/results"
"${PYTHON:-python3}" - "$TMP/results" <<'PY'
import collections, sys
rows = [line.split() for line in open(sys.argv[1])]
print(f"{'path':<10} {'seed':>4} {'train loss (last 20)':>21} {'eval mlm_accuracy':>18} {'eval mlm_loss':>14}")
for name, seed, loss, acc, eloss in rows:
    print(f"{name:<10} {seed:>4} {loss:>21} {acc:>18} {eloss:>14}")
acc = collections.defaultdict(list)
for name, seed, loss, a, eloss in rows:
    acc[name].append(float(a))
noise = max(abs(acc["static"][0] - acc["static"][1]), abs(acc["dynamic"][0] - acc["dynamic"][1]))
gap = sum(acc["dynamic"]) / 2 - sum(acc["static"]) / 2
print(f"eval mlm_accuracy, dynamic - static (means of two seeds): {gap:+.4f}; run-to-run noise (largest seed "
      f"difference): {noise:.4f}; {'within' if gap >= -noise else 'below'} the noise")
PY
