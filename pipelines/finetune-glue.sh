#!/usr/bin/env bash
# GLUE fine-tuning on one node, run_classifier.py's recipe: features of the task's train.tsv and dev.tsv, then
# bert-finetune train from a pretrained checkpoint, scored on dev after every epoch, the best model kept.
#   pipelines/finetune-glue.sh TASK GLUE_TASK_DIR VOCAB CHECKPOINT OUTDIR
# Knobs (environment): NPROC (workers: GPUs, or processes on a CPU; default 1), DEVICE (cuda|cpu; default cuda when
# there is a GPU), PRECISION (auto|bf16|fp16|fp32; default auto: bf16 where the device has it natively, else fp32),
# CASED (1 keeps case), MAX_SEQ (128), BATCH (32 per worker), LR (2e-5), EPOCHS (3), MAX_STEPS (0: from the
# epochs), BIN. Re-running it keeps the features and resumes training where it stopped.
set -euo pipefail
task=${1:?usage: finetune-glue.sh TASK GLUE_TASK_DIR VOCAB CHECKPOINT OUTDIR}
dir=${2:?}; vocab=${3:?}; ckpt=${4:?}; out=${5:?}
source "$(dirname "$0")/tools-dir.sh" bert-finetune
source "$(dirname "$0")/machine.sh" 1
MAX_SEQ=${MAX_SEQ:-128}
BATCH=${BATCH:-32}; LR=${LR:-2e-5}; EPOCHS=${EPOCHS:-3}; MAX_STEPS=${MAX_STEPS:-0}
cased=(); [ "${CASED:-0}" = 1 ] && cased=(--cased)
dev=dev.tsv; [ "$task" = mnli ] && dev=dev_matched.tsv
mkdir -p "$out"
features=(--task "$task" --vocab "$vocab" "${cased[@]}" --max-seq-length "$MAX_SEQ" -q)
[ -f "$out/train.tfrecord" ] || "$BIN/bert-finetune" features "${features[@]}" --train -o "$out/train.tfrecord" "$dir/train.tsv"
[ -f "$out/dev.tfrecord" ] || "$BIN/bert-finetune" features "${features[@]}" -o "$out/dev.tfrecord" "$dir/$dev"
"$BIN/bert-finetune" train --task "$task" --init-checkpoint "$ckpt" --train-file "$out/train.tfrecord" \
  --eval-file "$out/dev.tfrecord" --output-dir "$out/run" --nproc-per-node "$NPROC" --device "$DEVICE" \
  --precision "$PRECISION" --train-batch-size "$BATCH" --learning-rate "$LR" --epochs "$EPOCHS" \
  --max-steps "$MAX_STEPS" --resume --log-every 50
grep '"eval_' "$out/run/log.jsonl" | tail -1
echo "best model: $out/run/best"
