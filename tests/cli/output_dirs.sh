#!/usr/bin/env bash
# Missing output directories are handled the same way by every tool: created, as `mkdir -p` would, and removed
# again when the run fails or is interrupted, so a failed run leaves the file system as it found it.
source "$(dirname "$0")/lib.sh"
DATA_HELPER=${TEST_TOOLS:?}/data_test_helper

printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the cat sat on a mat dog ran far away and then slept >"$TMP/vocab.txt"
for d in 1 2 3 4; do
  printf 'the cat sat on a mat and then slept.\nthe dog ran far away.\na cat and a dog sat on the mat.\n\n'
done >"$TMP/corpus.txt"
{
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<mediawiki>\n'
  printf '  <page>\n    <title>Cat</title>\n    <ns>0</ns>\n    <id>1</id>\n    <revision>\n      <id>2</id>\n'
  printf '      <text xml:space="preserve">The cat sat on the mat. It slept.</text>\n    </revision>\n  </page>\n'
  printf '</mediawiki>\n'
} >"$TMP/dump.xml"
# A record that tfrecord2hdf5 converts: L=8, P=2.
printf '%s' '[{"name":"input_ids","kind":"int64","values":[2,5,3,6,0,0,0,0]},{"name":"input_mask","kind":"int64","values":[1,1,1,1,0,0,0,0]},{"name":"segment_ids","kind":"int64","values":[0,0,1,1,0,0,0,0]},{"name":"masked_lm_positions","kind":"int64","values":[1,0]},{"name":"masked_lm_ids","kind":"int64","values":[7,0]},{"name":"masked_lm_weights","kind":"float","values":[1065353216,0]},{"name":"next_sentence_labels","kind":"int64","values":[0]}]' >"$TMP/record.jsonl"
echo >>"$TMP/record.jsonl"
"$DATA_HELPER" write-json "$TMP/record.jsonl" "$TMP/in.tfrecord" || fail_case "writing a TFRecord for the tests"
tfrecord2hdf5 -q -o "$TMP/in.hdf5" "$TMP/in.tfrecord" || fail_case "making an HDF5 input"

# made NAME PATH COMMAND...: COMMAND writes PATH under the missing directories $TMP/NAME/a/b; it succeeds and
# PATH exists.
made() {
  local name=$1 path=$2; shift 2
  run "$@"
  expect_rc 0 "$name into missing directories"
  CASES=$((CASES + 1)); [ -e "$path" ] || fail_case "$name: $path was not written"
}
O=$TMP/outputs  # not $TMP/out: run() keeps stdout there
made wiki-clean "$O/wiki/a/b/text.txt" wiki-clean -q -o "$O/wiki/a/b/text.txt" "$TMP/dump.xml"
made sent-seg "$O/seg/a/b/sentences.txt" sent-seg -q -o "$O/seg/a/b/sentences.txt" "$TMP/corpus.txt"
made shard "$O/shard/a/b/w.done" shard -q -n 2 -o "$O/shard/a/b/w" "$TMP/corpus.txt"
made "wordpiece train" "$O/wp/a/b/vocab.txt" wordpiece train -q --vocab-size 40 -o "$O/wp/a/b/vocab.txt" "$TMP/corpus.txt"
made "wordpiece encode" "$O/enc/a/b/tokens.txt" wordpiece encode -q --vocab "$TMP/vocab.txt" -o "$O/enc/a/b/tokens.txt" "$TMP/corpus.txt"
made "mkpretrain tfrecord" "$O/mk/a/b/x.tfrecord" mkpretrain -q --vocab "$TMP/vocab.txt" -o "$O/mk/a/b/x.tfrecord" "$TMP/corpus.txt"
made "mkpretrain hdf5" "$O/mkh/a/b/x.hdf5" mkpretrain -q --vocab "$TMP/vocab.txt" -o "$O/mkh/a/b/x.hdf5" "$TMP/corpus.txt"
made "tfrecord2hdf5 -o" "$O/t2h/a/b/x.hdf5" tfrecord2hdf5 -q -o "$O/t2h/a/b/x.hdf5" "$TMP/in.tfrecord"
made "tfrecord2hdf5 --output-dir" "$O/t2hd/a/b/in.hdf5" tfrecord2hdf5 -q --output-dir "$O/t2hd/a/b" "$TMP/in.tfrecord"
made bin4 "$O/bin4/a/b/bin4.json" bin4 -q -o "$O/bin4/a/b" "$TMP/in.hdf5"
made pack "$O/pack/a/b/x.hdf5" pack -q -o "$O/pack/a/b/x.hdf5" "$TMP/in.hdf5"
if [ -n "$FIXTURES" ] && [ -f "$FIXTURES/glue/MRPC/dev.tsv" ]; then
  made "bert-finetune features" "$O/ft/a/b/x.tfrecord" bert-finetune features -q --task mrpc \
    --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" -o "$O/ft/a/b/x.tfrecord" "$FIXTURES/glue/MRPC/dev.tsv"
fi
TINY_TF=${FIXTURES:-/nonexistent}/tf_checkpoint/keras-bert-tiny/bert_model.ckpt
if [ -x "$BIN/ckpt-convert" ] && [ -f "$TINY_TF.index" ]; then
  made "ckpt-convert --to native" "$O/ck/a/b/native/model.safetensors" ckpt-convert -q --to native -o "$O/ck/a/b/native" "$TINY_TF"
  made "ckpt-convert --to pt" "$O/ckpt/a/b/model.pt" ckpt-convert -q --to pt -o "$O/ckpt/a/b/model.pt" "$TINY_TF"
fi

# A run that fails after its output was opened removes the directories it created, and only those.
mkdir -p "$O/fail"
# gone NAME COMMAND...: COMMAND fails (exit 1) and $O/fail is empty again.
gone() {
  local name=$1; shift
  run "$@"
  expect_rc 1 "$name fails"
  OUT=$(ls -A "$O/fail"); expect_out "" "$name: the directories it created are removed"
}
head -c 200 "$TMP/dump.xml" >"$TMP/truncated.xml"
gone "wiki-clean (truncated dump)" wiki-clean -q -o "$O/fail/a/b/text.txt" "$TMP/truncated.xml"
printf 'good line\n\xff\xfe bad\n' >"$TMP/bad-utf8.txt"
gone "sent-seg (invalid UTF-8)" sent-seg -q -o "$O/fail/a/b/sentences.txt" "$TMP/bad-utf8.txt"
head -c 30 "$TMP/in.tfrecord" >"$TMP/truncated.tfrecord"
gone "tfrecord2hdf5 -o (truncated)" tfrecord2hdf5 -q -o "$O/fail/a/b/x.hdf5" "$TMP/truncated.tfrecord"
gone "tfrecord2hdf5 --output-dir (truncated)" tfrecord2hdf5 -q --output-dir "$O/fail/a/b" "$TMP/truncated.tfrecord"
gone "shard (missing input)" shard -q -n 2 -o "$O/fail/a/b/w" "$TMP/missing.txt"
if [ -x "$BIN/ckpt-convert" ]; then
  : >"$TMP/empty.index"
  gone "ckpt-convert (a damaged checkpoint)" ckpt-convert -q --to native --config "$SRC/tests/fixtures/tiny_bert_config.json" \
    -o "$O/fail/a/b/native" "$TMP/empty"
fi
# A directory that existed before stays.
mkdir "$O/fail/kept"
run wiki-clean -q -o "$O/fail/kept/text.txt" "$TMP/truncated.xml"
expect_rc 1 "wiki-clean into an existing directory fails"
OUT=$(ls -A "$O/fail"); expect_out "kept" "an existing directory is not removed"

# A file where a directory is needed: one line naming it.
: >"$O/file"
run mkpretrain -q --vocab "$TMP/vocab.txt" -o "$O/file/x.tfrecord" "$TMP/corpus.txt"
expect_rc 1 "a file in the way"
expect_err "^mkpretrain: error: $O/file: exists and is not a directory$" "a file in the way: message"
finish
