#!/usr/bin/env bash
# SQuAD fine-tuning on one node, run_squad.py's recipe: training features of train-v1.1.json (or v2.0), bert-finetune
# train from a pretrained checkpoint scored on the dev file after every epoch (official EM/F1, the best model kept),
# then the best model's predictions on the dev file with their scores.
#   pipelines/finetune-squad.sh TRAIN_JSON DEV_JSON VOCAB CHECKPOINT OUTDIR
# Knobs (environment): TASK (squad | squad2), NPROC (workers: GPUs, or processes on a CPU; default 1), DEVICE
# (cuda|cpu; default cuda when there is a GPU), PRECISION (auto|bf16|fp16|fp32; default auto: bf16 where the device has it natively, else fp32), CASED (1 keeps case), MAX_SEQ (384), DOC_STRIDE (128), MAX_QUERY (64), BATCH (32 per
# worker), LR (3e-5), EPOCHS (2), MAX_STEPS (0: from the epochs), NULL_THRESHOLD (squad2: 0.0), BIN.
# Re-running it keeps the features and resumes training where it stopped.
set -euo pipefail
train=${1:?usage: finetune-squad.sh TRAIN_JSON DEV_JSON VOCAB CHECKPOINT OUTDIR}
dev=${2:?}; vocab=${3:?}; ckpt=${4:?}; out=${5:?}
source "$(dirname "$0")/tools-dir.sh" bert-finetune
source "$(dirname "$0")/machine.sh" 1
TASK=${TASK:-squad}
MAX_SEQ=${MAX_SEQ:-384}; DOC_STRIDE=${DOC_STRIDE:-128}; MAX_QUERY=${MAX_QUERY:-64}
BATCH=${BATCH:-32}; LR=${LR:-3e-5}; EPOCHS=${EPOCHS:-2}; MAX_STEPS=${MAX_STEPS:-0}; NULL_THRESHOLD=${NULL_THRESHOLD:-0.0}
cased=(); [ "${CASED:-0}" = 1 ] && cased=(--cased)
mkdir -p "$out"
features=(--task "$TASK" --vocab "$vocab" "${cased[@]}" --max-seq-length "$MAX_SEQ" --doc-stride "$DOC_STRIDE"
          --max-query-length "$MAX_QUERY")
# Named by what shapes them, so that a rerun with other settings makes its own features instead of reusing these.
vocab_sum=$(cksum <"$vocab" | cut -d' ' -f1)
train_features=$out/train-${MAX_SEQ}-${DOC_STRIDE}-${MAX_QUERY}${cased[*]:+-cased}-vocab${vocab_sum}.tfrecord
[ -f "$train_features" ] || "$BIN/bert-finetune" features "${features[@]}" -q --train -o "$train_features" "$train"
# The same windows for the evaluation of each epoch as for predict's below (both recorded in task.json).
"$BIN/bert-finetune" train --task "$TASK" --init-checkpoint "$ckpt" --train-file "$train_features" \
  --doc-stride "$DOC_STRIDE" --max-query-length "$MAX_QUERY" \
  --eval-file "$dev" --vocab "$vocab" "${cased[@]}" --output-dir "$out/run" --nproc-per-node "$NPROC" \
  --device "$DEVICE" --precision "$PRECISION" --train-batch-size "$BATCH" --learning-rate "$LR" --epochs "$EPOCHS" \
  --max-steps "$MAX_STEPS" --resume --log-every 50
"$BIN/bert-finetune" predict "${features[@]}" --checkpoint "$out/run/best" --predict-file "$dev" -o "$out/predictions" \
  --device "$DEVICE" --precision "$PRECISION" --null-score-diff-threshold "$NULL_THRESHOLD" --force \
  | tee "$out/scores.json"
echo "best model: $out/run/best; predictions: $out/predictions/predictions.json"
