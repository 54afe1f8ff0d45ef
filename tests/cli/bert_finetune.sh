#!/usr/bin/env bash
# bert-finetune features: usage errors (exit 2), bad inputs (one-line errors naming file and place, exit 1, no
# output left), output-file safety, the summary line, determinism. Identity of the features with run_squad.py and
# run_classifier.py is the compat test's job (tests/compat/test_finetune_features.py).
source "$(dirname "$0")/lib.sh"
need_fixtures
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
XQUAD=$FIXTURES/squad/xquad.en.json
MRPC=$FIXTURES/glue/MRPC
O=$TMP/out.tfrecord

# expect_error MESSAGE_REGEX DESCRIPTION: exit 1, exactly one stderr line "bert-finetune: error: ...", no output.
expect_error() {
  expect_rc 1 "$2"
  expect_err "^bert-finetune: error: $1\$" "$2: message"
  CASES=$((CASES + 1))
  [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "$2: more than one line on stderr: $ERR"
  expect_file_absent "$O" "$2: no output left"
}
# expect_usage REGEX DESCRIPTION: exit 2, the flag named, "try --help", no output.
expect_usage() {
  expect_rc 2 "$2"
  expect_err "^bert-finetune: .*$1.*; try --help\$" "$2: message"
  expect_file_absent "$O" "$2: no output left"
}

run bert-finetune --help
expect_rc 0 "--help"
printf '%s' "$OUT" | grep -q -- '--doc-stride' || fail_case "--help lists the features options"
printf '%s' "$OUT" | grep -q '^Examples:' || fail_case "--help has an examples section"
printf '%s' "$OUT" | grep -q '^Exit status: 0 ok, 1 error' || fail_case "--help has an exit-status line"
run bert-finetune features --help
expect_rc 0 "features --help"
run bert-finetune --version
expect_rc 0 "--version"; expect_out "bert-finetune (bertkit) 0.1.0" "--version text"

# Usage errors.
run bert-finetune
expect_usage "missing subcommand" "no subcommand"
run bert-finetune convert --task squad
expect_usage "unknown subcommand 'convert'" "unknown subcommand"
run bert-finetune features --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_usage "task" "missing --task"
run bert-finetune features --task squad -o "$O" "$XQUAD"
expect_usage "vocab" "missing --vocab"
run bert-finetune features --task squad --vocab "$VOCAB" "$XQUAD"
expect_usage "output" "missing -o"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O"
expect_usage "missing INPUT" "missing INPUT"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$XQUAD" "$XQUAD"
expect_usage "expected one INPUT, got 2" "two inputs"
run bert-finetune features --task squad3 --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_usage "--task must be squad, squad2 or a GLUE task \(cola mnli mrpc sst-2 sts-b qqp qnli rte wnli\), got 'squad3'" "unknown task"
run bert-finetune features --task mrpc --doc-stride 64 --vocab "$VOCAB" -o "$O" "$MRPC/dev.tsv"
expect_usage "--doc-stride applies to squad and squad2 only" "--doc-stride for GLUE"
run bert-finetune features --task squad --max-seq-length 67 --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_usage "--max-seq-length \(67\) must be greater than --max-query-length \(64\) \+ 3" "length below query + 3"
run bert-finetune features --task squad --doc-stride 0 --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_usage "--doc-stride must be positive, got 0" "zero stride"
run bert-finetune features --task sst-2 --max-seq-length 2 --vocab "$VOCAB" -o "$O" "$FIXTURES/glue/SST-2/dev.tsv"
expect_usage "--max-seq-length must be at least 3" "GLUE length below 3"
run bert-finetune features --task squad --max-seq-lenght 128 --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_usage "max-seq-lenght" "misspelt flag"

# Bad SQuAD inputs.
printf '{"data": [1, }\n' >"$TMP/bad.json"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$TMP/bad.json"
expect_error "$TMP/bad.json: malformed JSON at byte 14 \(line 1, column 14: syntax error while parsing value - unexpected '\}'; expected '\[', '\{', or a literal\)" "malformed JSON"
printf '{"data": [{"paragraphs": [{"context": "a\xff"}]}]}' >"$TMP/bad-utf8.json"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$TMP/bad-utf8.json"
expect_error "$TMP/bad-utf8.json: malformed JSON at byte 41 \(line 1, column 41: syntax error while parsing value - invalid string: ill-formed UTF-8 byte\)" "JSON with invalid UTF-8"
outside='{"data": [{"paragraphs": [{"context": "short text", "qas": [
  {"id": "q0", "question": "Which?", "answers": [{"text": "short", "answer_start": 0}]},
  {"id": "q1", "question": "What?", "answers": [{"text": "text here", "answer_start": 6}]}]}]}]}'
printf '%s' "$outside" >"$TMP/outside.json"
run bert-finetune features --task squad --train --vocab "$VOCAB" -o "$O" "$TMP/outside.json"
expect_error "$TMP/outside.json: question q1: the answer \(characters 6 to 15\) falls outside its context of 10 characters" "answer outside its context"
# Answers are read for training only, as the reference reads them.
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$TMP/outside.json"
expect_rc 0 "answers not read without --train"
expect_err "^bert-finetune: squad: 2 examples, 2 features, 0 skipped, " "summary line counts the examples"
rm -f "$O"
printf '{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "q1", "answers": []}]}]}]}' >"$TMP/noq.json"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$TMP/noq.json"
expect_error "$TMP/noq.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: missing \"question\"" "missing field named by place"
printf '{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "q1", "question": "x", "answers": []}]}]}]}' >"$TMP/noans.json"
run bert-finetune features --task squad --train --vocab "$VOCAB" -o "$O" "$TMP/noans.json"
expect_error "$TMP/noans.json: question q1: a training question needs exactly 1 answer, it has 0" "training question without answer"
run bert-finetune features --task squad2 --train --vocab "$VOCAB" -o "$O" "$TMP/noans.json"
expect_error "$TMP/noans.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: missing \"is_impossible\"" "squad2 without is_impossible"
printf '{"data": {"title": "x"}}' >"$TMP/dict.json"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$TMP/dict.json"
expect_error "$TMP/dict.json: top level\.data: expected an array, found object" "data not an array"
# An answer whose text is not in its words: skipped and counted, as the reference does.
printf '{"data": [{"paragraphs": [{"context": "one two three", "qas": [{"id": "a", "question": "x", "answers": [{"text": "zzz", "answer_start": 4}]}, {"id": "b", "question": "y", "answers": [{"text": "two", "answer_start": 4}]}]}]}]}' >"$TMP/skip.json"
run bert-finetune features --task squad --train --vocab "$VOCAB" -o "$O" "$TMP/skip.json"
expect_rc 0 "an answer not found is skipped"
expect_err "^bert-finetune: squad: 1 examples, 1 features, 1 skipped, " "skipped counted in the summary"
rm -f "$O"

# Bad GLUE inputs.
{ head -3 "$MRPC/dev.tsv"; printf '1\t2\t3\n'; } >"$TMP/short.tsv"
run bert-finetune features --task mrpc --vocab "$VOCAB" -o "$O" "$TMP/short.tsv"
expect_error "$TMP/short.tsv: line 4: mrpc needs at least 5 tab-separated columns, the row has 3" "TSV with a missing column"
{ head -3 "$MRPC/dev.tsv"; printf 'yes\t1\t2\ta\tb\n'; } >"$TMP/label.tsv"
run bert-finetune features --task mrpc --vocab "$VOCAB" -o "$O" "$TMP/label.tsv"
expect_error "$TMP/label.tsv: line 4: unknown label 'yes' \(the labels of mrpc are 0, 1\)" "unknown label"
printf 'index\tsentence1\tsentence2\tlabel\n0\ta\tb\tmaybe\n' >"$TMP/rte.tsv"
run bert-finetune features --task rte --train --vocab "$VOCAB" -o "$O" "$TMP/rte.tsv"
expect_error "$TMP/rte.tsv: line 2: unknown label 'maybe' \(the labels of rte are entailment, not_entailment\)" "unknown RTE label"
printf 'h\th\th\th\th\th\th\th\th\th\n0\tg\tf\t2012\t0\tn\tn\ta\tb\tfive\n' >"$TMP/stsb.tsv"
run bert-finetune features --task sts-b --vocab "$VOCAB" -o "$O" "$TMP/stsb.tsv"
expect_error "$TMP/stsb.tsv: line 2: the sts-b label 'five' is not a finite number" "STS-B score not a number"
printf 'sentence\tlabel\ngood \xff\t1\n' >"$TMP/utf8.tsv"
run bert-finetune features --task sst-2 --vocab "$VOCAB" -o "$O" "$TMP/utf8.tsv"
expect_error "$TMP/utf8.tsv: line 2: invalid UTF-8 at byte 6 of the line" "TSV with invalid UTF-8"
run bert-finetune features --task sst-2 --vocab "$VOCAB" -o "$O" "$TMP/missing.tsv"
expect_error "$TMP/missing.tsv: cannot open.*" "missing input"

# Bad vocabularies.
run bert-finetune features --task mrpc --vocab "$TMP/missing-vocab.txt" -o "$O" "$MRPC/dev.tsv"
expect_error "$TMP/missing-vocab.txt: cannot open.*" "missing vocab"
grep -v '^\[CLS\]$' "$VOCAB" >"$TMP/no-cls.txt"
run bert-finetune features --task mrpc --vocab "$TMP/no-cls.txt" -o "$O" "$MRPC/dev.tsv"
expect_error "$TMP/no-cls.txt: the vocabulary has no \[CLS\] token" "vocab without [CLS]"
run bert-finetune features --task squad --vocab "$TMP/no-cls.txt" -o "$O" "$XQUAD"
expect_error "$TMP/no-cls.txt: the vocabulary has no \[CLS\] token" "vocab without [CLS] (squad)"
grep -v '^\[UNK\]$' "$VOCAB" >"$TMP/no-unk.txt"
run bert-finetune features --task mrpc --vocab "$TMP/no-unk.txt" -o "$O" "$MRPC/dev.tsv"
expect_error "$TMP/no-unk.txt.*\[UNK\].*" "vocab without [UNK]"

# Output safety, the summary line, determinism.
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_rc 0 "squad defaults"
expect_err "^bert-finetune: squad: 1190 examples, 1232 features, 0 skipped, 0\.0093% \[UNK\], 609\.4 kB in [0-9.]+ s \(.*/s\)\$" "summary line"
cp "$O" "$TMP/first.tfrecord"
run bert-finetune features --task squad --vocab "$VOCAB" -o "$O" "$XQUAD"
expect_rc 1 "existing output refused"
expect_err "^bert-finetune: error: $O: already exists; use --force to overwrite it\$" "existing output message"
expect_same "$O" "$TMP/first.tfrecord" "a refused run leaves the file as it was"
run bert-finetune features -q --task squad --vocab "$VOCAB" -f -o "$O" - <"$XQUAD"
expect_rc 0 "-f replaces, stdin input"
expect_out "" "nothing on stdout"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "-q: nothing on stderr: $ERR"
expect_same "$O" "$TMP/first.tfrecord" "same bytes from stdin and again"
run bert-finetune features -q --task squad --vocab "$VOCAB" --max-seq-length 384 --doc-stride 128 --max-query-length 64 -o "$TMP/explicit.tfrecord" "$XQUAD"
expect_same "$TMP/explicit.tfrecord" "$TMP/first.tfrecord" "the defaults are 384/128/64"
run bert-finetune features -q --task mrpc --vocab "$VOCAB" --train -o "$TMP/mrpc.tfrecord" "$MRPC/train.tsv"
bert-finetune features -q --task mrpc --vocab "$VOCAB" --train --max-seq-length 128 -o - "$MRPC/train.tsv" >"$TMP/stdout.tfrecord"
RC=$?; expect_rc 0 "-o - writes to stdout"
expect_same "$TMP/stdout.tfrecord" "$TMP/mrpc.tfrecord" "stdout output equals the file output; GLUE's default length is 128"
: > "$TMP/afile"
run bert-finetune features --task mrpc --vocab "$VOCAB" -o "$TMP/afile/x.tfrecord" "$MRPC/dev.tsv"
expect_rc 1 "unwritable output"; expect_err "^bert-finetune: error: $TMP/afile: exists and is not a directory" "unwritable output named"

# A byte-level BPE tokenizer: its files are inputs too (a vocab.json's merges.txt), and --cased is WordPiece's.
O_WORDPIECE=$O; mkdir "$TMP/bpe"; O=$TMP/bpe/out.tfrecord
printf '{"<s>":0,"</s>":1,"a":2}' >"$TMP/vocab.json"; printf '#version: 0.2\n' >"$TMP/merges.txt"
cp "$TMP/merges.txt" "$TMP/merges.before"
run bert-finetune features -f --task mrpc --tokenizer "$TMP/vocab.json" -o "$TMP/merges.txt" "$MRPC/dev.tsv"
expect_rc 2 "output over a vocab.json's merges.txt"
expect_err "^bert-finetune: -o $TMP/merges.txt: is the input $TMP/merges.txt; write the output elsewhere; try --help\$" "merges.txt named"
expect_same "$TMP/merges.txt" "$TMP/merges.before" "merges.txt left as it was"
run bert-finetune features --task mrpc --tokenizer "$TMP/vocab.json" --cased -o "$O" "$MRPC/dev.tsv"
expect_usage "--cased is WordPiece's" "--cased with --tokenizer"
run bert-finetune features -q --task mrpc --tokenizer "$TMP/vocab.json" -o "$O" "$MRPC/dev.tsv"
expect_rc 0 "a vocab.json + merges.txt tokenizer"
O=$O_WORDPIECE

# SIGINT while the input is still coming (a FIFO held open): exit 130, the temporary output removed.
mkfifo "$TMP/fifo"
bert-finetune features --task mrpc --vocab "$VOCAB" -o "$TMP/int.tfrecord" "$TMP/fifo" 2>"$TMP/int.err" &
pid=$!
exec 3>"$TMP/fifo"
for _ in $(seq 100); do ls "$TMP" | grep -q '^int\.tfrecord\.tmp' && break; sleep 0.05; done
CASES=$((CASES + 1)); ls "$TMP" | grep -q '^int\.tfrecord\.tmp' || fail_case "the temporary output exists while the input is read"
kill -INT "$pid"
wait "$pid"; RC=$?
exec 3>&-
expect_rc 130 "SIGINT exits 130"
expect_file_absent "$TMP/int.tfrecord" "SIGINT leaves no output and no temporary"

run bert-finetune features --task mrpc --vocab "$VOCAB" -o "$TMP/test.tfrecord" "$MRPC/test.tsv"
expect_rc 0 "a test file has no labels"
expect_err "^bert-finetune: mrpc: 1725 examples, 1725 features, 0 skipped, " "test file summary"
run bert-finetune features --task mrpc --vocab "$VOCAB" --train -o "$TMP/test-as-train.tfrecord" "$MRPC/test.tsv"
expect_rc 1 "a test file read as a training file needs labels"
expect_err "test.tsv: line 4: unknown label '2'" "test file as training: its index column is no label"

# features needs no LibTorch; train, predict and bench run in bert-finetune-torch, which bert-finetune starts from
# beside itself. A bert-finetune without it (a build without LibTorch) still makes features and prints every --help,
# and says what is missing for the rest.
mkdir -p "$TMP/alone" && cp "$BIN/bert-finetune" "$TMP/alone/"
run "$TMP/alone/bert-finetune" features -q --task mrpc --vocab "$VOCAB" -o "$TMP/alone/dev.tfrecord" "$MRPC/dev.tsv"
expect_rc 0 "features without the LibTorch backend"
run "$TMP/alone/bert-finetune" predict --help
expect_rc 0 "predict --help without the LibTorch backend"
run "$TMP/alone/bert-finetune" predict --task mrpc --checkpoint "$TMP" --vocab "$VOCAB" --text a --text-b b
expect_rc 1 "predict without the LibTorch backend"
expect_err "^bert-finetune: error: bert-finetune predict needs LibTorch, and this build has none \\(bert-finetune-torch is not beside $TMP/alone/bert-finetune\\): build with -DBERTKIT_WITH_TORCH=ON \\(scripts/setup.sh --torch\\)\$" "what is missing"
run "$TMP/alone/bert-finetune" predict --task mrpc --checkpoint "$TMP" --vocab "$VOCAB" --text a --question b
expect_rc 2 "usage errors are found without the backend"
run "$TMP/alone/bert-finetune" train --task mrpc --train-file x --output-dir "$TMP/o" --bogus
expect_rc 2 "unknown flags are found without the backend"
finish
