#!/usr/bin/env bash
# Learning-rate defaults (tasks/lr_recipe.h): without --learning-rate, bert-train and bert-finetune take the recipe
# that fits the model, optimizer and global batch, and the start banner says which. A small preset trains with it:
# on 60 steps the loss falls by more than 0.7 (at the old default of 1e-4 it did not move: 11.0 -> 11.0).
source "$(dirname "$0")/lib.sh"
need_fixtures
[ -x "$BIN/bert-train" ] || { echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; }
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 10 -o "$TMP/d64.h5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 256 --max-predictions 40 --dupe-factor 4 -o "$TMP/d256.h5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
T=(bert-train --precision fp32 --vocab "$VOCAB" --no-tensorboard --seed 3)
banner() {  # TEXT DESCRIPTION: the schedule line of the banner
  expect_rc 0 "$2"
  CASES=$((CASES + 1))
  printf '%s\n' "$OUT$ERR" | grep -qF "schedule: $1" || fail_case "$2: no 'schedule: $1' in: $OUT$ERR"
}

run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/small" --train-batch-size 8 --max-steps 60 \
  --log-every 1
banner "lamb at learning rate 0.005 (bertkit's measured LAMB rate for small BERTs: 0.01 at global batch 32, square-root scaled to batch 8)" \
  "small preset, LAMB"
run python3 -c 'import json, sys
loss = [r["loss"] for r in map(json.loads, open(sys.argv[1])) if "loss" in r]
print(f"{loss[0]:.2f} {loss[-1]:.2f}", "falls" if loss[0] - loss[-1] > 0.7 else "stays")' "$TMP/small/log.jsonl"
expect_rc 0 "log read"
CASES=$((CASES + 1)); [[ "$OUT" == *falls ]] || fail_case "a small preset's loss with the default rate over 60 steps: $OUT"
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 32 --max-steps 1 \
  --optimizer adamw --dry-run
banner "adamw at learning rate 0.001 (bertkit's measured AdamW rate for small BERTs: 0.001 at global batch 32)" \
  "small preset, AdamW"
run "${T[@]}" --config bert-base --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 64 --max-steps 1 --dry-run
banner "lamb at learning rate 0.0001875 (NVIDIA's LAMB phase-1 recipe for BERT-base/large: 0.006 at global batch 65536, square-root scaled to batch 64)" \
  "BERT-base, phase 1"
run "${T[@]}" --config bert-large --input "$TMP/d256.h5" --output-dir "$TMP/x" \
  --train-batch-size 8 --max-steps 1 --dry-run
banner "lamb at learning rate 6.25e-05 (NVIDIA's LAMB phase-2 recipe for BERT-base/large: 0.004 at global batch 32768, square-root scaled to batch 8)" \
  "BERT-large, rows over 128 tokens: phase 2"
run "${T[@]}" --config bert-base --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 64 --max-steps 1 \
  --optimizer adamw --dry-run
banner "adamw at learning rate 5e-05 (the BERT paper's Adam recipe: 0.0001 at global batch 256, square-root scaled to batch 64)" \
  "BERT-base, AdamW"
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 8 --max-steps 1 \
  --learning-rate 3e-3 --dry-run
banner "lamb at learning rate 0.003 (--learning-rate)" "given"
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 8 --max-steps 1 \
  --optimizer madgrad
expect_rc 2 "madgrad without --learning-rate"
expect_err "^bert-train: --optimizer madgrad needs --learning-rate: there is no published BERT recipe to take it from; try --help\$" \
  "madgrad: message"
CASES=$((CASES + 1)); [ ! -e "$TMP/x" ] || fail_case "a refused run left $TMP/x"

# A resumed run keeps the rate it started with, whatever the default is now.
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/resumed" --train-batch-size 8 \
  --max-steps 4 --stop-after 2 --learning-rate 1e-4 -q
expect_rc 0 "a run at 1e-4 stopped at step 2"
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/resumed" --train-batch-size 8 \
  --max-steps 4 --resume
banner "lamb at learning rate 0.0001 (the resumed run's, from its trainer_state.json)" "resumed without --learning-rate"
# --lr-scaling scales a given rate; the recipe's is already for the batch. Independent workers take the recipe for
# their own batch, not the global one.
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 8 --max-steps 1 \
  --lr-scaling sqrt --dry-run
expect_rc 2 "--lr-scaling without --learning-rate"
expect_err "^bert-train: --lr-scaling scales a given --learning-rate; the default rate is already the recipe's for the batch; try --help\$" \
  "--lr-scaling: message"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run "${T[@]}" --config bert-L2-H128 --input "$TMP/d64.h5" --output-dir "$TMP/x" --train-batch-size 8 --max-steps 1 \
  --nproc-per-node 2 --master-port "$port" --no-sync-gradients --dry-run --dist-timeout 60
banner "lamb at learning rate 0.005 (bertkit's measured LAMB rate for small BERTs: 0.01 at global batch 32, square-root scaled to batch 8)" \
  "independent workers: each worker's batch"

if [ -x "$BIN/bert-finetune-torch" ]; then
  "$TORCH_TEST_TOOLS/model_probe" init "$SRC/tests/fixtures/tiny_bert_config.json" 1 "$TMP/pre"
  bert-finetune features -q --task mrpc --vocab "$VOCAB" --max-seq-length 64 --train -o "$TMP/mrpc.tfrecord" \
    "$FIXTURES/glue/MRPC/train.tsv"
  run bert-finetune train --precision fp32 --task mrpc --init-checkpoint "$TMP/pre" --train-file "$TMP/mrpc.tfrecord" \
    --output-dir "$TMP/ft" --max-steps 1 --dry-run
  banner "adamw at learning rate 5e-05 (the default of Google's run_classifier.py and run_squad.py)" "fine-tuning"
fi
finish
