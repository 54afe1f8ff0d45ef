#!/usr/bin/env bash
# The vocabulary stamp (tok/vocab_stamp.h): mkpretrain records its vocabulary and casing in the HDF5 file, bin4 and
# pack pass it on, bert-train records it in its checkpoints; bert-train, bert-eval, bert-finetune and ckpt-convert
# refuse data, a --vocab or a casing other than the model's in one line, and --allow-vocab-mismatch turns that into a
# warning. Without the stamp every one of these runs succeeds on ids of another vocabulary.
source "$(dirname "$0")/lib.sh"
need_fixtures
[ -x "$BIN/bert-train" ] || { echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; }
export OMP_NUM_THREADS=1
UNCASED=$FIXTURES/vocab/bert-base-uncased-vocab.txt
CASED=$FIXTURES/vocab/bert-base-cased-vocab.txt
TEXT=$FIXTURES/pretraining_text/sample_text.txt
CFG=$SRC/tests/fixtures/tiny_bert_config.json
MK=(mkpretrain -q --max-seq-length 64 --max-predictions 10)

refused() {  # REGEX DESCRIPTION: exit 1, one line naming the mismatch and the flag
  expect_rc 1 "$2"
  expect_err "error: (.*/)?$1.*--allow-vocab-mismatch to go ahead\$" "$2: message"
  CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "$2: more than one line: $ERR"
}

"${MK[@]}" --vocab "$UNCASED" -o "$TMP/uncased.h5" "$TEXT"
# Google's own vocabulary, its words reordered: every id still fits a 30522-token model.
(head -n 999 "$UNCASED"; tail -n +1000 "$UNCASED" | sort) > "$TMP/shuffled.txt"
"${MK[@]}" --vocab "$TMP/shuffled.txt" -o "$TMP/shuffled.h5" "$TEXT"
"${MK[@]}" --vocab "$UNCASED" --cased -o "$TMP/cased-text.h5" "$TEXT" 2>/dev/null

# The stamp as h5py reads it: fnv1a64:HASH:SIZE:CASING.
if "$PYTHON" -c 'import h5py' 2>/dev/null; then
  run "$PYTHON" -c 'import h5py, sys; print(h5py.File(sys.argv[1], "r").attrs["bertkit_vocab"])' "$TMP/uncased.h5"
  expect_rc 0 "h5py reads the stamp"
  CASES=$((CASES + 1)); [[ "$OUT" =~ ^fnv1a64:[0-9a-f]{16}:30522:uncased$ ]] || fail_case "stamp text: $OUT"
fi

# bert-train: data against --vocab, mixed data, evaluation data.
T=(bert-train -q --precision fp32 --config "$CFG" --train-batch-size 4 --max-predictions 10 --max-steps 2 --no-tensorboard)
run "${T[@]}" --input "$TMP/shuffled.h5" --vocab "$UNCASED" --output-dir "$TMP/r1"
refused "shuffled.h5 \(30522 tokens, uncased, fnv1a64 [0-9a-f]{16}\) and .*bert-base-uncased-vocab.txt \(30522 tokens, uncased, fnv1a64 [0-9a-f]{16}\) are of different vocabularies" \
  "bert-train: data of another vocabulary than --vocab"
CASES=$((CASES + 1)); [ ! -e "$TMP/r1" ] || fail_case "bert-train: refused run left $TMP/r1"
run "${T[@]}" --input "$TMP/uncased.h5" "$TMP/shuffled.h5" --output-dir "$TMP/r1"
expect_rc 1 "bert-train: inputs of two vocabularies"
expect_err "uncased.h5 .* and .*shuffled.h5 .* were made with different vocabularies" "bert-train: mixed inputs named"
run "${T[@]}" --input "$TMP/uncased.h5" --eval-input "$TMP/shuffled.h5" --output-dir "$TMP/r1"
refused "uncased.h5 .* and .*shuffled.h5 .* are of different vocabularies" "bert-train: --eval-input of another vocabulary"
run "${T[@]}" --input "$TMP/shuffled.h5" --vocab "$UNCASED" --output-dir "$TMP/r1" --allow-vocab-mismatch
expect_rc 0 "bert-train --allow-vocab-mismatch"
expect_err "warning: .*are of different vocabularies \(going ahead: --allow-vocab-mismatch\)" "bert-train: the warning"

# Two workers: one warning, from the first.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run "${T[@]}" --input "$TMP/shuffled.h5" --eval-input "$TMP/uncased.h5" --vocab "$UNCASED" --output-dir "$TMP/r2" --eval-samples 50 \
  --allow-vocab-mismatch --nproc-per-node 2 --master-port "$port" --dist-timeout 60 --dry-run
expect_rc 0 "2 workers with --allow-vocab-mismatch"
CASES=$((CASES + 1)); n=$(printf '%s\n' "$ERR" | grep -c "warning: .*are of different vocabularies" || true)
[ "$n" = 2 ] || fail_case "2 workers: $n warnings, not one per mismatch (data/--vocab, data/--eval-input): $ERR"

# A run with --vocab carries it; one without records its data's stamp in trainer_state.json.
run "${T[@]}" --input "$TMP/uncased.h5" --vocab "$UNCASED" --output-dir "$TMP/run"
expect_rc 0 "bert-train with matching data and --vocab"
run "${T[@]}" --input "$TMP/uncased.h5" --output-dir "$TMP/novocab"
expect_rc 0 "bert-train without --vocab"
run grep -c '"vocab": "fnv1a64:' "$TMP/novocab/checkpoints/step-00000002/trainer_state.json"
expect_out 1 "trainer_state.json records the data's stamp"
# Phase 2 from phase 1 on data of another vocabulary, or text cased for an uncased model.
run "${T[@]}" --input "$TMP/shuffled.h5" --init-checkpoint "$TMP/run" --output-dir "$TMP/p2"
refused "shuffled.h5 .* and .*run/checkpoints/step-00000002/vocab.txt .* are of different vocabularies" \
  "bert-train: data of another vocabulary than --init-checkpoint's"
run "${T[@]}" --input "$TMP/cased-text.h5" --init-checkpoint "$TMP/run" --output-dir "$TMP/p2"
refused "cased-text.h5 is cased but .*vocab.txt is uncased" "bert-train: cased text for an uncased model"
run "${T[@]}" --input "$TMP/uncased.h5" --init-checkpoint "$TMP/novocab" --vocab "$TMP/shuffled.txt" --output-dir "$TMP/p2"
refused "uncased.h5 .* and .*shuffled.txt .* are of different vocabularies" "bert-train: --vocab other than the data's"

# bert-eval: data against the checkpoint (its vocab.txt, or the stamp of its training data); --fill-mask's casing.
for ckpt in run novocab; do
  run bert-eval -q --checkpoint "$TMP/$ckpt" --input "$TMP/shuffled.h5"
  refused "shuffled.h5 .* are of different vocabularies" "bert-eval: data of another vocabulary ($ckpt)"
  run bert-eval -q --precision fp32 --checkpoint "$TMP/$ckpt" --input "$TMP/uncased.h5"
  expect_rc 0 "bert-eval: the model's own data ($ckpt)"
done
run bert-eval -q --precision fp32 --checkpoint "$TMP/run" --input "$TMP/shuffled.h5" --allow-vocab-mismatch
expect_rc 0 "bert-eval --allow-vocab-mismatch"
run bert-eval -q --checkpoint "$TMP/run" --fill-mask "the [MASK] sat" --cased
refused "vocab.txt with --cased is cased but .*vocab.txt is uncased" "bert-eval --cased on an uncased model"
run bert-eval -q --checkpoint "$TMP/run" --fill-mask "the [MASK] sat" --vocab "$TMP/shuffled.txt"
refused "shuffled.txt .* are of different vocabularies" "bert-eval --fill-mask with another --vocab"

# bin4 and pack pass the stamp on, and refuse inputs of two vocabularies.
run bin4 -q --bins 32,64 --max-predictions 10 -o "$TMP/bins" "$TMP/shuffled.h5"
expect_rc 0 "bin4"
run bert-eval -q --checkpoint "$TMP/run" --input "$TMP/bins"
refused "part-.* are of different vocabularies" "bert-eval: bin4's output keeps its input's vocabulary"
run bin4 -q --bins 32,64 --max-predictions 10 -o "$TMP/bins2" "$TMP/uncased.h5" "$TMP/shuffled.h5"
expect_rc 1 "bin4: inputs of two vocabularies"
expect_err "were made with different vocabularies" "bin4: message"
CASES=$((CASES + 1)); [ ! -e "$TMP/bins2" ] || fail_case "bin4 refused but left $TMP/bins2"
# A file that records no vocabulary (as Google's and tfrecord2hdf5's) beside a stamped one: the output keeps the
# stamped one's, which bert-train then checks, and bin4 says so.
if "$PYTHON" -c 'import h5py' 2>/dev/null; then
  "$PYTHON" -c 'import h5py, sys
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "w") as g:
    for name in f: g.create_dataset(name, data=f[name][:])' "$TMP/shuffled.h5" "$TMP/plain.h5"
  run bin4 --bins 32,64 --max-predictions 10 -o "$TMP/mixed-bins" "$TMP/shuffled.h5" "$TMP/plain.h5"
  expect_rc 0 "bin4: a stamped and an unstamped input"
  expect_err "^bin4: warning: $TMP/plain.h5 records no vocabulary; taken as $TMP/shuffled.h5's" "bin4: the warning"
  run "$PYTHON" -c 'import h5py, sys; print("bertkit_vocab" in h5py.File(sys.argv[1], "r").attrs)' \
    "$TMP/mixed-bins/64/part-00000-of-00001.hdf5"
  expect_out True "bin4: the known stamp kept"
fi
run pack -q -o "$TMP/packed.h5" "$TMP/shuffled.h5"
expect_rc 0 "pack"
run bert-eval -q --checkpoint "$TMP/run" --input "$TMP/packed.h5"
refused "packed.h5 .* are of different vocabularies" "bert-eval: pack's output keeps its input's vocabulary"

# ckpt-convert: --vocab and --do-lower-case against the checkpoint's.
run ckpt-convert -q --to hf --vocab "$CASED" -o "$TMP/hf" "$TMP/run"
refused "bert-base-cased-vocab.txt .* are of different vocabularies" "ckpt-convert: another --vocab"
CASES=$((CASES + 1)); [ ! -e "$TMP/hf" ] || fail_case "ckpt-convert refused but left $TMP/hf"
run ckpt-convert -q --to hf --do-lower-case false -o "$TMP/hf" "$TMP/run"
refused "vocab.txt with --do-lower-case false is cased but .* is uncased" "ckpt-convert: --do-lower-case against the model"
run ckpt-convert -q --to hf --vocab "$UNCASED" -o "$TMP/hf" "$TMP/novocab"
expect_rc 0 "ckpt-convert: the training data's vocabulary for a checkpoint without one"

# bert-finetune: --vocab against the pretrained model's, predict's --vocab and --cased against the fine-tuned one's.
if [ -x "$BIN/bert-finetune-torch" ]; then
  bert-finetune features -q --task mrpc --vocab "$UNCASED" --max-seq-length 64 --train -o "$TMP/mrpc.tfrecord" \
    "$FIXTURES/glue/MRPC/train.tsv"
  F=(bert-finetune train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/run" --train-file "$TMP/mrpc.tfrecord" --max-steps 1
     --train-batch-size 4 --no-tensorboard)
  run "${F[@]}" --vocab "$CASED" --output-dir "$TMP/ft-bad"
  refused "bert-base-cased-vocab.txt .* are of different vocabularies" "bert-finetune train: another --vocab"
  run "${F[@]}" --output-dir "$TMP/ft"
  expect_rc 0 "bert-finetune train"
  bert-finetune features -q --task squad --vocab "$UNCASED" --max-seq-length 64 --doc-stride 32 --max-query-length 16 \
    --train -o "$TMP/squad.tfrecord" "$FIXTURES/squad/xquad.en.json"
  run bert-finetune train -q --task squad --init-checkpoint "$TMP/run" --train-file "$TMP/squad.tfrecord" \
    --eval-file "$FIXTURES/squad/xquad.en.json" --cased --doc-stride 32 --max-query-length 16 --max-steps 1 \
    --train-batch-size 4 --no-tensorboard --output-dir "$TMP/sq-bad"
  refused "vocab.txt with --cased is cased but .*vocab.txt is uncased" "bert-finetune train: a cased SQuAD --eval-file for an uncased model"
  PRED=(bert-finetune predict -q --precision fp32 --task mrpc --checkpoint "$TMP/ft" --text "a gripping film" --text-b "a dull film")
  run "${PRED[@]}" --vocab "$CASED"
  refused "bert-base-cased-vocab.txt .* are of different vocabularies" "bert-finetune predict: another --vocab"
  run "${PRED[@]}" --cased
  refused "vocab.txt with --cased is cased but .* is uncased" "bert-finetune predict --cased on an uncased model"
  run "${PRED[@]}"
  expect_rc 0 "bert-finetune predict with the model's own vocabulary"
fi
finish
