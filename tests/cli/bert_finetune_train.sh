#!/usr/bin/env bash
# bert-finetune train and bench: usage errors (exit 2, the flag named, nothing created), bad inputs (one line, exit
# 1, the output directory not created), a pretraining checkpoint refused by bench. Training against HF is the compat
# test's job (tests/compat/test_finetune_trajectory.py).
source "$(dirname "$0")/lib.sh"
[ -x "$BIN/bert-finetune-torch" ] || { echo "skipped: bert-finetune-torch not built (needs LibTorch)"; exit 77; }
need_fixtures
MRPC_FEATURES=$FIXTURES/tfrecord/mrpc-run_classifier/train.tf_record
OUTDIR=$TMP/run

usage() {  # REGEX DESCRIPTION
  expect_rc 2 "$2"
  expect_err "^bert-finetune: $1; try --help\$" "$2: message"
  CASES=$((CASES + 1)); [ ! -e "$OUTDIR" ] || fail_case "$2: $OUTDIR created"
}
error() {  # REGEX DESCRIPTION
  expect_rc 1 "$2"
  expect_err "^bert-finetune: error: $1\$" "$2: message"
  CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "$2: more than one line: $ERR"
  CASES=$((CASES + 1)); [ ! -e "$OUTDIR" ] || fail_case "$2: $OUTDIR created"
}

run bert-finetune train --help
expect_rc 0 "train --help"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q -- '--eval-file' && printf '%s' "$OUT" | grep -q -- '--nproc-per-node' \
  || fail_case "train --help lists its flags and the loop's"

run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR"
usage "--init-checkpoint is required: fine-tuning starts from a pretrained model" "no checkpoint"
run bert-finetune train --task mrcp --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
usage "--task must be one of squad, squad2, .*, got 'mrcp'" "unknown task"
run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP" --epochs 0
usage "--epochs must be positive, got 0" "no epochs"
run bert-finetune train --task squad --train-file "$MRPC_FEATURES" --eval-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
usage "a SQuAD --eval-file needs the model's vocabulary: give --vocab or --tokenizer \(there is none beside .*\)" "SQuAD eval file without a vocabulary"
run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --cased --output-dir "$OUTDIR" --init-checkpoint "$TMP"
usage "--cased makes the features of a SQuAD --eval-file; mrpc has none" "--cased for GLUE training"
run bert-finetune train --task mrpc --train-file "$TMP/none.tfrecord" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
error "$TMP/none.tfrecord: cannot open: No such file or directory" "missing features"
run bert-finetune train --task squad --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
error "$MRPC_FEATURES: no start_positions: SQuAD training needs features made with --train" "GLUE features for SQuAD"
run bert-finetune train --task mnli --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
CASES=$((CASES + 1)); [ "$RC" = 1 ] || fail_case "MRPC features for MNLI: exit $RC"
run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP"
error "$TMP: no config.json or bert_config.json beside the checkpoint" "a checkpoint directory without config.json"

# bench: a pretraining checkpoint has no task head.
printf '{"vocab_size": 99, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 32, "type_vocab_size": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}\n' >"$TMP/cfg.json"
if [ -x "${TORCH_TEST_TOOLS:-}/model_probe" ]; then
  "$TORCH_TEST_TOOLS/model_probe" init "$TMP/cfg.json" 1 "$TMP/pre"
  run bert-finetune bench --checkpoint "$TMP/pre" --task mrpc
  error "$TMP/pre/model.safetensors: no classifier.weight tensor: not a model fine-tuned for mrpc \(bert-finetune train makes one\)" "bench on a pretraining checkpoint"
  # --dry-run: the features read, steps from --epochs, the plan on stdout, nothing written.
  sed 's/"vocab_size": 99/"vocab_size": 30522/; s/"max_position_embeddings": 32/"max_position_embeddings": 128/' \
    "$TMP/cfg.json" >"$TMP/cfg-mrpc.json"
  "$TORCH_TEST_TOOLS/model_probe" init "$TMP/cfg-mrpc.json" 1 "$TMP/pre-mrpc"
  run bert-finetune train --precision fp32 --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP/pre-mrpc" \
    --epochs 2 --train-batch-size 16 --dry-run
  expect_rc 0 "train --dry-run"
  CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "^data: 3,668 samples (mrpc features of .*train.tf_record), rows of up to 128 tokens; 2 epochs in 458 steps$" \
    || fail_case "train --dry-run: the features and steps: $OUT"
  CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "^start: step 0 from $TMP/pre-mrpc$" || fail_case "train --dry-run: the start: $OUT"
  CASES=$((CASES + 1)); [ ! -e "$OUTDIR" ] || fail_case "train --dry-run created $OUTDIR"
  # --cuda-graphs: classification's unpadded micro-batches change shape; padded ones would be staged (on CUDA).
  run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP/pre-mrpc" \
    --train-batch-size 16 --cuda-graphs
  usage "--cuda-graphs: unpadded attention gives each micro-batch its own number of tokens \(use --attention padded\)" "graphs, unpadded"
  run bert-finetune train --task mrpc --train-file "$MRPC_FEATURES" --output-dir "$OUTDIR" --init-checkpoint "$TMP/pre-mrpc" \
    --train-batch-size 16 --cuda-graphs --attention padded
  usage "--cuda-graphs needs --device cuda" "graphs on the CPU"
fi
run bert-finetune bench --checkpoint "$TMP/pre" --task mrpc --batch-sizes 1,x
usage "--batch-sizes: 'x' is not a number" "bench: bad batch sizes"
run bert-finetune bench --checkpoint "$TMP/pre" --task mrpc --batch-sizes 0
usage "--batch-sizes: 0 is not a positive batch size" "bench: zero batch"

# Google's TF1 checkpoint where a user first tries it: its directory or its prefix, read directly (bert_config.json
# beside it), the same start as from ckpt-convert's native copy of it, byte for byte after two steps.
K=$FIXTURES/tf_checkpoint/keras-bert-tiny
bert-finetune features -q --task mrpc --vocab "$K/vocab.txt" --max-seq-length 16 --train -o "$TMP/k16.tfrecord" \
  "$FIXTURES/glue/MRPC/train.tsv"
ckpt-convert -q --to native -o "$TMP/k-native" "$K/bert_model.ckpt"
bert-finetune train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/k-native" --train-file "$TMP/k16.tfrecord" \
  --output-dir "$TMP/k-from-native" --max-steps 2 --no-tensorboard
for init in "$K" "$K/bert_model.ckpt"; do
  out=$TMP/k-from-tf-$(basename "$init")
  run bert-finetune train -q --precision fp32 --task mrpc --init-checkpoint "$init" --train-file "$TMP/k16.tfrecord" \
    --output-dir "$out" --max-steps 2 --no-tensorboard
  expect_rc 0 "--init-checkpoint $init (TF1)"
  expect_same "$TMP/k-from-native/checkpoints/step-00000002/model.safetensors" \
    "$out/checkpoints/step-00000002/model.safetensors" "from TF1 ($init) as from its native conversion"
done
finish
