#!/usr/bin/env bash
# Phase 1 -> phase 2 BERT pretraining on one node, NVIDIA's recipe shape: phase 1 at sequence length 128 with 20
# predictions, phase 2 at 512 with 80, initialised from phase 1's last checkpoint: its weights and, as NVIDIA's
# --phase2 does, its optimizer's moments (--init-optimizer; INIT_OPTIMIZER=0 takes the weights alone). Phase 2 runs
# its own learning-rate schedule either way.
#   pipelines/pretrain-single-node.sh PHASE1_DATA PHASE2_DATA CONFIG OUTDIR
# Every knob is an environment variable (defaults: NVIDIA's phase-1/phase-2 settings for 8 GPUs):
#   NPROC (workers: GPUs, or processes on a CPU; default every GPU, or 1), DEVICE (cuda|cpu; default cuda when
#   there is a GPU), PRECISION (auto|bf16|fp16|fp32; default auto: bf16 where the device has it natively, else fp32),
#   P1_BATCH P1_ACCUM P1_STEPS P1_LR P1_WARMUP, P2_BATCH P2_ACCUM P2_STEPS P2_LR P2_WARMUP, CKPT_EVERY,
#   INIT_OPTIMIZER (1|0), BIN, VOCAB (the data's vocabulary: written into the checkpoints, and needed when the data
#   is unmasked, Makefile.data MASKING=dynamic, for bert-train to draw the masks).
# Re-running it resumes both phases where they stopped.
set -euo pipefail
p1_data=${1:?usage: pretrain-single-node.sh PHASE1_DATA PHASE2_DATA CONFIG OUTDIR}
p2_data=${2:?}; config=${3:?}; out=${4:?}
source "$(dirname "$0")/tools-dir.sh" bert-train
source "$(dirname "$0")/machine.sh" gpus
CKPT_EVERY=${CKPT_EVERY:-200}
P1_BATCH=${P1_BATCH:-8192}; P1_ACCUM=${P1_ACCUM:-128}; P1_STEPS=${P1_STEPS:-7038}; P1_LR=${P1_LR:-6e-3}; P1_WARMUP=${P1_WARMUP:-0.2843}
INIT_OPTIMIZER=${INIT_OPTIMIZER:-1}
P2_BATCH=${P2_BATCH:-4096}; P2_ACCUM=${P2_ACCUM:-256}; P2_STEPS=${P2_STEPS:-1563}; P2_LR=${P2_LR:-4e-3}; P2_WARMUP=${P2_WARMUP:-0.128}

common=(--config "$config" --nproc-per-node "$NPROC" --device "$DEVICE" --precision "$PRECISION" --optimizer lamb
        --checkpoint-every "$CKPT_EVERY" --resume)
[ -z "${VOCAB:-}" ] || common+=(--vocab "$VOCAB")
"$BIN/bert-train" "${common[@]}" --input "$p1_data" --output-dir "$out/phase1" --train-batch-size "$P1_BATCH" \
  --gradient-accumulation-steps "$P1_ACCUM" --max-steps "$P1_STEPS" --learning-rate "$P1_LR" \
  --warmup-proportion "$P1_WARMUP" --max-predictions 20
phase1_last="$out/phase1/checkpoints/$(cat "$out/phase1/checkpoints/latest")"
init=(--init-checkpoint "$phase1_last")
[ "$INIT_OPTIMIZER" = 1 ] && init+=(--init-optimizer)
# A resumed phase 2 continues from its own checkpoint; --init-checkpoint only seeds a fresh one.
[ -f "$out/phase2/checkpoints/latest" ] && init=()
"$BIN/bert-train" "${common[@]}" "${init[@]}" --input "$p2_data" --output-dir "$out/phase2" \
  --train-batch-size "$P2_BATCH" --gradient-accumulation-steps "$P2_ACCUM" --max-steps "$P2_STEPS" \
  --learning-rate "$P2_LR" --warmup-proportion "$P2_WARMUP" --max-predictions 80
echo "phase 2 done: $out/phase2/checkpoints/$(cat "$out/phase2/checkpoints/latest")"
