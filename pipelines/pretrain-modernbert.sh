#!/usr/bin/env bash
# ModernBERT pretraining on one node, in the shape of its recipe as far as bert-train has it: masked LM only (no
# next-sentence head), 30% of the tokens masked afresh every epoch, FULL-SENTENCES rows at 1,024 tokens, then a
# longer-context phase (8,192 tokens in the recipe) started from the first phase's last checkpoint. The data:
#   make -f Makefile.data ... MASKING=dynamic FULL_SENTENCES=1 P1_SEQ=1024 P2_SEQ=8192   (phase1/ and phase2/)
#   pipelines/pretrain-modernbert.sh SHORT_DATA LONG_DATA VOCAB OUTDIR
# LONG_DATA '-' stops after the first phase. VOCAB is the data's WordPiece vocabulary (its size and special tokens
# size the preset; byte-level BPE vocabularies, ModernBERT's own, are not read yet). Knobs (environment):
#   CONFIG (a ModernBERT config.json or preset; default modernbert-base), NPROC, DEVICE, PRECISION, OPTIMIZER
#   (default adamw: the recipe's StableAdamW is not in bert-train yet, and AdamW's default rate is the recipe's
#   peak), MASK_PROB (0.3), CKPT_EVERY, BIN; P1_STEPS and P2_STEPS (required: the recipe counts tokens, not steps),
#   P1_BATCH (default 4608 sequences, the recipe's) P1_ACCUM P1_LR P1_WARMUP, P2_BATCH (default P1_BATCH / 8: the same
#   tokens per step at 8 times the length) P2_ACCUM P2_LR P2_WARMUP. Without P1_LR/P2_LR the banner says the rate.
# Re-running it resumes both phases where they stopped.
set -euo pipefail
short=${1:?usage: pretrain-modernbert.sh SHORT_DATA LONG_DATA VOCAB OUTDIR}
long=${2:?}; vocab=${3:?}; out=${4:?}
source "$(dirname "$0")/tools-dir.sh" bert-train
source "$(dirname "$0")/machine.sh" gpus
CONFIG=${CONFIG:-modernbert-base}; OPTIMIZER=${OPTIMIZER:-adamw}; MASK_PROB=${MASK_PROB:-0.3}
CKPT_EVERY=${CKPT_EVERY:-1000}
P1_STEPS=${P1_STEPS:?set P1_STEPS (the recipe: 1.7T tokens at 1,024)}; P1_BATCH=${P1_BATCH:-4608}; P1_ACCUM=${P1_ACCUM:-1}
P2_BATCH=${P2_BATCH:-$(( P1_BATCH / 8 > 0 ? P1_BATCH / 8 : 1 ))}; P2_ACCUM=${P2_ACCUM:-1}

common=(--config "$CONFIG" --vocab "$vocab" --nproc-per-node "$NPROC" --device "$DEVICE" --precision "$PRECISION"
        --optimizer "$OPTIMIZER" --masked-lm-prob "$MASK_PROB" --checkpoint-every "$CKPT_EVERY" --resume)
phase() {  # phase NAME DATA BATCH ACCUM STEPS LR WARMUP [more flags]
  local name=$1 data=$2 batch=$3 accum=$4 steps=$5 lr=$6 warmup=$7; shift 7
  local rate=(); [ -z "$lr" ] || rate+=(--learning-rate "$lr")
  [ -z "$warmup" ] || rate+=(--warmup-proportion "$warmup")
  "$BIN/bert-train" "${common[@]}" "${rate[@]}" "$@" --input "$data" --output-dir "$out/$name" \
    --train-batch-size "$batch" --gradient-accumulation-steps "$accum" --max-steps "$steps"
}
phase short "$short" "$P1_BATCH" "$P1_ACCUM" "$P1_STEPS" "${P1_LR:-}" "${P1_WARMUP:-}"
last="$out/short/checkpoints/$(cat "$out/short/checkpoints/latest")"
if [ "$long" = - ]; then echo "done: $last"; exit 0; fi
P2_STEPS=${P2_STEPS:?set P2_STEPS (or LONG_DATA -)}
# The long phase starts from the short one's weights (no tensor changes shape with the length); a resumed long phase
# continues from its own checkpoint instead.
init=(--init-checkpoint "$last")
[ -f "$out/long/checkpoints/latest" ] && init=()
phase long "$long" "$P2_BATCH" "$P2_ACCUM" "$P2_STEPS" "${P2_LR:-}" "${P2_WARMUP:-}" "${init[@]}"
echo "done: $out/long/checkpoints/$(cat "$out/long/checkpoints/latest")"
