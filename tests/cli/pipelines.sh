#!/usr/bin/env bash
# The scripts in pipelines/ run, with tiny settings on the CPU: the streaming text pipe, phase 1 -> phase 2 on one
# node (--nproc-per-node), GLUE and SQuAD fine-tuning from its checkpoint on two workers, mpirun, and the Slurm batch script (srun stood in for by a launcher that sets the
# variables srun sets, as there is no Slurm here).
source "$(dirname "$0")/lib.sh"
export BIN OMP_NUM_THREADS=1

run "$SRC/pipelines/stream-text.sh" "$SRC/demo/enwiki-demo.xml" "$TMP/text" 1
expect_rc 0 "stream-text.sh"
CASES=$((CASES + 1)); [ -f "$TMP/text/wiki.done" ] && ls "$TMP/text"/wiki_training-*-of-00008.txt >/dev/null || fail_case "shards and marker written"
CASES=$((CASES + 1))
[ "$(cat "$TMP/text"/wiki_training-* "$TMP/text"/wiki_test-* | grep -c '^$')" = "$(grep -c '^$' "$TMP/text/sentences.txt")" ] \
  || fail_case "every document of the pipe is in a shard"

if [ ! -x "$BIN/bert-train" ]; then echo "training pipelines skipped: bert-train not built"; finish; exit; fi
need_fixtures
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
CFG=$SRC/tests/fixtures/tiny_bert_config.json
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 20 --dupe-factor 5 -o "$TMP/p1.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 128 --max-predictions 80 --dupe-factor 5 -o "$TMP/p2.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
tiny=(NPROC=2 DEVICE=cpu PRECISION=fp32 CKPT_EVERY=2 P1_BATCH=8 P1_ACCUM=2 P1_STEPS=4 P1_LR=1e-3 P1_WARMUP=0.25
      P2_BATCH=4 P2_ACCUM=1 P2_STEPS=3 P2_LR=1e-3 P2_WARMUP=0.3)
run env "${tiny[@]}" "$SRC/pipelines/pretrain-single-node.sh" "$TMP/p1.hdf5" "$TMP/p2.hdf5" "$CFG" "$TMP/pre"
expect_rc 0 "pretrain-single-node.sh"
expect_out "phase 2 done: $TMP/pre/phase2/checkpoints/step-00000003" "phase 2 finished from phase 1"
run env "${tiny[@]}" "$SRC/pipelines/pretrain-single-node.sh" "$TMP/p1.hdf5" "$TMP/p2.hdf5" "$CFG" "$TMP/pre"
expect_rc 0 "running it again resumes (nothing left to do)"
# Unmasked data (Makefile.data MASKING=dynamic): the same pipeline with the data's VOCAB, masks drawn by bert-train.
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --masking none -o "$TMP/u1.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 128 --masking none -o "$TMP/u2.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
run env "${tiny[@]}" P1_BATCH=4 P2_BATCH=2 VOCAB="$VOCAB" "$SRC/pipelines/pretrain-single-node.sh" "$TMP/u1.hdf5" \
  "$TMP/u2.hdf5" "$CFG" "$TMP/pre-dynamic"
expect_rc 0 "pretrain-single-node.sh on unmasked data with VOCAB"
# ModernBERT: FULL-SENTENCES rows masked by bert-train (30%), a short phase then a longer one from its checkpoint.
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --full-sentences --masking none -o "$TMP/f1.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 256 --full-sentences --masking none -o "$TMP/f2.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
modern=(env NPROC=1 DEVICE=cpu PRECISION=fp32 CONFIG="$SRC/tests/fixtures/tiny_modernbert_config.json" P1_STEPS=3
        P1_BATCH=4 P1_ACCUM=2 P1_BATCH_WARMUP_STEPS=2 P1_BATCH_START=2 P2_STEPS=2 P2_BATCH=2 P1_LR=1e-3
        DECAY_STEPS=2 "$SRC/pipelines/pretrain-modernbert.sh")
run "${modern[@]}" "$TMP/f1.hdf5" "$TMP/f2.hdf5" "$VOCAB" "$TMP/modern"
expect_rc 0 "pretrain-modernbert.sh"
expect_out "done: $TMP/modern/decay/checkpoints/step-00000002" "the decay phase finished from the long one"
CASES=$((CASES + 1))
grep -q 'masks drawn every epoch (30% of the tokens)' "$TMP/modern/short/log.jsonl" && grep -q '"model_type":"modernbert"' \
  "$TMP/modern/long/log.jsonl" || fail_case "both phases trained ModernBERT, masking 30% every epoch"
# The recipe's optimizer and schedule: StableAdamW in every phase; the short and long phases at the peak rate (the
# warm-up's 1% of 3 steps is none; the long phase takes the short one's without P2_LR), the decay phase falling from it (1-sqrt over 2 steps: 1e-3 x (1 - sqrt(1/2)),
# then 0).
run "$PYTHON" - "$TMP/modern" <<'PY'
import json, sys
def rates(phase):
    return [r["lr"] for r in map(json.loads, open(f"{sys.argv[1]}/{phase}/log.jsonl")) if "loss" in r]
print(" ".join(f"{p}:{rates(p)}" for p in ("short", "long", "decay")))
PY
expect_rc 0 "the phases' logs read"
expect_out "short:[0.001, 0.001, 0.001] long:[0.001, 0.001] decay:[0.00029289321881345245, 0]" \
  "the phases hold the rate, the decay phase decays it"
CASES=$((CASES + 1))
grep -q '"optimizer":"stableadamw"' "$TMP/modern/short/log.jsonl" && grep -q '"optimizer":"stableadamw"' \
  "$TMP/modern/decay/log.jsonl" || fail_case "the phases did not train with StableAdamW"
# DEVICE, PRECISION and NPROC follow the machine when not given; on one without a GPU, cuda is refused in one line
# that names the knobs.
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  env_of_machine=(env -u DEVICE -u PRECISION -u NPROC CUDA_VISIBLE_DEVICES= "${tiny[@]:3}")
  run "${env_of_machine[@]}" "$SRC/pipelines/pretrain-single-node.sh" "$TMP/p1.hdf5" "$TMP/p2.hdf5" "$CFG" "$TMP/pre-1"
  expect_rc 0 "pretrain-single-node.sh without DEVICE, PRECISION and NPROC on a machine without a GPU"
  expect_err "^pretrain-single-node.sh: 0 GPU\(s\) here: DEVICE=cpu PRECISION=auto NPROC=1 \(set DEVICE, PRECISION and NPROC to choose\)$" \
    "the defaults the machine gave, said once"
  run "${env_of_machine[@]}" DEVICE=cuda "$SRC/pipelines/finetune-glue.sh" mrpc "$FIXTURES/glue/MRPC" "$VOCAB" x "$TMP/none"
  expect_rc 1 "DEVICE=cuda without a GPU"
  expect_err "^finetune-glue.sh: error: DEVICE=cuda, but no GPU is visible here .*; set DEVICE=cpu and PRECISION=fp32" \
    "DEVICE=cuda without a GPU names the knobs"
  CASES=$((CASES + 1)); [ ! -e "$TMP/none" ] || fail_case "DEVICE=cuda without a GPU: output made"
fi

# GLUE fine-tuning from that checkpoint, two workers, MRPC cut to a few steps.
glue=(NPROC=2 DEVICE=cpu PRECISION=fp32 MAX_SEQ=64 BATCH=8 LR=1e-3 MAX_STEPS=3)
run env "${glue[@]}" "$SRC/pipelines/finetune-glue.sh" mrpc "$FIXTURES/glue/MRPC" "$VOCAB" \
  "$TMP/pre/phase2/checkpoints/step-00000003" "$TMP/mrpc"
expect_rc 0 "finetune-glue.sh"
CASES=$((CASES + 1))
printf '%s' "$OUT" | grep -q '"eval_f1"' && [ -f "$TMP/mrpc/run/best/model.safetensors" ] && [ -f "$TMP/mrpc/run/best/task.json" ] \
  || fail_case "finetune-glue.sh prints the dev scores and keeps the best model: $OUT"

# SQuAD fine-tuning from the same checkpoint, two workers, XQuAD as both training and dev file, a few steps.
squad=(NPROC=2 DEVICE=cpu PRECISION=fp32 MAX_SEQ=128 DOC_STRIDE=64 MAX_QUERY=32 BATCH=8 LR=1e-3 MAX_STEPS=3)
run env "${squad[@]}" "$SRC/pipelines/finetune-squad.sh" "$FIXTURES/squad/xquad.en.json" "$FIXTURES/squad/xquad.en.json" \
  "$VOCAB" "$TMP/pre/phase2/checkpoints/step-00000003" "$TMP/squad"
expect_rc 0 "finetune-squad.sh"
CASES=$((CASES + 1))
printf '%s' "$OUT" | grep -qE '^\{"exact_match": [0-9.e-]+, "f1": [0-9.e-]+\}$' && [ -f "$TMP/squad/run/best/model.safetensors" ] \
  && [ "$(grep -c '"' "$TMP/squad/predictions/predictions.json")" = 1190 ] && grep -q '"eval_f1"' "$TMP/squad/run/log.jsonl" \
  || fail_case "finetune-squad.sh scores the dev file during training and after, and predicts every question: $OUT"
# DOC_STRIDE and MAX_QUERY reach training's evaluation too: the best model's F1 there is the F1 predict reports.
run "$PYTHON" -c 'import json, sys
best = max(r["eval_f1"] for r in map(json.loads, open(sys.argv[1])) if "eval_f1" in r)
got = json.load(open(sys.argv[2]))["f1"]
print("same" if abs(got - best) <= 1e-9 * max(1.0, abs(best)) else f"predict {got}, training {best}")' \
  "$TMP/squad/run/log.jsonl" "$TMP/squad/scores.json"
expect_out "same" "the best model's F1 in training is the F1 finetune-squad.sh reports"

if command -v mpirun >/dev/null; then
  : >"$TMP/hosts"
  run env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MASTER_PORT=$((20000 + RANDOM % 20000)) \
    "$SRC/pipelines/mpirun.sh" 2 "$TMP/hosts" -- -q --precision fp32 --config "$CFG" --input "$TMP/p1.hdf5" --output-dir "$TMP/mpi" \
    --train-batch-size 4 --max-steps 2 --device cpu
  expect_rc 0 "mpirun.sh with 2 ranks"
  CASES=$((CASES + 1)); [ -f "$TMP/mpi/checkpoints/step-00000002/model.safetensors" ] || fail_case "mpirun run saved"
else
  echo "mpirun.sh skipped: no mpirun (apt-get install openmpi-bin)"
fi

# srun sets SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE, SLURM_JOB_NODELIST, SLURM_JOB_ID
# per task; this stand-in does the same for 2 tasks on this host.
cat >"$TMP/srun" <<'SH'
#!/usr/bin/env bash
job=$((4000 + RANDOM % 20000))
for r in 0 1; do
  SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_NTASKS_PER_NODE=2 SLURM_JOB_NODELIST=localhost \
    SLURM_JOB_ID=$job MASTER_ADDR=127.0.0.1 "$@" &
done
wait -n && wait -n
SH
chmod +x "$TMP/srun"
run env SRUN="$TMP/srun" DEVICE=cpu PRECISION=fp32 BATCH=4 ACCUM=1 STEPS=2 LR=1e-3 WARMUP=0.5 CKPT_EVERY=1 \
  bash "$SRC/pipelines/slurm.sbatch" "$CFG" "$TMP/p1.hdf5" "$TMP/slurm" -q --max-predictions 20
expect_rc 0 "slurm.sbatch"
CASES=$((CASES + 1)); [ -f "$TMP/slurm/checkpoints/step-00000002/model.safetensors" ] || fail_case "slurm run saved"
finish
