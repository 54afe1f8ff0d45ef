#!/usr/bin/env bash
# Hostile inputs and surroundings for the torch-free data tools (issue 13): each numbered section is one defect
# that once lost data or accepted bad input. Every case builds its own small inputs; no fixtures needed.
source "$(dirname "$0")/lib.sh"
DATA_HELPER=${TEST_TOOLS:?}/data_test_helper

# A tiny vocabulary and corpus: enough for mkpretrain to make a few short instances.
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the cat sat on a mat dog ran far away and then slept >"$TMP/vocab.txt"
for d in 1 2 3 4; do
  printf 'the cat sat on a mat and then slept.\nthe dog ran far away.\na cat and a dog sat on the mat.\n\n'
done >"$TMP/corpus.txt"

# pretraining_record IDS POSITIONS: one JSON line for data_test_helper write-json, L=8, P=2, four real tokens.
pretraining_record() {
  printf '[{"name":"input_ids","kind":"int64","values":[%s]},' "$1"
  printf '{"name":"input_mask","kind":"int64","values":[1,1,1,1,0,0,0,0]},'
  printf '{"name":"segment_ids","kind":"int64","values":[0,0,1,1,0,0,0,0]},'
  printf '{"name":"masked_lm_positions","kind":"int64","values":[%s]},' "$2"
  printf '{"name":"masked_lm_ids","kind":"int64","values":[7,0]},'
  printf '{"name":"masked_lm_weights","kind":"float","values":[1065353216,0]},'
  printf '{"name":"next_sentence_labels","kind":"int64","values":[0]}]\n'
}
GOOD_IDS='2,5,3,6,0,0,0,0'
pretraining_record "$GOOD_IDS" 1,0 >"$TMP/good.jsonl"
"$DATA_HELPER" write-json "$TMP/good.jsonl" "$TMP/good.tfrecord" || fail_case "writing a TFRecord for the tests"

# 4. SIGHUP (a closed terminal) is handled like SIGINT/SIGTERM: temporaries removed, exit 128 + 1.
# hangup_case NAME CMD...: runs CMD reading a FIFO that is kept open, waits for its temporary, sends SIGHUP.
hangup_case() {
  local name=$1; shift
  local dir="$TMP/hup-$name"
  mkdir "$dir"; mkfifo "$dir/in"
  (cd "$dir" && exec "$@" <"$dir/in" >"$dir/stdout" 2>"$dir/stderr") &
  local pid=$!
  exec 7>"$dir/in"
  cat "$INPUT" >&7
  local tries=0
  until ls "$dir" | grep -q '\.tmp\.' || [ $tries -ge 100 ]; do sleep 0.05; tries=$((tries + 1)); done
  CASES=$((CASES + 1))
  ls "$dir" | grep -q '\.tmp\.' || fail_case "$name: no temporary appeared before the signal"
  kill -HUP "$pid"
  wait "$pid"; RC=$?
  exec 7>&-
  ERR=$(cat "$dir/stderr")
  expect_rc 129 "$name on SIGHUP"
  expect_err "^$1: hangup$" "$name says why it stopped"
  OUT=$(ls "$dir" | grep '\.tmp\.' || true); expect_out "" "$name leaves no temporary after SIGHUP"
}
wiki_dump() {
  printf '<mediawiki>\n'
  for i in 1 2 3; do
    printf '<page><title>A%s</title><ns>0</ns><id>%s</id><revision><text>Some text %s.</text></revision></page>\n' "$i" "$i" "$i"
  done
}
wiki_dump >"$TMP/hup.xml"
INPUT="$TMP/hup.xml"; hangup_case wiki-clean wiki-clean -q -o out.txt -
INPUT="$TMP/corpus.txt"; hangup_case sent-seg sent-seg -q -o out.txt -
INPUT="$TMP/corpus.txt"; hangup_case shard shard -q -n 2 -o out -
INPUT="$TMP/corpus.txt"; hangup_case wordpiece wordpiece encode -q --vocab "$TMP/vocab.txt" -o out.txt -
INPUT="$TMP/good.tfrecord"; hangup_case tfrecord2hdf5 tfrecord2hdf5 -q -o out.hdf5 -
finish
