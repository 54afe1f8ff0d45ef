#!/usr/bin/env bash
# bert-train against HF transformers' BertForPreTraining (eager PyTorch) on the CPU: the same config, data,
# batch size, optimizer (AdamW) and number of steps, one process each with the same number of threads, in one run.
# Prints seconds per step of both (warm-up steps left out), the ratios, and bert-train's overhead per step (time
# spent waiting for batches, from its log, as a share of the step). HF is measured twice: BertForPreTraining as users
# run it (vocabulary logits for every token), and with the MLM head on the masked positions only, the work bert-train
# does; the second ratio is the one that counts. bert-train runs with unpadded attention (its default: the encoder
# computes the real tokens only) and --attention padded (rows padded to the batch's longest, as HF computes them).
# A third bert-train run trains on the same instances unmasked (mkpretrain --masking none), its masks drawn by the
# loader (dynamic masking): its step against the static one is dynamic masking's cost.
# Then ModernBERT (4 layers, a global one every third, window 128, GeGLU; MLM only) against HF's
# ModernBertForMaskedLM with the MLM head on the masked positions (its sparse_prediction), under HF's SDPA and eager
# attention: the ratio that counts is bert-train --attention padded against HF's SDPA, the faster, both computing
# the same padded rows (the default unpadded attention computes the real tokens only, which on the CPU costs a
# layout copy per layer: it pays where rows are padded, not on these rows of ~99% real tokens).
#   bench/bert_train.sh [BUILD_DIR] [STEPS] [THREADS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
STEPS=${2:-30}
THREADS=${3:-1}
WARMUP=5
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
CORES=$(nproc)  # before OMP_NUM_THREADS is set: nproc honours it
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
echo "machine: $(uname -m), $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS thread(s) each"
cat >"$TMP/config.json" <<'JSON'
{"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 256,
 "initializer_range": 0.02, "intermediate_size": 1024, "max_position_embeddings": 512, "num_attention_heads": 4,
 "num_hidden_layers": 4, "type_vocab_size": 2, "vocab_size": 30522}
JSON
awk '/^<doc /{t=1; next} /^<\/doc>/{print ""; next} t{t=0; next} NF' "$FIXTURES/wiki/mlperf-extracted/wiki_00" >"$TMP/docs.txt"
"$BUILD/tools/mkpretrain" -q --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-seq-length 128 \
  --max-predictions 20 --dupe-factor 1 --short-seq-prob 0 -o "$TMP/data.hdf5" "$TMP/docs.txt"
"$BUILD/tools/mkpretrain" -q --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-seq-length 128 \
  --max-predictions 20 --dupe-factor 1 --short-seq-prob 0 --masking none -o "$TMP/unmasked.hdf5" "$TMP/docs.txt"
echo "model: L=4 H=256 A=4 FF=1024, seq 128, batch 16, AdamW, $STEPS steps ($WARMUP warm-up)"

"$BUILD/tools/bert-train" -q --precision fp32 --config "$TMP/config.json" --input "$TMP/data.hdf5" --output-dir "$TMP/run" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4
"$BUILD/tools/bert-train" -q --precision fp32 --config "$TMP/config.json" --input "$TMP/data.hdf5" --output-dir "$TMP/padded" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4 \
  --attention padded
"$BUILD/tools/bert-train" -q --precision fp32 --config "$TMP/config.json" --input "$TMP/unmasked.hdf5" --output-dir "$TMP/dynamic" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4 \
  --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-predictions 20
"$PYTHON" "$SRC/bench/bert_train_hf.py" --config "$TMP/config.json" --data "$TMP/data.hdf5" --batch-size 16 \
  --steps "$STEPS" --warmup "$WARMUP" --lr 1e-4 >"$TMP/hf.json"
"$PYTHON" "$SRC/bench/bert_train_hf.py" --config "$TMP/config.json" --data "$TMP/data.hdf5" --batch-size 16 \
  --steps "$STEPS" --warmup "$WARMUP" --lr 1e-4 --masked-only >"$TMP/hf-masked.json"
"$PYTHON" - "$TMP/run/log.jsonl" "$TMP/hf.json" "$WARMUP" "$TMP/hf-masked.json" "$TMP/padded/log.jsonl" \
  "$TMP/dynamic/log.jsonl" <<'PY'
import json, sys
# The log also holds event lines (checkpoints saved): only the step lines count.
steps = lambda p: [l for l in map(json.loads, open(p)) if "step_seconds" in l][int(sys.argv[3]):]
log, padded = steps(sys.argv[1]), steps(sys.argv[5])
hf = json.load(open(sys.argv[2]))
ours = sum(l["step_seconds"] for l in log) / len(log)
overhead = sum(l["data_seconds"] for l in log) / sum(l["step_seconds"] for l in log)
ours_padded = sum(l["step_seconds"] for l in padded) / len(padded)
real = sum(l["real_token_fraction"] for l in padded) / len(padded)
print(f"bert-train:      {ours * 1000:8.1f} ms/step   overhead (waiting for data) {overhead:.1%} of a step")
print(f"bert-train --attention padded: {ours_padded * 1000:8.1f} ms/step   real tokens {real:.1%} of those computed")
dynamic = steps(sys.argv[6])
ours_dynamic = sum(l["step_seconds"] for l in dynamic) / len(dynamic)
dynamic_wait = sum(l["data_seconds"] for l in dynamic) / sum(l["step_seconds"] for l in dynamic)
print(f"bert-train, dynamic masking (masks drawn by the loader): {ours_dynamic * 1000:8.1f} ms/step   "
      f"{ours_dynamic / ours:.3f}x the static step; waiting for data {dynamic_wait:.1%} of a step")
masked = json.load(open(sys.argv[4]))
print(f"HF transformers, MLM head on every token:        {hf['seconds_per_step'] * 1000:8.1f} ms/step   "
      f"ratio {hf['seconds_per_step'] / ours:.2f}x")
print(f"HF transformers, MLM head on masked positions:   {masked['seconds_per_step'] * 1000:8.1f} ms/step   "
      f"ratio {masked['seconds_per_step'] / ours:.2f}x (the one that counts: the same work)")
PY

# bf16 (autocast, what --precision auto takes on a CPU with AMX-BF16 or AVX512-BF16) against HF under
# torch.autocast("cpu", dtype=torch.bfloat16), the MLM head on the masked positions (the same work), and against
# bert-train's own fp32 step above.
"$BUILD/tools/bert-train" -q --precision bf16 --config "$TMP/config.json" --input "$TMP/data.hdf5" --output-dir "$TMP/bf16" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4
"$PYTHON" "$SRC/bench/bert_train_hf.py" --config "$TMP/config.json" --data "$TMP/data.hdf5" --batch-size 16 \
  --steps "$STEPS" --warmup "$WARMUP" --lr 1e-4 --masked-only --precision bf16 >"$TMP/hf-bf16.json"
"$PYTHON" - "$TMP/bf16/log.jsonl" "$TMP/hf-bf16.json" "$WARMUP" "$TMP/run/log.jsonl" <<'PY'
import json, sys
steps = lambda p: [l for l in map(json.loads, open(p)) if "step_seconds" in l][int(sys.argv[3]):]
mean = lambda log: sum(l["step_seconds"] for l in log) / len(log)
ours, fp32 = mean(steps(sys.argv[1])), mean(steps(sys.argv[4]))
hf = json.load(open(sys.argv[2]))["seconds_per_step"]
print(f"bert-train bf16: {ours * 1000:8.1f} ms/step   {fp32 / ours:.2f}x its fp32 step")
print(f"HF transformers bf16 autocast, MLM head on masked positions: {hf * 1000:8.1f} ms/step   ratio {hf / ours:.2f}x")
PY

cat >"$TMP/modernbert.json" <<'JSON'
{"model_type": "modernbert", "hidden_size": 256, "intermediate_size": 384, "num_hidden_layers": 4,
 "num_attention_heads": 4, "max_position_embeddings": 512, "local_attention": 128, "vocab_size": 30522,
 "pad_token_id": 0, "cls_token_id": 101, "sep_token_id": 102, "bos_token_id": 101, "eos_token_id": 102}
JSON
echo "ModernBERT: L=4 H=256 A=4 FF=384 (GeGLU), window 128 on layers 1-2, seq 128, batch 16, AdamW, MLM only"
"$BUILD/tools/bert-train" -q --precision fp32 --config "$TMP/modernbert.json" --input "$TMP/data.hdf5" --output-dir "$TMP/modern" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4
"$BUILD/tools/bert-train" -q --precision fp32 --config "$TMP/modernbert.json" --input "$TMP/data.hdf5" --output-dir "$TMP/modern-padded" \
  --train-batch-size 16 --max-steps "$STEPS" --optimizer adamw --learning-rate 1e-4 --no-tensorboard --prefetch 4 \
  --attention padded
for attention in sdpa eager; do
  "$PYTHON" "$SRC/bench/bert_train_hf.py" --config "$TMP/modernbert.json" --data "$TMP/data.hdf5" --batch-size 16 \
    --steps "$STEPS" --warmup "$WARMUP" --lr 1e-4 --masked-only --attention $attention >"$TMP/hf-modern-$attention.json"
done
"$PYTHON" - "$TMP/modern/log.jsonl" "$TMP/modern-padded/log.jsonl" "$TMP/hf-modern-sdpa.json" \
  "$TMP/hf-modern-eager.json" "$WARMUP" <<'PY'
import json, sys
steps = lambda p: [l for l in map(json.loads, open(p)) if "step_seconds" in l][int(sys.argv[5]):]
mean = lambda log: sum(l["step_seconds"] for l in log) / len(log)
ours, padded = mean(steps(sys.argv[1])), mean(steps(sys.argv[2]))
sdpa, eager = (json.load(open(p))["seconds_per_step"] for p in sys.argv[3:5])
print(f"bert-train ModernBERT:                    {ours * 1000:8.1f} ms/step")
print(f"bert-train ModernBERT --attention padded: {padded * 1000:8.1f} ms/step")
print(f"HF ModernBertForMaskedLM, masked positions, eager: {eager * 1000:8.1f} ms/step   ratio {eager / padded:.2f}x "
      f"(against the default unpadded run {eager / ours:.2f}x)")
print(f"HF ModernBertForMaskedLM, masked positions, SDPA:  {sdpa * 1000:8.1f} ms/step   ratio {sdpa / padded:.2f}x "
      f"(the one that counts: the same padded rows, HF's faster attention; against the default unpadded run "
      f"{sdpa / ours:.2f}x)")
PY
