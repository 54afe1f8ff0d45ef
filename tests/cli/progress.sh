#!/usr/bin/env bash
# Progress on a terminal, and only there: each long-running tool is run under a pseudo-terminal (script(1) from
# util-linux) and must draw a progress line with a percentage, an amount of a total and an ETA; run with stderr
# to a file (a pipe or a log), the same command must write nothing of it, only the one summary line. Also
# wiki-clean with no input and a terminal on stdin: refused in one line (as zstd does), not left waiting.
source "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { echo "skipped: no script(1) (util-linux) to make a pseudo-terminal"; exit 77; }
# Draw at every update, so that runs of a fraction of a second draw too (the default is 4 draws a second).
export BERTKIT_PROGRESS_MS=0

# A corpus of a few hundred documents and its vocabulary.
words="the cat sat on a mat dog ran far away and then slept under old tree near river bank in morning light"
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' $words | awk '!seen[$0]++' >"$TMP/vocab.txt"
awk -v words="$words" 'BEGIN {
  n = split(words, w, " "); srand(7)
  for (d = 0; d < 400; d++) {
    for (s = 0; s < 6; s++) { line = ""; for (k = 0; k < 12; k++) line = line w[int(rand() * n) + 1] " "; print line "." }
    print ""
  }
}' >"$TMP/corpus.txt"

# on_tty NAME COMMAND: runs COMMAND (a shell string) with stdin, stdout and stderr on a pseudo-terminal; the
# terminal's transcript goes to $TMP/NAME.tty and its exit status to $RC.
on_tty() {
  script -qfec "$2" /dev/null </dev/null >"$TMP/$1.tty" 2>&1
  RC=$?
}
# expect_bar NAME REGEX: the transcript of NAME has a progress line matching REGEX, drawn with '\r'.
expect_bar() {
  CASES=$((CASES + 1))
  tr '\r' '\n' <"$TMP/$1.tty" | grep -aEq -- "$2" || fail_case "$1: no progress line /$2/ on the terminal: $(head -c 600 "$TMP/$1.tty" | cat -v)"
  CASES=$((CASES + 1))
  grep -aq $'\r' "$TMP/$1.tty" || fail_case "$1: the progress line is not redrawn in place ('\\r')"
}
# expect_no_bar NAME COMMAND...: the same run with stderr to a file draws no progress, only the summary line.
expect_no_bar() {
  local name=$1; shift
  "$@" </dev/null >/dev/null 2>"$TMP/$name.log"
  RC=$?; ERR=$(cat "$TMP/$name.log")
  expect_rc 0 "$name without a terminal"
  CASES=$((CASES + 1))
  # The summary line's [UNK] share and a warning about the vocabulary are not progress.
  sed -e 's/[0-9.]*% \[UNK\]//g' -e '/: warning: /d' "$TMP/$name.log" >"$TMP/$name.summary"
  if grep -aq $'\r\|%\|ETA' "$TMP/$name.summary" || [ "$(wc -l <"$TMP/$name.summary")" -ne 1 ]; then
    fail_case "$name: progress reached a non-terminal stderr: $(cat -v "$TMP/$name.log")"
  fi
}
PCT='[0-9]{1,3}% '
ETA=' ETA [0-9-]+:[0-9-]{2}'

# mkpretrain: reading (bytes of the input) and writing (instances).
on_tty mkpretrain "mkpretrain --vocab '$TMP/vocab.txt' --dupe-factor 3 -o '$TMP/a.tfrecord' '$TMP/corpus.txt'"
expect_rc 0 "mkpretrain under a terminal"
expect_bar mkpretrain "^mkpretrain: reading $PCT[0-9.]+ (B|kB)/[0-9.]+ kB [0-9.]+ [kMG]?B/s$ETA"
expect_bar mkpretrain "^mkpretrain: writing $PCT[0-9]+/[0-9]+ instances [0-9.]+ instances/s$ETA"
expect_no_bar mkpretrain.log mkpretrain --vocab "$TMP/vocab.txt" --dupe-factor 3 -o "$TMP/b.tfrecord" "$TMP/corpus.txt"
expect_same "$TMP/a.tfrecord" "$TMP/b.tfrecord" "the progress line does not change the output"
on_tty mkpretrain.q "mkpretrain -q --vocab '$TMP/vocab.txt' -o '$TMP/q.tfrecord' '$TMP/corpus.txt'"
CASES=$((CASES + 1)); [ ! -s "$TMP/mkpretrain.q.tty" ] || fail_case "-q on a terminal still drew: $(cat -v "$TMP/mkpretrain.q.tty")"

# tfrecord2hdf5: bytes of the TFRecord files.
on_tty tfrecord2hdf5 "tfrecord2hdf5 -o '$TMP/a.hdf5' '$TMP/a.tfrecord'"
expect_rc 0 "tfrecord2hdf5 under a terminal"
expect_bar tfrecord2hdf5 "^tfrecord2hdf5: $PCT[0-9.]+ [kMG]?B/[0-9.]+ [kMG]?B [0-9.]+ [kMG]?B/s$ETA, [0-9]+ records"
expect_no_bar tfrecord2hdf5.log tfrecord2hdf5 -o "$TMP/b.hdf5" "$TMP/a.tfrecord"

# shard: which pass of how many.
on_tty shard "shard -n 3 -o '$TMP/shards/w' '$TMP/corpus.txt'"
expect_rc 0 "shard under a terminal"
expect_bar shard "^shard: pass 1/2 $PCT.*$ETA, [0-9]+ documents"
expect_bar shard "^shard: pass 2/2 $PCT.*$ETA, [0-9]+ documents"
on_tty shard.groups "shard -n 3 --max-open-files 1 -o '$TMP/shards/g' '$TMP/corpus.txt'"
expect_bar shard.groups "^shard: pass 4/4 $PCT"
expect_no_bar shard.log shard -n 3 -o "$TMP/shards/x" "$TMP/corpus.txt"

# wordpiece train: counting (bytes), then merging (tokens of the vocabulary).
on_tty wordpiece "wordpiece train --vocab-size 200 -o '$TMP/vocab-learned.txt' '$TMP/corpus.txt'"
expect_rc 0 "wordpiece train under a terminal"
expect_bar wordpiece "^wordpiece: counting $PCT.*$ETA"
expect_bar wordpiece "^wordpiece: merging $PCT[0-9]+/200 tokens"
expect_no_bar wordpiece.log wordpiece train --vocab-size 200 -o "$TMP/vocab-learned2.txt" "$TMP/corpus.txt"

# wiki-clean: the share of the compressed dump consumed.
need_fixtures
DUMP="$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
on_tty wiki-clean "wiki-clean -o '$TMP/wiki.txt' '$DUMP'"
expect_rc 0 "wiki-clean under a terminal"
expect_bar wiki-clean "^wiki-clean: $PCT[0-9.]+ [kMG]?B/1\.7 MB [0-9.]+ [kMG]?B/s$ETA, [0-9]+ pages, [0-9]+ articles"
expect_no_bar wiki-clean.log wiki-clean -o "$TMP/wiki2.txt" "$DUMP"
expect_same "$TMP/wiki.txt" "$TMP/wiki2.txt" "wiki-clean's output is the same with and without the progress line"

# The LibTorch tools: bert-eval counts samples of the evaluation, ckpt-convert tensors read.
if [ -x "$BIN/bert-eval" ] && [ -x "$BIN/ckpt-convert" ] && [ -n "$FIXTURES" ] && [ -d "$FIXTURES/tf_checkpoint" ]; then
  on_tty ckpt-convert "ckpt-convert --to native -o '$TMP/native' '$FIXTURES/tf_checkpoint/keras-bert-tiny/bert_model.ckpt'"
  expect_rc 0 "ckpt-convert under a terminal"
  expect_bar ckpt-convert "^ckpt-convert: reading $PCT[0-9]+/[0-9]+ tensors [0-9.]+ tensors/s$ETA"
  expect_no_bar ckpt-convert.log ckpt-convert --to native -o "$TMP/native2" "$FIXTURES/tf_checkpoint/keras-bert-tiny/bert_model.ckpt"
  if [ -x "${TORCH_TEST_TOOLS:-}/model_probe" ]; then
    "$TORCH_TEST_TOOLS/model_probe" init "$SRC/tests/fixtures/tiny_bert_config.json" 1 "$TMP/model"
    mkpretrain -q --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-seq-length 64 --max-predictions 10 \
      -o "$TMP/eval.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
    on_tty bert-eval "bert-eval --precision fp32 --checkpoint '$TMP/model' --batch-size 4 '$TMP/eval.hdf5'"
    expect_rc 0 "bert-eval under a terminal"
    expect_bar bert-eval "^bert-eval: $PCT[0-9]+/[0-9]+ samples [0-9.]+ samples/s$ETA, mlm_accuracy [0-9.]+"
    expect_no_bar bert-eval.log bert-eval --precision fp32 --checkpoint "$TMP/model" --batch-size 4 "$TMP/eval.hdf5"
  fi
fi

# wiki-clean with no input while stdin is a terminal: one line, exit 2, no waiting, nothing written.
on_tty wiki-clean.stdin "wiki-clean -o '$TMP/never.txt'"
expect_rc 2 "wiki-clean with no input on a terminal"
OUT=$(tr -d '\r' <"$TMP/wiki-clean.stdin.tty")
expect_out "wiki-clean: no input given and stdin is a terminal; name a dump file (or '-' to read the terminal); try --help" \
  "wiki-clean's refusal is one line"
CASES=$((CASES + 1)); [ ! -e "$TMP/never.txt" ] || fail_case "the refused run created its output"
# The same for every tool that reads stdin when no input is named: sent-seg and wordpiece refuse a terminal too.
for cmd in "sent-seg -o '$TMP/never.txt'|a text file" "wordpiece encode --vocab '$FIXTURES/vocab/bert-base-uncased-vocab.txt'|a text file" \
           "wordpiece train -o '$TMP/never.txt'|the training text"; do
  tool=${cmd%%|*}; what=${cmd#*|}
  on_tty stdin-tty "$tool"
  expect_rc 2 "$tool with no input on a terminal"
  OUT=$(tr -d '\r' <"$TMP/stdin-tty.tty")
  expect_out "${tool%% *}: no input given and stdin is a terminal; name $what (or '-' to read the terminal); try --help" \
    "$tool: one line instead of a silent wait"
  CASES=$((CASES + 1)); [ ! -e "$TMP/never.txt" ] || fail_case "$tool: the refused run created its output"
done
# Not a terminal: stdin is read as before.
run wiki-clean -q -o "$TMP/wiki3.txt" <"$DUMP"
expect_rc 0 "wiki-clean reading a redirected stdin"
expect_same "$TMP/wiki.txt" "$TMP/wiki3.txt" "the dump read from stdin"
finish
