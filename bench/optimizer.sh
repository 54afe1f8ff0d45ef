#!/usr/bin/env bash
# Optimizer steps on BERT-base's parameters (110M) with random gradients: ours (LAMB and AdamW, each by torch's fused
# kernels as bert-train runs them and in multi-tensor passes; StableAdamW in multi-tensor passes) against
# torch.optim.AdamW (foreach and fused, with clip_grad_norm_ as ours clips) and torch-optimi's StableAdamW (foreach
# and for-loop) on HF transformers' BertForPreTraining of the same config, all measured in this run
# on this machine's cores. Prints ms per step (best of STEPS), the memory our optimizers hold (moments and work
# buffers) and the peak resident memory a step adds beyond parameters, gradients and state.
#   bench/optimizer.sh [BUILD_DIR] [STEPS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
STEPS=${2:-5}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
BENCH=$BUILD/tests/optim_bench
[ -x "$BENCH" ] || { echo "no $BENCH; build with -DBERTKIT_WITH_TORCH=ON" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# BERT-base as google-research/bert publishes it (uncased_L-12_H-768_A-12/bert_config.json).
cat >"$TMP/bert-base.json" <<'JSON'
{"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
 "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 512, "num_attention_heads": 12,
 "num_hidden_layers": 12, "type_vocab_size": 2, "vocab_size": 30522}
JSON
THREADS=$(nproc)
echo "machine: $(uname -m), $THREADS cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
OMP_NUM_THREADS=$THREADS "$BENCH" "$TMP/bert-base.json" "$STEPS" lamb-fused lamb adamw-fused adamw stableadamw | tee "$TMP/ours.jsonl"
"$PYTHON" "$SRC/bench/optimizer_torch.py" "$TMP/bert-base.json" "$STEPS" "$THREADS" | tee "$TMP/torch.jsonl"
"$PYTHON" - "$TMP/ours.jsonl" "$TMP/torch.jsonl" <<'PY'
import json, sys
rows = {d["optimizer"]: d for p in sys.argv[1:] for d in map(json.loads, open(p))}
peer = rows["torch-adamw-foreach"]["ms_per_step"]
for name in ("adamw", "adamw-fused"):
    print(f"AdamW {name}: {rows[name]['ms_per_step']} ms/step, {peer / rows[name]['ms_per_step']:.2f}x torch.optim.AdamW"
          f" (foreach, {peer} ms); torch fused {rows['torch-adamw-fused']['ms_per_step']} ms")
stable, optimi = rows["stableadamw"]["ms_per_step"], rows["optimi-stableadamw-foreach"]["ms_per_step"]
print(f"StableAdamW: {stable} ms/step, {optimi / stable:.2f}x optimi.StableAdamW (foreach, {optimi} ms); optimi's "
      f"for-loop {rows['optimi-stableadamw-loop']['ms_per_step']} ms")
lamb, lamb_passes = rows["lamb-fused"], rows["lamb"]
print(f"LAMB fused: {lamb['ms_per_step']} ms/step, {lamb_passes['ms_per_step'] / lamb['ms_per_step']:.2f}x its "
      f"multi-tensor passes ({lamb_passes['ms_per_step']} ms)")
print("memory held (moments and work buffers): " +
      ", ".join(f"{k} {rows[k]['state_mb']:.0f} MB" for k in ("lamb-fused", "lamb", "adamw-fused", "adamw", "stableadamw")) +
      "; peak a step adds: " + ", ".join(f"{k} {rows[k]['peak_extra_mb']:.0f} MB" for k in ("lamb-fused", "adamw-fused")) +
      f", torch foreach {rows['torch-adamw-foreach']['peak_extra_mb']:.0f} MB")
PY
