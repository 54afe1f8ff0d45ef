#!/usr/bin/env bash
# The optimizers at their recipes on one budget: a small BERT (bert-L2-H128) pretrained on the CPU for STEPS steps
# of BATCH from the demo corpus (Makefile.data, dynamic masks), with LAMB, AdamW and StableAdamW each at the rate
# bert-train picks without --learning-rate (the banner's recipe) and its default schedule, two seeds each; every
# run scored by bert-eval on one fixed, masked held-out set (Makefile.data's eval set). The two seeds' difference is
# the run-to-run noise the optimizers are read against. Not a test: nothing is asserted.
#   bench/optimizer_accuracy.sh [STEPS] [BATCH]
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
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "data: the demo corpus, dynamic masks; vocabulary $(wc -l <"$VOCAB") tokens; bert-L2-H128, $STEPS steps of" \
     "$BATCH, each optimizer's default rate; eval: $TMP/static/eval/eval.hdf5 (masked once)"

train() {  # OPTIMIZER SEED: trains, then prints OPTIMIZER SEED rate final-loss eval-accuracy eval-loss
  local optimizer=$1 seed=$2 out=$TMP/run-$1-$2
  "$BIN/bert-train" -q --precision fp32 --config bert-L2-H128 --vocab "$VOCAB" --input "$TMP/dynamic/phase1" --output-dir "$out" \
    --train-batch-size "$BATCH" --max-steps "$STEPS" --seed "$seed" --max-predictions 20 --optimizer "$optimizer" \
    --no-tensorboard
  local eval
  eval=$("$BIN/bert-eval" -q --precision fp32 --checkpoint "$out" --input "$TMP/static/eval/eval.hdf5")
  "${PYTHON:-python3}" - "$out/log.jsonl" "$eval" "$optimizer" "$seed" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
loss = [r["loss"] for r in records if "loss" in r]
rate = next(r["header"]["learning_rate"] for r in records if "header" in r)
e = json.loads(sys.argv[2])
print(sys.argv[3], sys.argv[4], f"{rate:g}", f"{sum(loss[-20:]) / len(loss[-20:]):.4f}", f"{e['mlm_accuracy']:.4f}",
      f"{e['mlm_loss']:.4f}")
PY
}
for seed in 1 2; do
  for optimizer in lamb adamw stableadamw; do train "$optimizer" "$seed"; done
done > "$TMP/results"
"${PYTHON:-python3}" - "$TMP/results" <<'PY'
import collections, sys
rows = [line.split() for line in open(sys.argv[1])]
print(f"{'optimizer':<12} {'seed':>4} {'rate':>8} {'train loss (last 20)':>21} {'eval mlm_accuracy':>18} {'eval mlm_loss':>14}")
for name, seed, rate, loss, acc, eloss in rows:
    print(f"{name:<12} {seed:>4} {rate:>8} {loss:>21} {acc:>18} {eloss:>14}")
acc = collections.defaultdict(list)
for name, seed, rate, loss, a, eloss in rows:
    acc[name].append(float(a))
noise = max(abs(a[0] - a[1]) for a in acc.values())
print("eval mlm_accuracy, mean of two seeds: " + ", ".join(f"{k} {sum(v) / 2:.4f}" for k, v in acc.items()) +
      f"; run-to-run noise (largest seed difference): {noise:.4f}")
PY
