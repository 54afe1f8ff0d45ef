#!/usr/bin/env bash
# bert-finetune predict: usage errors (exit 2, the flag named, nothing created), bad inputs (one line naming the file
# and position, exit 1, no prediction file left), existing predictions kept without --force, and the outputs' shape
# on a tiny model fine-tuned here for two steps. Fidelity to run_squad.py's write_predictions and to the official
# scorers is compat.squad_predictions' job; learning MRPC is compat.finetune_mrpc's.
source "$(dirname "$0")/lib.sh"
[ -x "$BIN/bert-finetune-torch" ] || { echo "skipped: bert-finetune-torch not built (needs LibTorch)"; exit 77; }
[ -x "${TORCH_TEST_TOOLS:-}/model_probe" ] || { echo "skipped: no model_probe"; exit 77; }
need_fixtures
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
MRPC=$FIXTURES/glue/MRPC
OUTDIR=$TMP/pred

usage() {  # REGEX DESCRIPTION
  expect_rc 2 "$2"
  expect_err "^bert-finetune: $1; try --help\$" "$2: message"
  CASES=$((CASES + 1)); [ ! -e "$OUTDIR" ] || fail_case "$2: $OUTDIR created"
}
error() {  # REGEX DESCRIPTION [FILE that must not exist]
  expect_rc 1 "$2"
  expect_err "^bert-finetune: error: $1\$" "$2: message"
  CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "$2: more than one line: $ERR"
  CASES=$((CASES + 1)); [ -z "${3:-}" ] || [ ! -e "$3" ] || fail_case "$2: $3 left behind"
}

# A tiny model fine-tuned for MRPC for two steps (its scores mean nothing; the files' shape does).
"$TORCH_TEST_TOOLS/model_probe" init "$SRC/tests/fixtures/tiny_bert_config.json" 1 "$TMP/pre"
bert-finetune features -q --task mrpc --vocab "$VOCAB" --max-seq-length 64 --train -o "$TMP/train.tfrecord" "$MRPC/train.tsv"
bert-finetune train -q --precision fp32 --task mrpc --init-checkpoint "$TMP/pre" --train-file "$TMP/train.tfrecord" \
  --output-dir "$TMP/mrpc" --max-steps 2 --train-batch-size 8 --no-tensorboard
CKPT=$TMP/mrpc/checkpoints/step-00000002
[ -f "$CKPT/model.safetensors" ] || { echo "no fine-tuned checkpoint in $TMP/mrpc"; exit 1; }
P=(predict --precision fp32 --task mrpc --checkpoint "$CKPT" --vocab "$VOCAB")

run bert-finetune predict --help
expect_rc 0 "predict --help"
run bert-finetune "${P[@]}"
usage "give --predict-file \(with -o\), or --question/--context or --text" "nothing to predict"
run bert-finetune "${P[@]}" --predict-file "$MRPC/dev.tsv"
usage "--predict-file needs -o DIR for the predictions" "no output directory"
run bert-finetune "${P[@]}" --predict-file "$MRPC/dev.tsv" -o "$OUTDIR" --text "a"
usage "--predict-file and --question/--text exclude each other" "file and text"
run bert-finetune "${P[@]}" --predict-file "$MRPC/dev.tsv" -o "$OUTDIR" --save-logits "$TMP/l.jsonl"
usage "--save-logits is for squad and squad2" "logits of a GLUE task"
run bert-finetune "${P[@]}" --question "who?" --context "me"
usage "--question and --context are for squad and squad2; --task mrpc takes --text" "a question for MRPC"
run bert-finetune predict --task squad --checkpoint "$CKPT" --vocab "$VOCAB" --question "who?"
usage "--task squad answers a --question about a --context: give both" "a question without context"
run bert-finetune "${P[@]}" --predict-file "$MRPC/dev.tsv" -o "$OUTDIR" --n-best-size 0
usage "--n-best-size must be positive, got 0" "no n-best"

# Bad inputs: one line naming the file, no prediction file.
run bert-finetune predict --task sst-2 --checkpoint "$CKPT" --vocab "$VOCAB" --text "fine"
error "$CKPT: a checkpoint fine-tuned for mrpc, not for sst-2" "a checkpoint of another task"
head -100 "$VOCAB" >"$TMP/small-vocab.txt"
run bert-finetune predict --task mrpc --checkpoint "$CKPT" --vocab "$TMP/small-vocab.txt" --predict-file "$MRPC/dev.tsv" -o "$OUTDIR"
error "$TMP/small-vocab.txt: 100 tokens, but the checkpoint's model has a vocabulary of 30522: not the vocabulary it was trained with" \
  "a vocabulary that does not match" "$OUTDIR/MRPC.tsv"
{ head -3 "$MRPC/dev.tsv"; printf '1\t42\t43\tonly one sentence\n'; } >"$TMP/dev.tsv"
run bert-finetune "${P[@]}" --predict-file "$TMP/dev.tsv" -o "$OUTDIR"
error "$TMP/dev.tsv: line 4: mrpc needs at least 5 tab-separated columns, the row has 4" "a row missing a column" "$OUTDIR/MRPC.tsv"
{ head -3 "$MRPC/dev.tsv"; printf '7\t42\t43\tone\ttwo\n'; } >"$TMP/dev.tsv"
run bert-finetune "${P[@]}" --predict-file "$TMP/dev.tsv" -o "$OUTDIR"
error "$TMP/dev.tsv: line 4: unknown label '7' \(the labels of mrpc are 0, 1\)" "an unknown label" "$OUTDIR/MRPC.tsv"

# Predictions: the submission file, the scores, the interactive label.
run bert-finetune "${P[@]}" -q --predict-file "$MRPC/dev.tsv" -o "$OUTDIR"
expect_rc 0 "dev set"
CASES=$((CASES + 1))
[ "$(head -1 "$OUTDIR/MRPC.tsv")" = "$(printf 'index\tprediction')" ] && [ "$(wc -l <"$OUTDIR/MRPC.tsv")" = 409 ] \
  || fail_case "MRPC.tsv: a header and 408 rows"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -qE '^\{"task":"mrpc","examples":408,"accuracy":[0-9.e-]+,"f1":[0-9.e-]+\}$' \
  || fail_case "dev scores on stdout: $OUT"
cp "$OUTDIR/MRPC.tsv" "$TMP/kept.tsv"
run bert-finetune "${P[@]}" -q --predict-file "$MRPC/test.tsv" -o "$OUTDIR"
error "$OUTDIR/MRPC.tsv: already exists; use --force to overwrite it" "existing predictions kept without --force"
CASES=$((CASES + 1)); cmp -s "$OUTDIR/MRPC.tsv" "$TMP/kept.tsv" || fail_case "the existing MRPC.tsv was changed"
run bert-finetune "${P[@]}" -q --predict-file "$MRPC/test.tsv" -o "$OUTDIR" --force
expect_rc 0 "test set with --force"
CASES=$((CASES + 1)); [ "$(wc -l <"$OUTDIR/MRPC.tsv")" = 1726 ] && [ -z "$OUT" ] || fail_case "test set: 1725 rows, no scores"
run bert-finetune "${P[@]}" --text "The cat sat." --text-b "A cat was sitting."
expect_rc 0 "interactive pair"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -qE '^\{"label":"[01]","probability":[0-9.e-]+\}$' || fail_case "label JSON: $OUT"
OUTDIR=$TMP/none
run bert-finetune "${P[@]}" --text "The cat sat."
usage "--task mrpc classifies a pair: give --text and --text-b" "one sentence for a pair task"

# SQuAD: a tiny model fine-tuned for two steps on XQuAD.
XQUAD=$FIXTURES/squad/xquad.en.json
SQ=(--task squad --vocab "$VOCAB" --max-seq-length 128 --doc-stride 64 --max-query-length 32)
bert-finetune features -q "${SQ[@]}" --train -o "$TMP/squad.tfrecord" "$XQUAD"
bert-finetune train -q --precision fp32 --task squad --init-checkpoint "$TMP/pre" --train-file "$TMP/squad.tfrecord" \
  --output-dir "$TMP/squad" --max-steps 2 --train-batch-size 8 --no-tensorboard --vocab "$VOCAB"
SQCKPT=$TMP/squad/checkpoints/step-00000002
OUTDIR=$TMP/squad-pred
printf '{"version": "1.1", "data": [{"paragraphs": [{"context": "x", "qas": [}]}]}' >"$TMP/bad.json"
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$TMP/bad.json" -o "$OUTDIR"
error "$TMP/bad.json: malformed JSON at byte 70 \\(line 1, column 70: .*" "malformed SQuAD JSON" "$OUTDIR/predictions.json"
run bert-finetune predict --task squad2 --vocab "$VOCAB" --checkpoint "$SQCKPT" --predict-file "$XQUAD" -o "$OUTDIR"
error "$SQCKPT: a checkpoint fine-tuned for squad, not for squad2" "a SQuAD v1.1 model for squad2" "$OUTDIR/predictions.json"
run bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$XQUAD" -o "$OUTDIR" --save-logits "$TMP/logits.jsonl"
expect_rc 0 "SQuAD predictions"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -qE '^\{"exact_match": [0-9.e-]+, "f1": [0-9.e-]+\}$' || fail_case "official scores on stdout: $OUT"
CASES=$((CASES + 1))
[ "$(grep -c '^    "' "$OUTDIR/predictions.json")" = 1190 ] && [ -f "$OUTDIR/nbest_predictions.json" ] && [ ! -e "$OUTDIR/null_odds.json" ] \
  || fail_case "predictions.json holds the 1190 questions, nbest_predictions.json is there, no null_odds.json for v1.1"
FEATURES=$(bert-finetune features "${SQ[@]}" -o - "$XQUAD" 2>&1 >/dev/null | sed -n 's/.* examples, \([0-9]*\) features.*/\1/p')
CASES=$((CASES + 1)); [ "$(wc -l <"$TMP/logits.jsonl")" = "$FEATURES" ] || fail_case "one logits line per feature ($FEATURES)"
# The checkpoint carries its vocabulary (train --vocab): predict from the run's directory needs no --vocab.
CASES=$((CASES + 1)); cmp -s "$SQCKPT/vocab.txt" "$VOCAB" && [ -f "$SQCKPT/tokenizer_config.json" ] \
  || fail_case "the fine-tuned checkpoint carries vocab.txt and tokenizer_config.json"
# (--save-logits above made that run padded; so is this one.)
run bert-finetune predict --precision fp32 --task squad --max-seq-length 128 --doc-stride 64 --max-query-length 32 --checkpoint "$TMP/squad" \
  --predict-file "$XQUAD" -o "$TMP/squad-pred-novocab" --attention padded
expect_rc 0 "SQuAD predictions from the run directory, without --vocab"
expect_same "$OUTDIR/predictions.json" "$TMP/squad-pred-novocab/predictions.json" "the vocabulary the checkpoint carries gives the same predictions"
# Unpadded (the default without --save-logits): every question answered; an explicit unpadded run cannot save
# the logits of every position.
run bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$XQUAD" -o "$TMP/squad-pred-unpadded"
expect_rc 0 "SQuAD predictions, unpadded by default"
CASES=$((CASES + 1)); [ "$(grep -c '^    "' "$TMP/squad-pred-unpadded/predictions.json")" = 1190 ] \
  || fail_case "unpadded predictions.json holds the 1190 questions"
KEPT_OUTDIR=$OUTDIR OUTDIR=$TMP/x
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$XQUAD" -o "$OUTDIR" --attention unpadded \
  --save-logits "$TMP/l2.jsonl"
usage "--save-logits writes the logits of every position, padding included: it needs --attention padded \(its default\)" \
  "--save-logits with --attention unpadded"
OUTDIR=$KEPT_OUTDIR
cp "$OUTDIR/predictions.json" "$TMP/kept.json"
run bert-finetune predict "${SQ[@]}" --checkpoint "$SQCKPT" --predict-file "$XQUAD" -o "$OUTDIR" --n-best-size 5
error "$OUTDIR/predictions.json: already exists; use --force to overwrite it" "existing SQuAD predictions kept"
CASES=$((CASES + 1)); cmp -s "$OUTDIR/predictions.json" "$TMP/kept.json" || fail_case "the existing predictions.json was changed"
run bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --question "Who patented the loom?" \
  --context "The loom was patented in 1796 by Hester Fennick, a weaver."
expect_rc 0 "interactive question"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -qE '^\{"answer":".*","probability":[0-9.e-]+,"start_logit":[0-9.e-]+,"end_logit":[0-9.e-]+\}$' \
  || fail_case "answer JSON: $OUT"
ANSWER=$OUT
run bert-finetune predict --precision fp32 "${SQ[@]}" --checkpoint "$SQCKPT" --question "Who patented the loom?" --context - \
  <<<"The loom was patented in 1796 by Hester Fennick, a weaver."
expect_rc 0 "--context - reads the paragraph from stdin"
expect_out "$ANSWER" "the same answer as with the paragraph given on the command line"

# SQuAD's windows: train takes --doc-stride and --max-query-length, makes its --eval-file's features with them and
# records them in task.json; predict, given none, uses them. The best model's score in training is then the score
# predict gives it on the same file, and a model of 64-token features answers a question without any flag.
"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1])); d["data"] = d["data"][:1]; d["data"][0]["paragraphs"] = d["data"][0]["paragraphs"][:3]
json.dump(d, open(sys.argv[2], "w"))' "$XQUAD" "$TMP/small.json"
WINDOWS=(--doc-stride 16 --max-query-length 16)
bert-finetune features -q --task squad --vocab "$VOCAB" --max-seq-length 64 "${WINDOWS[@]}" --train \
  -o "$TMP/short.tfrecord" "$TMP/small.json"
run bert-finetune train -q --precision fp32 --task squad --init-checkpoint "$TMP/pre" --train-file "$TMP/short.tfrecord" \
  --output-dir "$TMP/short" --max-steps 4 --train-batch-size 8 --no-tensorboard --vocab "$VOCAB" "${WINDOWS[@]}" \
  --eval-file "$TMP/small.json"
expect_rc 0 "train with SQuAD's windows"
run "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["doc_stride"], d["max_query_length"])' \
  "$TMP/short/best/task.json"
expect_out "16 16" "task.json records the windows"
run bert-finetune predict -q --precision fp32 --task squad --checkpoint "$TMP/short/best" --predict-file "$TMP/small.json" -o "$TMP/short-pred"
expect_rc 0 "predict with the recorded windows"
# best/ holds the model of the highest eval_f1 logged: predict's F1 is that number.
run "$PYTHON" -c 'import json, sys
best = max(r["eval_f1"] for r in map(json.loads, open(sys.argv[1])) if "eval_f1" in r)
got = json.loads(sys.argv[2])["f1"]
print("same" if abs(got - best) <= 1e-9 * max(1.0, abs(best)) else f"predict {got}, training {best}")' \
  "$TMP/short/log.jsonl" "$OUT"
expect_out "same" "predict's F1 is the F1 training logged for its best model"
run bert-finetune predict --precision fp32 --task squad --checkpoint "$TMP/short/best" --question "Who patented the loom?" \
  --context "The loom was patented in 1796 by Hester Fennick, a weaver."
expect_rc 0 "a question to a model of 64-token features, no flags"
OUTDIR=$TMP/short2
run bert-finetune train -q --task squad --init-checkpoint "$TMP/pre" --train-file "$TMP/short.tfrecord" \
  --output-dir "$TMP/short2" --max-steps 1 --no-tensorboard --vocab "$VOCAB" --eval-file "$TMP/small.json"
usage "$TMP/short.tfrecord: features of 64 tokens leave no room for the default --max-query-length 64 \(it must be below 61\): give train the --max-query-length \(and --doc-stride\) the features were made with" \
  "the default query length on short features, with an --eval-file"
# Without an --eval-file the run goes on, and task.json records no windows (predict then needs its own).
run bert-finetune train -q --precision fp32 --task squad --init-checkpoint "$TMP/pre" --train-file "$TMP/short.tfrecord" \
  --output-dir "$TMP/short3" --max-steps 1 --no-tensorboard
expect_rc 0 "short features, no --eval-file"
run "$PYTHON" -c 'import json, sys; print("doc_stride" in json.load(open(sys.argv[1])))' "$TMP/short3/checkpoints/step-00000001/task.json"
expect_out "False" "no windows recorded when none were used"
OUTDIR=$TMP/x
run bert-finetune train -q --task mrpc --init-checkpoint "$TMP/pre" --train-file "$TMP/train.tfrecord" \
  --output-dir "$TMP/x" --doc-stride 16
usage "--doc-stride applies to squad and squad2 only" "--doc-stride for GLUE"
finish
