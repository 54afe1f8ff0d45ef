#!/usr/bin/env bash
# bert-finetune train against HF transformers' BertForSequenceClassification (eager PyTorch) on the CPU: the same
# model (L=4 H=256, from one HF save_pretrained), the same MRPC features (the fixture written by Google's
# run_classifier.py, max_seq_length 128), batch 32, AdamW, the same number of steps, one process each with the
# same threads, in one run. HF is measured twice: batches padded to 128 as run_classifier.py's features are (what
# users of the TFRecord pipeline run), and cut to the batch's longest row as bert-finetune does (HF's
# DataCollatorWithPadding); the ratio that counts is the second, like for like.
#   bench/finetune_train.sh [BUILD_DIR] [STEPS] [THREADS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
STEPS=${2:-30}
THREADS=${3:-1}
WARMUP=5
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS thread(s) each"
FEATURES="$FIXTURES/tfrecord/mrpc-run_classifier/train.tf_record"
"$PYTHON" "$SRC/bench/finetune_train_hf.py" --init "$TMP/init" --features "$FEATURES" --batch-size 32 \
  --steps "$STEPS" --warmup "$WARMUP" >"$TMP/hf.json"
"$BUILD/tools/bert-finetune" train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/init" --train-file "$FEATURES" \
  --output-dir "$TMP/run" --train-batch-size 32 --max-steps "$STEPS" --no-tensorboard
"$BUILD/tools/bert-finetune" train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/init" --train-file "$FEATURES" \
  --output-dir "$TMP/padded" --train-batch-size 32 --max-steps "$STEPS" --no-tensorboard --attention padded
"$PYTHON" - "$TMP/run/log.jsonl" "$TMP/hf.json" "$WARMUP" "$TMP/padded/log.jsonl" <<'PY'
import json, sys
timed = lambda path: [l for l in map(json.loads, open(path)) if "step_seconds" in l][int(sys.argv[3]):]
steps, padded = timed(sys.argv[1]), timed(sys.argv[4])
hf = json.load(open(sys.argv[2]))
ours = sum(l["step_seconds"] for l in steps) / len(steps)
ours_padded = sum(l["step_seconds"] for l in padded) / len(padded)
real = sum(l["real_token_fraction"] for l in padded) / len(padded)
print(f"model: L=4 H=256 A=4 FF=1024, MRPC features (seq 128), batch 32, AdamW, {len(steps)} timed steps")
print(f"bert-finetune:                     {ours * 1000:8.1f} ms/step")
print(f"bert-finetune --attention padded:  {ours_padded * 1000:8.1f} ms/step   (rows cut to the longest: {real:.1%} real tokens)")
print(f"HF, padded to 128:                 {hf['padded'] * 1000:8.1f} ms/step   ratio {hf['padded'] / ours:.2f}x")
print(f"HF, cut to the longest row:        {hf['dynamic'] * 1000:8.1f} ms/step   ratio {hf['dynamic'] / ours:.2f}x (the one that counts)")
PY
