#!/usr/bin/env bash
# ModernBERT pretraining on one node with its recipe's controls (Warner et al. 2024, arXiv 2412.13663; DESIGN.md of
# the shared facts, section 14): masked LM only (no next-sentence head), 30% of the tokens masked afresh every
# epoch, StableAdamW (torch-optimi's) at betas 0.9/0.98, eps 1e-6 and fully decoupled weight decay 1e-5 (not on
# biases and norms), no gradient clipping, and a warm-up-stable-decay schedule run as phases:
#   short  FULL-SENTENCES rows at 1,024 tokens: warm-up (3B tokens for base, 2B for large), then the peak rate held
#          (8e-4 base, 5e-4 large: bert-train's default rate for ModernBERT, scaled to a smaller batch);
#   long   8,192 tokens with the global rotary theta at 160,000 (CONFIG_LONG, else CONFIG), from the short phase's
#          weights and optimizer state, at the short phase's rate unless P2_LR says another;
#   decay  (DECAY_STEPS set) DECAY_DATA (default LONG_DATA) from the long phase's checkpoint with a seed of its own
#          (DECAY_SEED: other samples first and other masks than the long phase's opening steps), the rate falling
#          from the long phase's to 0 over DECAY_STEPS steps by DECAY_SHAPE (default 1-sqrt).
# The data:
#   make -f Makefile.data ... MASKING=dynamic FULL_SENTENCES=1 P1_SEQ=1024 P2_SEQ=8192   (phase1/ and phase2/)
#   pipelines/pretrain-modernbert.sh SHORT_DATA LONG_DATA VOCAB OUTDIR
# LONG_DATA '-' stops after the short phase. VOCAB is the data's vocabulary (vocab.txt, or a byte-level BPE
# tokenizer.json, ModernBERT's own kind). Knobs (environment):
#   CONFIG (a ModernBERT config.json or preset; default modernbert-base), CONFIG_LONG (default: CONFIG), NPROC,
#   DEVICE, PRECISION, OPTIMIZER (stableadamw), WEIGHT_DECAY (1e-5, fully decoupled with stableadamw), MASK_PROB
#   (0.3) and MASK_PROB_LONG, MASK_PROB_DECAY (each the phase before's by default: mmBERT's falls phase by phase,
#   30% to 5%), CKPT_EVERY, BIN, SEED (12345), DECAY_SEED (SEED + 1);
#   P1_STEPS and P2_STEPS (required: the recipe counts tokens, 1.7T at 1,024, not steps), P1_BATCH (default 4608
#   sequences, the recipe's) P1_ACCUM P1_LR P1_WARMUP (a share of P1_STEPS), P2_BATCH (default P1_BATCH / 8: the same
#   tokens per step at 8 times the length) P2_ACCUM P2_LR; DECAY_STEPS, DECAY_SHAPE; P1_BATCH_WARMUP_STEPS with
#   P1_BATCH_START (the recipe ramps its batch over its first 50B tokens; a multiple of P1_BATCH / P1_ACCUM). Without
#   P1_LR/P2_LR the banner says the rate.
# Re-running it resumes every phase where it stopped.
set -euo pipefail
short=${1:?usage: pretrain-modernbert.sh SHORT_DATA LONG_DATA VOCAB OUTDIR}
long=${2:?}; vocab=${3:?}; out=${4:?}
source "$(dirname "$0")/tools-dir.sh" bert-train
source "$(dirname "$0")/machine.sh" gpus
CONFIG=${CONFIG:-modernbert-base}; CONFIG_LONG=${CONFIG_LONG:-$CONFIG}
OPTIMIZER=${OPTIMIZER:-stableadamw}; WEIGHT_DECAY=${WEIGHT_DECAY:-1e-5}; MASK_PROB=${MASK_PROB:-0.3}
CKPT_EVERY=${CKPT_EVERY:-1000}; DECAY_SHAPE=${DECAY_SHAPE:-1-sqrt}; SEED=${SEED:-12345}; DECAY_SEED=${DECAY_SEED:-$((SEED + 1))}
MASK_PROB_LONG=${MASK_PROB_LONG:-$MASK_PROB}; MASK_PROB_DECAY=${MASK_PROB_DECAY:-$MASK_PROB_LONG}
P1_STEPS=${P1_STEPS:?set P1_STEPS (the recipe: 1.7T tokens at 1,024)}; P1_BATCH=${P1_BATCH:-4608}; P1_ACCUM=${P1_ACCUM:-1}
P2_BATCH=${P2_BATCH:-$(( P1_BATCH / 8 > 0 ? P1_BATCH / 8 : 1 ))}; P2_ACCUM=${P2_ACCUM:-1}

common=(--vocab "$vocab" --nproc-per-node "$NPROC" --device "$DEVICE" --precision "$PRECISION"
        --optimizer "$OPTIMIZER" --weight-decay "$WEIGHT_DECAY" --checkpoint-every "$CKPT_EVERY" --resume)
[ "$OPTIMIZER" != stableadamw ] || common+=(--fully-decoupled-weight-decay)
phase() {  # phase NAME CONFIG DATA BATCH ACCUM STEPS LR [more flags]: a phase, resumed where it stopped
  local name=$1 config=$2 data=$3 batch=$4 accum=$5 steps=$6 lr=$7; shift 7
  local rate=(); [ -z "$lr" ] || rate+=(--learning-rate "$lr")
  "$BIN/bert-train" --config "$config" "${common[@]}" "${rate[@]}" "$@" --input "$data" --output-dir "$out/$name" \
    --train-batch-size "$batch" --gradient-accumulation-steps "$accum" --max-steps "$steps"
}
latest() { echo "$out/$1/checkpoints/$(cat "$out/$1/checkpoints/latest")"; }
# The peak rate a phase ran at (its log's header), for the next phase to hold.
rate_of() { sed -n '1s/.*"learning_rate":\([0-9.e+-]*\).*/\1/p' "$out/$1/log.jsonl"; }
# A later phase starts from the one before (weights and optimizer state); once it has checkpoints of its own, it
# resumes from them instead.
from=()
starts_from() { from=(); [ -f "$out/$1/checkpoints/latest" ] || from=(--init-checkpoint "$(latest "$2")" --init-optimizer); }

warmup=(); [ -z "${P1_WARMUP:-}" ] || warmup=(--warmup-proportion "$P1_WARMUP")
[ -z "${P1_BATCH_WARMUP_STEPS:-}" ] ||
  warmup+=(--batch-size-warmup-steps "$P1_BATCH_WARMUP_STEPS" --batch-size-warmup-start "${P1_BATCH_START:?set P1_BATCH_START}")
phase short "$CONFIG" "$short" "$P1_BATCH" "$P1_ACCUM" "$P1_STEPS" "${P1_LR:-}" --lr-decay constant \
  --masked-lm-prob "$MASK_PROB" --seed "$SEED" "${warmup[@]}"
if [ "$long" = - ]; then echo "done: $(latest short)"; exit 0; fi
P2_STEPS=${P2_STEPS:?set P2_STEPS (or LONG_DATA -)}
# No tensor changes shape with the length or theta: the banner names what the config changed.
starts_from long short
P2_LR=${P2_LR:-$(rate_of short)}
phase long "$CONFIG_LONG" "$long" "$P2_BATCH" "$P2_ACCUM" "$P2_STEPS" "$P2_LR" --lr-decay constant \
  --masked-lm-prob "$MASK_PROB_LONG" --seed "$SEED" --warmup-steps 0 "${from[@]}"
if [ -z "${DECAY_STEPS:-}" ]; then echo "done: $(latest long)"; exit 0; fi
starts_from decay long
phase decay "$CONFIG_LONG" "${DECAY_DATA:-$long}" "$P2_BATCH" "$P2_ACCUM" "$DECAY_STEPS" "$P2_LR" \
  --lr-decay "$DECAY_SHAPE" --lr-decay-steps "$DECAY_STEPS" --warmup-steps 0 --masked-lm-prob "$MASK_PROB_DECAY" \
  --seed "$DECAY_SEED" "${from[@]}"
echo "done: $(latest decay)"
