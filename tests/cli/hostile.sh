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

# 1. HDF5 outputs never replace a device, FIFO or '-': HDF5 needs a seekable regular file, so such an output is
# refused with one line, and the node is left as it was. Text outputs (bk::Output) write to a device in place.
mkdir "$TMP/dev"
if mknod "$TMP/dev/null" c 1 3 2>/dev/null; then
  run mkpretrain -q --vocab "$TMP/vocab.txt" --format hdf5 -o "$TMP/dev/null" "$TMP/corpus.txt"
  expect_rc 1 "mkpretrain hdf5 onto a device"
  expect_err "^mkpretrain: error: $TMP/dev/null: not a regular file .*HDF5 output needs a regular file$" "mkpretrain device refusal"
  CASES=$((CASES + 1)); [ -c "$TMP/dev/null" ] || fail_case "mkpretrain hdf5: $TMP/dev/null is no longer a character device"
  run tfrecord2hdf5 -q -o "$TMP/dev/null" "$TMP/good.tfrecord"
  expect_rc 1 "tfrecord2hdf5 onto a device"
  expect_err "^tfrecord2hdf5: error: $TMP/dev/null: not a regular file .*HDF5 output needs a regular file$" "tfrecord2hdf5 device refusal"
  run tfrecord2hdf5 -q -f -o "$TMP/dev/null" "$TMP/good.tfrecord"
  expect_rc 1 "tfrecord2hdf5 --force onto a device"
  CASES=$((CASES + 1)); [ -c "$TMP/dev/null" ] || fail_case "tfrecord2hdf5: $TMP/dev/null is no longer a character device"
  # A TFRecord (bk::Output) goes to the device in place.
  run mkpretrain -q --vocab "$TMP/vocab.txt" -o "$TMP/dev/null" "$TMP/corpus.txt"
  expect_rc 0 "mkpretrain tfrecord onto a device"
  CASES=$((CASES + 1)); [ -c "$TMP/dev/null" ] || fail_case "mkpretrain tfrecord: $TMP/dev/null is no longer a character device"
else
  echo "note: mknod not permitted here; the device cases use a FIFO only"
fi
mkfifo "$TMP/dev/fifo"
run tfrecord2hdf5 -q --output-dir "$TMP/dev" "$TMP/good.tfrecord"  # writes dev/good.hdf5: fine
expect_rc 0 "--output-dir beside a FIFO"
ln -s fifo "$TMP/dev/link.hdf5"
run tfrecord2hdf5 -q -o "$TMP/dev/link.hdf5" "$TMP/good.tfrecord"
expect_rc 1 "tfrecord2hdf5 onto a FIFO (through a link)"
expect_err "^tfrecord2hdf5: error: $TMP/dev/link.hdf5: not a regular file" "FIFO refusal"
CASES=$((CASES + 1)); [ -p "$TMP/dev/fifo" ] && [ -L "$TMP/dev/link.hdf5" ] || fail_case "the FIFO or its link was replaced"
expect_file_absent "$TMP/dev/link.hdf5.tmp" "no temporary beside the FIFO"
# '-' is refused as a usage error instead of creating a file named '-'.
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && run mkpretrain -q --vocab "$TMP/vocab.txt" --format hdf5 -o - "$TMP/corpus.txt"
 echo "$RC" >rc; printf '%s' "$ERR" >err)
RC=$(cat "$TMP/cwd/rc"); ERR=$(cat "$TMP/cwd/err"); rm "$TMP/cwd/rc" "$TMP/cwd/err"
expect_rc 2 "mkpretrain --format hdf5 -o -"
expect_err "^mkpretrain: -o -: HDF5 output cannot go to stdout .*; try --help$" "mkpretrain -o - message"
(cd "$TMP/cwd" && run tfrecord2hdf5 -q -o - "$TMP/good.tfrecord"; echo "$RC" >rc; printf '%s' "$ERR" >err)
RC=$(cat "$TMP/cwd/rc"); ERR=$(cat "$TMP/cwd/err"); rm "$TMP/cwd/rc" "$TMP/cwd/err"
expect_rc 2 "tfrecord2hdf5 -o -"
expect_err "^tfrecord2hdf5: -o -: HDF5 output cannot go to stdout .*; try --help$" "tfrecord2hdf5 -o - message"
tfrecord2hdf5 -q -o "$TMP/in.hdf5" "$TMP/good.tfrecord" || fail_case "making an HDF5 input"
(cd "$TMP/cwd" && run pack -q -o - "$TMP/in.hdf5"; echo "$RC" >rc; printf '%s' "$ERR" >err)
RC=$(cat "$TMP/cwd/rc"); ERR=$(cat "$TMP/cwd/err"); rm "$TMP/cwd/rc" "$TMP/cwd/err"
expect_rc 2 "pack -o -"
expect_err "^pack: -o -: HDF5 output cannot go to stdout \(it is written with seeks and needs a regular file\); give a name, e\.g\. -o [^ ]+\.hdf5; try --help$" "pack -o - message"
(cd "$TMP/cwd" && run bin4 -q -o - "$TMP/in.hdf5"; echo "$RC" >rc; printf '%s' "$ERR" >err)
RC=$(cat "$TMP/cwd/rc"); ERR=$(cat "$TMP/cwd/err"); rm "$TMP/cwd/rc" "$TMP/cwd/err"
expect_rc 2 "bin4 -o -"
expect_err "^bin4: -o -: the output cannot go to stdout \(it is a directory of HDF5 files\); give a name, e\.g\. -o [^ ]+; try --help$" "bin4 -o - message"
(cd "$TMP/cwd" && run tfrecord2hdf5 -q --output-dir - "$TMP/good.tfrecord"; echo "$RC" >rc; printf '%s' "$ERR" >err)
RC=$(cat "$TMP/cwd/rc"); ERR=$(cat "$TMP/cwd/err"); rm "$TMP/cwd/rc" "$TMP/cwd/err"
expect_rc 2 "tfrecord2hdf5 --output-dir -"
expect_err "^tfrecord2hdf5: --output-dir -: .*give a directory name; try --help$" "tfrecord2hdf5 --output-dir - message"
OUT=$(ls -A "$TMP/cwd"); expect_out "" "no file named '-' (or a temporary) was created"
# A TFRecord streams: mkpretrain --format tfrecord -o - writes to stdout, the same bytes as to a file, and a file
# named '-' in the working directory is neither checked for nor touched.
mkpretrain -q --vocab "$TMP/vocab.txt" -o "$TMP/stream.tfrecord" "$TMP/corpus.txt" || fail_case "mkpretrain to a file"
printf 'precious\n' >"$TMP/cwd/-"
(cd "$TMP/cwd" && mkpretrain -q --vocab "$TMP/vocab.txt" --format tfrecord -o - "$TMP/corpus.txt" >"$TMP/stdout.tfrecord"
 echo "$?" >"$TMP/rc")
RC=$(cat "$TMP/rc"); ERR=""
expect_rc 0 "mkpretrain --format tfrecord -o - beside a file named '-'"
expect_same "$TMP/stdout.tfrecord" "$TMP/stream.tfrecord" "mkpretrain -o - writes the file's bytes to stdout"
OUT=$(cat "$TMP/cwd/-"); expect_out "precious" "the file named '-' is untouched"
OUT=$(ls -A "$TMP/cwd"); expect_out "-" "and nothing else was created"
rm "$TMP/cwd/-"

# 2. tfrecord2hdf5: an int64 value that does not fit the int32 column is an error naming file, record and
# feature (a plain cast stored 2^40 as 0 and 2^32 + 3 as 3).
narrow_case() {  # narrow_case NAME IDS POSITIONS FEATURE VALUE
  { cat "$TMP/good.jsonl"; pretraining_record "$2" "$3"; } >"$TMP/$1.jsonl"
  "$DATA_HELPER" write-json "$TMP/$1.jsonl" "$TMP/$1.tfrecord"
  local at; at=$(stat -c %s "$TMP/good.tfrecord")
  run tfrecord2hdf5 -q -o "$TMP/$1.hdf5" "$TMP/$1.tfrecord"
  expect_rc 1 "$1"
  expect_err "^tfrecord2hdf5: error: $TMP/$1.tfrecord: record 1 at byte $at: $4: value $5 at index [0-9]+ does not fit the HDF5 column's int32$" "$1 message"
  expect_file_absent "$TMP/$1.hdf5" "$1 leaves no output"
}
narrow_case ids-2p40 2,1099511627776,3,6,0,0,0,0 1,0 input_ids 1099511627776
narrow_case ids-2p31 2,2147483748,3,6,0,0,0,0 1,0 input_ids 2147483748
narrow_case positions-2p32 "$GOOD_IDS" 4294967299,0 masked_lm_positions 4294967299
run tfrecord2hdf5 -q -o "$TMP/good.hdf5" "$TMP/good.tfrecord"
expect_rc 0 "the same record with values in range converts"

# 3. shard from stdin spools to a fresh temporary name: a user's PREFIX.stdin-spool is neither overwritten nor
# deleted, and no spool is left behind.
mkdir "$TMP/spool"
printf 'precious\n' >"$TMP/spool/corpus.stdin-spool"
run shard -q -n 2 -o "$TMP/spool/corpus" - <"$TMP/corpus.txt"
expect_rc 0 "shard from stdin"
OUT=$(cat "$TMP/spool/corpus.stdin-spool" 2>&1); expect_out "precious" "the user's PREFIX.stdin-spool is untouched"
OUT=$(cd "$TMP/spool" && ls); expect_out "corpus.done
corpus.stdin-spool
corpus_training-00000-of-00002.txt
corpus_training-00001-of-00002.txt" "only the shards, the marker and the user's file"

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

# 5. A negative count or size is a usage error (Boost alone wraps it to 2^64 - 1 for an unsigned option).
printf '<mediawiki>\n<page><title>A</title><ns>0</ns><id>1</id><revision><text>Short.</text></revision></page>\n</mediawiki>\n' >"$TMP/one.xml"
run wiki-clean --min-chars -1 -o "$TMP/neg.txt" "$TMP/one.xml"
expect_rc 2 "wiki-clean --min-chars -1"
expect_err "^wiki-clean: --min-chars must not be negative, got -1; try --help$" "--min-chars message"
expect_file_absent "$TMP/neg.txt" "no output after a usage error"
run wiki-clean --min-chars=-7 "$TMP/one.xml"
expect_rc 2 "wiki-clean --min-chars=-7"
run wordpiece train --vocab-size -5 -o "$TMP/neg.txt" "$TMP/corpus.txt"
expect_rc 2 "wordpiece train --vocab-size -5"
expect_err "^wordpiece: --vocab-size must not be negative, got -5; try --help$" "--vocab-size message"
run wordpiece train --min-frequency -1 -o "$TMP/neg.txt" "$TMP/corpus.txt"
expect_rc 2 "wordpiece train --min-frequency -1"
run wordpiece train --limit-alphabet -1 -o "$TMP/neg.txt" "$TMP/corpus.txt"
expect_rc 2 "wordpiece train --limit-alphabet -1"
run wiki-clean --min-chars 0 "$TMP/one.xml"
expect_rc 0 "--min-chars 0 still works"; expect_out "Short." "--min-chars 0 output"

# 6. wiki-clean after </mediawiki>: a second dump is read too; anything else is an error naming file and byte.
{ wiki_dump; printf '</mediawiki>\n'; } >"$TMP/a.xml"
cat "$TMP/a.xml" "$TMP/a.xml" >"$TMP/twice.xml"
run wiki-clean -q "$TMP/twice.xml"
expect_rc 0 "two concatenated dumps"
expect_out "Some text 1.

Some text 2.

Some text 3.

Some text 1.

Some text 2.

Some text 3." "both dumps' articles"
{ cat "$TMP/a.xml"; printf '<!-- end -->\n\n<?xml version="1.0"?>\n'; cat "$TMP/a.xml"; printf '  \n'; } >"$TMP/twice2.xml"
run wiki-clean -q "$TMP/twice2.xml"
expect_rc 0 "comments, a declaration and whitespace between dumps"
{ cat "$TMP/a.xml"; printf 'garbage\n'; } >"$TMP/garbage.xml"
size=$(stat -c %s "$TMP/a.xml")
run wiki-clean -q -o "$TMP/g.txt" "$TMP/garbage.xml"
expect_rc 1 "text after </mediawiki>"
expect_err "^wiki-clean: error: $TMP/garbage.xml: unexpected text after </mediawiki> at byte $size " "garbage named with its byte"
expect_file_absent "$TMP/g.txt" "no output after trailing garbage"
{ cat "$TMP/a.xml"; printf '<page><title>X</title></page>\n'; } >"$TMP/element.xml"
run wiki-clean -q -o "$TMP/g.txt" "$TMP/element.xml"
expect_rc 1 "an element after </mediawiki>"
expect_err "^wiki-clean: error: $TMP/element.xml: unexpected <page> at byte $size after </mediawiki>" "element named with its byte"
{ cat "$TMP/a.xml"; wiki_dump; } >"$TMP/cut-second.xml"
run wiki-clean -q -o "$TMP/g.txt" "$TMP/cut-second.xml"
expect_rc 1 "a truncated second dump"
expect_err "truncated dump" "a truncated second dump is reported"

# 7. bin4: a failed run removes the directories it created (so the same command can be run again), the number
# of open shard files is checked before anything is written, and no temporary is ever left.
run mkpretrain -q --vocab "$TMP/vocab.txt" --max-seq-length 16 --max-predictions 2 -o "$TMP/pre.hdf5" "$TMP/corpus.txt"
expect_rc 0 "an HDF5 input for bin4"
for attempt in first second; do
  run bin4 -q --bins 4 -o "$TMP/b4/out" "$TMP/pre.hdf5"
  expect_rc 1 "bin4 failing after it created its directories ($attempt run)"
  expect_err "^bin4: error: $TMP/pre.hdf5: row 0: [0-9]+ tokens, longer than the last bin \(4\)" "the failure itself ($attempt run)"
  CASES=$((CASES + 1)); [ ! -e "$TMP/b4" ] || fail_case "bin4 left $(find "$TMP/b4") after a failure ($attempt run)"
done
mkdir "$TMP/b4empty"
run bin4 -q --bins 4 -o "$TMP/b4empty" "$TMP/pre.hdf5"
expect_rc 1 "bin4 failing in an existing empty directory"
OUT=$(ls -A "$TMP/b4empty"); expect_out "" "the existing directory is kept, emptied of what the run made"
run bin4 -q --shards-per-bin 100 -o "$TMP/b4/out" "$TMP/pre.hdf5"
expect_rc 2 "more shard files than can be open at once"
expect_err "^bin4: --shards-per-bin: 4 bins x 100 shards = 400 files open at once, more than the [0-9]+ this run can have" "the cap named"
CASES=$((CASES + 1)); [ ! -e "$TMP/b4" ] || fail_case "bin4 created $TMP/b4 before refusing"
run bash -c 'ulimit -n 64 && exec bin4 -q --shards-per-bin 16 -o "$1" "$2"' _ "$TMP/b4/out" "$TMP/pre.hdf5"
expect_rc 2 "the cap follows ulimit -n"
expect_err "64 files open at once, more than the 48 this run can have" "the cap from ulimit -n"
CASES=$((CASES + 1)); [ ! -e "$TMP/b4" ] || fail_case "bin4 left $TMP/b4 after refusing"
run bin4 -q --shards-per-bin 2 -o "$TMP/b4/out" "$TMP/pre.hdf5"
expect_rc 0 "bin4 within the cap"
OUT=$(find "$TMP/b4" -name '*.tmp.*'); expect_out "" "no temporary left"

# 8. (issue 13, item 11) shard reads a named pipe or a process substitution <(...) as it reads stdin: copied to
# a fresh spool during the first pass, since neither can be read twice (a FIFO's second open waited forever for
# a writer; /dev/fd/N was empty the second time). `timeout` turns a hang into a failure.
mkdir "$TMP/fifo-shard"
run shard -q -n 2 -o "$TMP/fifo-shard/ref" "$TMP/corpus.txt"
expect_rc 0 "shard from a regular file"
mkfifo "$TMP/fifo-shard/in"
cat "$TMP/corpus.txt" >"$TMP/fifo-shard/in" &
writer=$!
run timeout 20 shard -q -n 2 -o "$TMP/fifo-shard/fifo" "$TMP/fifo-shard/in"
expect_rc 0 "shard from a FIFO (124: it hung)"
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
run timeout 20 shard -q -n 2 -o "$TMP/fifo-shard/psub" <(cat "$TMP/corpus.txt")
expect_rc 0 "shard from <(...) (124: it hung)"
for n in 0 1; do
  for kind in fifo psub; do
    expect_same "$TMP/fifo-shard/ref_training-0000$n-of-00002.txt" "$TMP/fifo-shard/${kind}_training-0000$n-of-00002.txt" \
      "$kind: shard $n as from the file"
  done
done
OUT=$(ls "$TMP/fifo-shard" | grep -c '\.tmp\.'); expect_out "0" "no spool left behind"

# 9. (issue 13, item 13) Corruption inside a compressed input is reported as such, naming the file and the
# compressed offset, even when its garbage reaches a reader first (gzip checks its CRC only at the end of a
# member, so a flipped bit used to surface as "invalid UTF-8"). A UTF-16 dump with an odd trailing byte is an
# error naming the file.
# 3 MB of pages, so the readers see the damaged bytes long before the decoder reaches the member's CRC.
{ wiki_dump; seq 1 30000 | sed 's|.*|<page><title>B&</title><ns>0</ns><id>1&</id><revision><text>Filler &.</text></revision></page>|'
  printf '</mediawiki>\n'; } >"$TMP/long.xml"
# Stored (level 0) deflate blocks: the flip changes exactly one byte, 5% into the data, which only the CRC notices.
flip_gzip() {
  python3 -c 'import gzip,sys
data = bytearray(gzip.compress(open(sys.argv[1], "rb").read(), compresslevel=0))
data[len(data) // 20] ^= 0x80
open(sys.argv[2], "wb").write(bytes(data))' "$1" "$2"
}
flip_gzip "$TMP/long.xml" "$TMP/flipped.xml.gz"
run wiki-clean -q -o "$TMP/flipped.txt" "$TMP/flipped.xml.gz"
expect_rc 1 "wiki-clean on a gzip with a flipped bit"
expect_err "^wiki-clean: error: $TMP/flipped.xml.gz: corrupt gzip data near byte [0-9]+: incorrect data check" "the corruption named, with file and offset"
CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "wiki-clean corrupt gzip: not one line: $ERR"
expect_file_absent "$TMP/flipped.txt" "no output from a corrupt gzip"
for d in $(seq 1 10000); do cat "$TMP/corpus.txt"; done >"$TMP/corpus-big.txt"
flip_gzip "$TMP/corpus-big.txt" "$TMP/corpus-flipped.gz"
run sent-seg -q "$TMP/corpus-flipped.gz"
expect_rc 1 "sent-seg on a gzip with a flipped bit"
expect_err "^sent-seg: error: $TMP/corpus-flipped.gz: corrupt gzip data near byte [0-9]+: incorrect data check" "sent-seg names the corruption"
python3 -c 'import sys; sys.stdout.buffer.write(open(sys.argv[1], encoding="utf-8").read().encode("utf-16") + b"\n")' \
  "$TMP/a.xml" >"$TMP/odd16.xml"
run wiki-clean -q -o "$TMP/odd16.txt" "$TMP/odd16.xml"
expect_rc 1 "a UTF-16 dump with an odd trailing byte"
expect_err "^wiki-clean: error: $TMP/odd16.xml: invalid UTF-16 at byte [0-9]+: input ends in the middle of a character$" "the odd byte named with the file"
expect_file_absent "$TMP/odd16.txt" "no output from an odd-length UTF-16 dump"

# 10. (issue 13, item 15) An HDF5 write that fails (here: past a file-size limit, EFBIG) is one line, without
# HDF5's own error-stack dump, and leaves no temporary. The tools ignore SIGXFSZ so the write fails cleanly.
mkdir "$TMP/efbig"
for i in $(seq 1 40); do cat "$TMP/corpus.txt"; done >"$TMP/corpus40.txt"
efbig_case() {  # efbig_case NAME OUTPUT CMD...
  local name=$1 output=$2; shift 2
  run bash -c 'ulimit -f 8 && exec "$@"' _ "$@"
  expect_rc 1 "$name past the file-size limit"
  CASES=$((CASES + 1))
  [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && ! printf '%s' "$ERR" | grep -q 'HDF5-DIAG' ||
    fail_case "$name: not one line of error: $(printf '%s' "$ERR" | head -c 600)"
  expect_err "^$name: error: .*$output" "$name names the output"
  OUT=$(find "$TMP/efbig" -name '*.tmp.*'); expect_out "" "$name leaves no temporary"
}
efbig_case mkpretrain big.hdf5 mkpretrain -q --vocab "$TMP/vocab.txt" --dupe-factor 20 --format hdf5 -o "$TMP/efbig/big.hdf5" "$TMP/corpus40.txt"
run mkpretrain -q --vocab "$TMP/vocab.txt" --dupe-factor 20 --max-seq-length 16 --max-predictions 2 -o "$TMP/big.tfrecord" "$TMP/corpus40.txt"
expect_rc 0 "a larger TFRecord"
run mkpretrain -q --vocab "$TMP/vocab.txt" --dupe-factor 20 --max-seq-length 16 --max-predictions 2 --format hdf5 -o "$TMP/big.hdf5" "$TMP/corpus40.txt"
expect_rc 0 "a larger HDF5"
efbig_case tfrecord2hdf5 big.hdf5 tfrecord2hdf5 -q -o "$TMP/efbig/big.hdf5" "$TMP/big.tfrecord"
efbig_case bin4 "$TMP/efbig/b4" bin4 -q --bins 8,16 --shards-per-bin 1 -o "$TMP/efbig/b4" "$TMP/big.hdf5"

# 11. (issue 13, item 16) Untrusted text in an error message is escaped and cut: a feature name of newlines and
# terminal escapes, a 5 MB token. The message stays one short line.
python3 -c 'import json
name = "bad\n" * 50000 + "\x1b[2J"
print(json.dumps([{"name": name, "kind": "bytes", "values": []}]))' >"$TMP/binname.jsonl"
"$DATA_HELPER" write-json "$TMP/binname.jsonl" "$TMP/binname.tfrecord"
run tfrecord2hdf5 -q --layout generic -o "$TMP/binname.hdf5" "$TMP/binname.tfrecord"
expect_rc 1 "a bytes feature with a binary name"
expect_err "^tfrecord2hdf5: error: $TMP/binname.tfrecord: record 0 at byte 0: feature bad\\\\nbad\\\\n.*\.\.\. \(200004 bytes\) is not an int64 or float list" "the name escaped and cut"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && [ "${#ERR}" -lt 400 ] && ! printf '%s' "$ERR" | grep -q $'\x1b' ||
  fail_case "binary feature name: not one short escaped line (${#ERR} bytes)"
{ printf '2 3 \x1b]0;pwned\x07\n'; head -c 5000000 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$TMP/badids.txt"
run wordpiece decode --vocab "$TMP/vocab.txt" "$TMP/badids.txt"
expect_rc 1 "wordpiece decode of a token with terminal escapes"
expect_err "^wordpiece: error: $TMP/badids.txt: line 1, column 5: '\\\\x1b\]0;pwned\\\\x07' is not a token id$" "the escapes shown escaped"
printf '5\n%s\n' "$(head -c 5000000 /dev/zero | tr '\0' 'x')" >"$TMP/longid.txt"
run wordpiece decode --vocab "$TMP/vocab.txt" "$TMP/longid.txt"
expect_rc 1 "wordpiece decode of a 5 MB token"
expect_err "^wordpiece: error: $TMP/longid.txt: line 2, column 1: 'x+\.\.\. \(5000000 bytes\)' is not a token id$" "the token cut"
CASES=$((CASES + 1)); [ "${#ERR}" -lt 400 ] || fail_case "5 MB token: a ${#ERR}-byte message"

# 12. (issue 13, item 17) tfrecord2hdf5 names the file and the record for a record without the features or
# with them of the wrong kind.
printf '[]\n' >"$TMP/empty-record.jsonl"
{ cat "$TMP/good.jsonl" "$TMP/empty-record.jsonl"; } >"$TMP/then-empty.jsonl"
"$DATA_HELPER" write-json "$TMP/then-empty.jsonl" "$TMP/then-empty.tfrecord"
at=$(stat -c %s "$TMP/good.tfrecord")
run tfrecord2hdf5 -q -o "$TMP/then-empty.hdf5" "$TMP/then-empty.tfrecord"
expect_rc 1 "an empty record after a good one"
expect_err "^tfrecord2hdf5: error: $TMP/then-empty.tfrecord: record 1 at byte $at: no feature 'input_ids' \(the record has no features\)$" "the empty record named"
expect_file_absent "$TMP/then-empty.hdf5" "no output after an empty record"
"$DATA_HELPER" write-json "$TMP/empty-record.jsonl" "$TMP/empty.tfrecord"
run tfrecord2hdf5 -q -o "$TMP/empty.hdf5" "$TMP/empty.tfrecord"
expect_rc 1 "an empty first record"
expect_err "^tfrecord2hdf5: error: $TMP/empty.tfrecord: record 0 at byte 0: " "the empty first record named"
sed 's/{"name":"input_ids","kind":"int64","values":\[\([0-9,]*\)\]}/{"name":"input_ids","kind":"float","values":[\1]}/' \
  "$TMP/good.jsonl" >"$TMP/float-ids.jsonl"
"$DATA_HELPER" write-json "$TMP/float-ids.jsonl" "$TMP/float-ids.tfrecord"
run tfrecord2hdf5 -q -o "$TMP/float-ids.hdf5" "$TMP/float-ids.tfrecord"
expect_rc 1 "float-typed input_ids"
expect_err "^tfrecord2hdf5: error: $TMP/float-ids.tfrecord: record 0 at byte 0: feature 'input_ids' is a float list, expected int64$" "float ids named with file and record"
{ cat "$TMP/good.jsonl" "$TMP/float-ids.jsonl"; } >"$TMP/then-float.jsonl"
"$DATA_HELPER" write-json "$TMP/then-float.jsonl" "$TMP/then-float.tfrecord"
run tfrecord2hdf5 -q --max-seq-length 8 --max-predictions 2 -o "$TMP/then-float.hdf5" "$TMP/then-float.tfrecord"
expect_rc 1 "float-typed input_ids in record 1"
expect_err "^tfrecord2hdf5: error: $TMP/then-float.tfrecord: record 1 at byte $at: feature 'input_ids' is a float list, expected int64$" "record 1 named"

# 13. (issue 13, item 19) wiki-clean fails at once on bytes XML forbids (a run of NULs used to be buffered
# whole: /dev/zero took all memory), and a node longer than --max-node-bytes fails naming the limit.
run bash -c 'head -c 50000000 /dev/zero | /usr/bin/time -f "%M" -o "$1" timeout 20 wiki-clean -q' _ "$TMP/rss"
expect_rc 1 "50 MB of NUL bytes"
expect_err "^wiki-clean: error: <stdin>: byte 0 is NUL, a control character XML does not allow" "the NUL named with its byte"
CASES=$((CASES + 1)); rss=$(tail -n 1 "$TMP/rss"); [ "$rss" -lt 40000 ] || fail_case "50 MB of NULs took $rss KB"
{ printf '<mediawiki>\n<page><title>A</title><ns>0</ns><id>1</id><revision><text>Fine.\x01</text></revision></page>\n</mediawiki>\n'; } >"$TMP/ctl.xml"
run wiki-clean -q "$TMP/ctl.xml"
expect_rc 1 "a control byte in a text node"
expect_err "^wiki-clean: error: $TMP/ctl.xml: byte 75 is 0x01, a control character XML does not allow" "the control byte named"
{ printf '<mediawiki>\n<page><title>A</title><ns>0</ns><id>1</id><revision><text>'
  head -c 3000000 /dev/zero | tr '\0' 'y'; printf '</text></revision></page>\n</mediawiki>\n'; } >"$TMP/bignode.xml"
run wiki-clean -q --max-node-bytes 1000000 -o "$TMP/bignode.txt" "$TMP/bignode.xml"
expect_rc 1 "a node longer than --max-node-bytes"
expect_err "^wiki-clean: error: $TMP/bignode.xml: a node at byte [0-9]+ is longer than --max-node-bytes 1000000" "the limit named"
expect_file_absent "$TMP/bignode.txt" "no output after an over-long node"
run wiki-clean -q --max-node-bytes 4000000 "$TMP/bignode.xml"
expect_rc 0 "the same node within the limit"
run wiki-clean --max-node-bytes 0 "$TMP/bignode.xml"
expect_rc 2 "--max-node-bytes 0"

# 14. (issue 13, item 20) tfrecord2hdf5 checks a row width inferred from the first record before it allocates a
# chunk of rows that wide (a 4 MB record took 2.5 GB).
python3 -c 'import json
n = 70000
print(json.dumps([{"name": "input_ids", "kind": "int64", "values": [5] * n},
                  {"name": "input_mask", "kind": "int64", "values": [1] * n},
                  {"name": "segment_ids", "kind": "int64", "values": [0] * n},
                  {"name": "masked_lm_positions", "kind": "int64", "values": [1]},
                  {"name": "masked_lm_ids", "kind": "int64", "values": [5]},
                  {"name": "next_sentence_labels", "kind": "int64", "values": [0]}]))' >"$TMP/wide.jsonl"
"$DATA_HELPER" write-json "$TMP/wide.jsonl" "$TMP/wide.tfrecord"
run /usr/bin/time -f "%M" -o "$TMP/rss" tfrecord2hdf5 -q -o "$TMP/wide.hdf5" "$TMP/wide.tfrecord"
expect_rc 1 "a 70000-token first record"
expect_err "^tfrecord2hdf5: error: $TMP/wide.tfrecord: record 0 at byte 0: input_ids has 70000 values, more than the 65536 .*; give --max-seq-length" "the width refused before allocating"
CASES=$((CASES + 1)); rss=$(tail -n 1 "$TMP/rss"); [ "$rss" -lt 60000 ] || fail_case "a 70000-token record took $rss KB"
expect_file_absent "$TMP/wide.hdf5" "no output for a too-wide record"

# 15. (issue 13, item 21) Outputs are synced to disk before their rename and the directory after it, so a power
# cut cannot leave a marker over lost data. Checked with strace where it is installed.
if command -v strace >/dev/null; then
  mkdir "$TMP/sync"
  run strace -f -e trace=fsync,fdatasync,rename -o "$TMP/strace.log" shard -q -n 2 -o "$TMP/sync/s" "$TMP/corpus.txt"
  expect_rc 0 "shard under strace"
  # Per output (2 shards + s.done), into the staging directory: fsync(file), rename, fsync(directory); then the
  # shards renamed into place and their directory synced before the marker's rename, and it after.
  OUT=$(grep -oE '^[0-9]+ +(fsync|fdatasync|rename)' "$TMP/strace.log" | awk '{print $2}' | tr '\n' ' ')
  expect_out "fsync rename fsync fsync rename fsync fsync rename fsync rename rename fsync rename fsync " \
    "shard: fsync before and after each rename"
  run strace -f -e trace=fsync,fdatasync,rename -o "$TMP/strace.log" tfrecord2hdf5 -q -o "$TMP/sync/g.hdf5" "$TMP/good.tfrecord"
  expect_rc 0 "tfrecord2hdf5 under strace"
  OUT=$(grep -oE '^[0-9]+ +(fsync|fdatasync|rename)' "$TMP/strace.log" | awk '{print $2}' | tr '\n' ' ')
  expect_out "fsync rename fsync " "the HDF5 temporary too"
  # bin4 builds its output under a hidden name (S/b/.out.partial-PID) and renames it into place: before that
  # rename every file and directory in it is synced, and so is the entry of the directory the run made (b, in S);
  # after it, the directory it was renamed into. (The order within the hidden directory follows readdir.)
  run strace -f -y -e trace=fsync,fdatasync,rename -o "$TMP/strace.log" bin4 -q --bins 16,32 --shards-per-bin 1 \
    -o "$TMP/sync/b/out" "$TMP/pre.hdf5"
  expect_rc 0 "bin4 under strace"
  OUT=$(grep -oE '^[0-9]+ +(fsync\([0-9]+<[^>]*>|rename)' "$TMP/strace.log" | sed -E "s/^[0-9]+ +//; s/\([0-9]+</ /; s/>$//; s|$TMP/sync|S|; s/\.tmp\..*/.tmp/; s/partial-[0-9]+/partial-N/" | tr '\n' ' ')
  CASES=$((CASES + 1))
  [[ "$OUT" == *" fsync S/b/.out.partial-N fsync S rename fsync S/b " ]] || fail_case "bin4: the last syncs and the rename: $OUT"
  before_rename=${OUT% rename fsync S/b }
  for synced in 16/part-00000-of-00001.hdf5 32/part-00000-of-00001.hdf5 bin4.json 16 32; do
    CASES=$((CASES + 1))
    [[ "$before_rename" == *"fsync S/b/.out.partial-N/$synced "* ]] || fail_case "bin4: $synced not synced before the output's rename: $OUT"
  done
  # pack's one output goes through the same HDF5 temporary.
  run strace -f -y -e trace=fsync,fdatasync,rename -o "$TMP/strace.log" pack -q -o "$TMP/sync/packed.hdf5" "$TMP/pre.hdf5"
  expect_rc 0 "pack under strace"
  OUT=$(grep -oE '^[0-9]+ +(fsync\([0-9]+<[^>]*>|rename)' "$TMP/strace.log" | sed -E "s/^[0-9]+ +//; s/\([0-9]+</ /; s/>$//; s|$TMP/sync|S|; s/\.tmp\..*/.tmp/" | tr '\n' ' ')
  expect_out "fsync S/packed.hdf5.tmp rename fsync S " "pack: fsync before and after its rename"
else
  echo "note: strace not installed; the fsync cases are skipped"
fi

# 16. (issue 28, item 6) An output is never one of the run's inputs, however named (the same path, a symbolic or a
# hard link): -o INPUT -f used to read the input while the output's rename replaced it. One usage line, exit 2, the
# input untouched.
mkdir "$TMP/same"
cp "$TMP/corpus.txt" "$TMP/same/corpus.txt"
cp "$TMP/vocab.txt" "$TMP/same/vocab.txt"
ln -s corpus.txt "$TMP/same/link.txt"
ln "$TMP/same/corpus.txt" "$TMP/same/hard.txt"
tfrecord2hdf5 -q -o "$TMP/same/in.hdf5" "$TMP/good.tfrecord" || fail_case "making an HDF5 input"
cp "$TMP/good.tfrecord" "$TMP/same/good.tfrecord"
printf '%s\n' '<mediawiki>' '</mediawiki>' >"$TMP/same/dump.xml"
(cd "$TMP/same" && md5sum corpus.txt vocab.txt in.hdf5 good.tfrecord dump.xml) >"$TMP/same.md5"
same_input() {  # same_input NAME FLAG OUTPUT INPUT CMD...: refused naming OUTPUT and INPUT, nothing changed
  local name=$1 flag=$2 output=$3 input=$4; shift 4
  run "$@"
  expect_rc 2 "$name: an output that is an input"
  expect_err "^${1}: $flag $output: is the input $input; write the output elsewhere; try --help$" "$name: the refusal"
  CASES=$((CASES + 1)); (cd "$TMP/same" && md5sum -c --quiet "$TMP/same.md5") || fail_case "$name: an input changed"
}
S=$TMP/same
same_input sent-seg -o "$S/corpus.txt" "$S/corpus.txt" sent-seg -q -f -o "$S/corpus.txt" "$S/corpus.txt"
same_input "sent-seg (symbolic link)" -o "$S/link.txt" "$S/corpus.txt" sent-seg -q -f -o "$S/link.txt" "$S/corpus.txt"
same_input "sent-seg (hard link)" -o "$S/hard.txt" "$S/corpus.txt" sent-seg -q -f -o "$S/hard.txt" "$S/corpus.txt"
same_input wiki-clean -o "$S/dump.xml" "$S/dump.xml" wiki-clean -q -f -o "$S/dump.xml" "$S/dump.xml"
same_input "wordpiece encode" -o "$S/corpus.txt" "$S/corpus.txt" wordpiece encode -q -f --vocab "$S/vocab.txt" -o "$S/corpus.txt" "$S/corpus.txt"
same_input "wordpiece encode (--vocab as the output)" -o "$S/vocab.txt" "$S/vocab.txt" wordpiece encode -q -f --vocab "$S/vocab.txt" -o "$S/vocab.txt" "$S/corpus.txt"
same_input "wordpiece decode" -o "$S/vocab.txt" "$S/vocab.txt" wordpiece decode -q -f --vocab "$S/vocab.txt" -o "$S/vocab.txt" "$S/corpus.txt"
same_input "wordpiece train" -o "$S/corpus.txt" "$S/corpus.txt" wordpiece train -q -f --vocab-size 50 -o "$S/corpus.txt" "$S/corpus.txt"
same_input mkpretrain -o "$S/corpus.txt" "$S/corpus.txt" mkpretrain -q -f --vocab "$S/vocab.txt" -o "$S/corpus.txt" "$S/corpus.txt"
same_input "mkpretrain (--vocab as the output)" -o "$S/vocab.txt" "$S/vocab.txt" mkpretrain -q -f --vocab "$S/vocab.txt" -o "$S/vocab.txt" "$S/corpus.txt"
same_input tfrecord2hdf5 -o "$S/good.tfrecord" "$S/good.tfrecord" tfrecord2hdf5 -q -f -o "$S/good.tfrecord" "$S/good.tfrecord"
same_input pack -o "$S/in.hdf5" "$S/in.hdf5" pack -q -f -o "$S/in.hdf5" "$S/in.hdf5"
run bin4 -q -f -o "$S" "$S/in.hdf5"
expect_rc 2 "bin4: an output directory that holds an input"
expect_err "^bin4: -o $S: holds the input $S/in.hdf5, which the output would replace; write the output elsewhere; try --help$" "bin4: the refusal"
same_input "bert-finetune features" -o "$S/vocab.txt" "$S/vocab.txt" bert-finetune features -q -f --task cola --vocab "$S/vocab.txt" -o "$S/vocab.txt" "$S/corpus.txt"
mkdir "$S/out"; ln -s ../good.tfrecord "$S/out/good.hdf5"
run tfrecord2hdf5 -q -f --output-dir "$S/out" "$S/good.tfrecord"
expect_rc 2 "tfrecord2hdf5 --output-dir writing over its input (through a link)"
expect_err "^tfrecord2hdf5: --output-dir $S/out/good.hdf5: is the input $S/good.tfrecord" "--output-dir: the refusal"
CASES=$((CASES + 1)); (cd "$S" && md5sum -c --quiet "$TMP/same.md5") || fail_case "tfrecord2hdf5 --output-dir replaced its input"
run shard -q -f -n 1 -o "$S/corpus" "$S/corpus.txt"
expect_rc 0 "shard beside its input"
run shard -q -f -n 1 -o "$S/corpus" "$S/corpus_training-00000-of-00001.txt"
expect_rc 2 "shard writing a shard over its input"
expect_err "^shard: -o $S/corpus_training-00000-of-00001.txt: is the input" "shard: the refusal"

# 17. (issue 28, item 10) A failed or interrupted shard run leaves nothing: no complete shard, no marker, no
# directory it made, so the same command simply runs again. The second shard (with the large document for this
# seed) passes a file-size limit after the first is complete.
python3 -c 'import sys
sys.stdout.write(" ".join(["big"] * 20000) + ".\n\n" + "".join("small doc %d here.\n\n" % i for i in range(20)))' >"$TMP/uneven.txt"
run bash -c 'ulimit -f 40 && exec shard -q -n 2 --seed 1 --max-open-files 1 -o "$1" "$2"' _ "$TMP/uneven/out/s" "$TMP/uneven.txt"
expect_rc 1 "shard past a file-size limit in its second pass"
CASES=$((CASES + 1)); [ ! -e "$TMP/uneven" ] || fail_case "shard left $(find "$TMP/uneven") after failing"
run shard -q -n 2 --seed 1 --max-open-files 1 -o "$TMP/uneven/out/s" "$TMP/uneven.txt"
expect_rc 0 "the same command, run again"
mkdir "$TMP/int"; mkfifo "$TMP/int/in"
(exec shard -q -n 2 --max-open-files 1 -o "$TMP/int/out/s" - <"$TMP/int/in" >/dev/null 2>"$TMP/int/err") &
pid=$!
exec 7>"$TMP/int/in"
cat "$TMP/uneven.txt" >&7
tries=0
until [ -n "$(find "$TMP/int/out" -name '*.tmp.*' 2>/dev/null)" ] || [ $tries -ge 100 ]; do sleep 0.05; tries=$((tries + 1)); done
kill -INT "$pid"; wait "$pid"; RC=$?
exec 7>&-
expect_rc 130 "shard interrupted"
CASES=$((CASES + 1)); [ ! -e "$TMP/int/out" ] || fail_case "an interrupted shard left $(find "$TMP/int/out")"

# 18. (issue 28, item 11) --threads is bounded (kThreadsPerCore x the cores): --threads 100000 once started 32,444
# threads and hung. A thread that cannot be started (here: 1 GB stacks under a 2.5 GB address-space limit) is one
# line, exit 1, and nothing left; no tool hangs on the threads it did start.
run timeout 60 sent-seg -q -t 100000 -o "$TMP/threads.txt" "$TMP/corpus.txt"
expect_rc 0 "sent-seg --threads 100000"
if command -v strace >/dev/null; then
  timeout 60 strace -f -e trace=clone,clone3 -o "$TMP/clone.log" mkpretrain -q -t 100000 --vocab "$TMP/vocab.txt" -o "$TMP/threads.tfrecord" "$TMP/corpus.txt"
  CASES=$((CASES + 1)); started=$(grep -cE 'clone3?\(' "$TMP/clone.log")
  # Its two parallel stages run one after the other, each with a pool of at most 4 threads per core.
  [ "$started" -le $((2 * 4 * $(nproc) + 4)) ] || fail_case "mkpretrain -t 100000 started $started threads on $(nproc) cores"
fi
threads_case() {  # threads_case NAME CMD...
  local name=$1; shift
  run bash -c 'ulimit -s 1000000 && ulimit -v 2500000 && exec timeout 60 "$@"' _ "$@"
  expect_rc 1 "$name: threads that cannot be started"
  expect_err "^${1}: error: cannot start [a-z0-9 ]+ thread [0-9]+ of [0-9]+: .*; try a lower --threads$" "$name: one line"
}
threads_case sent-seg sent-seg -q -t 8 -o "$TMP/t.txt" "$TMP/corpus.txt"
threads_case wiki-clean wiki-clean -q -t 8 -o "$TMP/t.txt" "$TMP/one.xml"
threads_case "wordpiece encode" wordpiece encode -q -t 8 --vocab "$TMP/vocab.txt" -o "$TMP/t.txt" "$TMP/corpus.txt"
threads_case mkpretrain mkpretrain -q -t 8 --vocab "$TMP/vocab.txt" -o "$TMP/t.tfrecord" "$TMP/corpus.txt"
threads_case bin4 bin4 -q -t 8 -o "$TMP/tb4" "$TMP/pre.hdf5"
bzip2 -k -c "$TMP/corpus.txt" >"$TMP/corpus.txt.bz2"
threads_case "sent-seg of a .bz2" sent-seg -q -t 8 -o "$TMP/t.txt" "$TMP/corpus.txt.bz2"
OUT=$(ls "$TMP" | grep -E '^(t\.|tb4)' || true); expect_out "" "nothing left by the runs whose threads failed"

# 19. (issue 28, item 13) wiki-clean's --max-node-bytes bounds memory as its man page says: a text node past the
# limit fails once the limit is reached, without holding the node twice (peak RSS was 2-3x the limit).
python3 -c 'import sys
sys.stdout.write("<mediawiki><page><title>T</title><ns>0</ns><id>1</id><revision><text>" + "abcdefghijklmn" * 4000000 + "</text></revision></page></mediawiki>")' >"$TMP/bignode2.xml"
run /usr/bin/time -f "%M" -o "$TMP/rss" wiki-clean -q --max-node-bytes 32000000 "$TMP/bignode2.xml"
expect_rc 1 "a 56 MB text node over a 32 MB limit"
expect_err "longer than --max-node-bytes 32000000" "the limit named"
CASES=$((CASES + 1)); rss=$(tail -n 1 "$TMP/rss"); [ "$rss" -lt 50000 ] || fail_case "a 32 MB limit let wiki-clean reach $rss KB"

# 20. (issue 28, item 14) One line whatever the input: a file name with a newline or an escape sequence is
# escaped, and an output name of 250 bytes still gets its temporary (the suffix used to pass NAME_MAX).
cp "$TMP/corpus.txt" "$TMP/name"$'\n'"with"$'\x1b'"[2J.txt"
run mkpretrain -q --vocab "$TMP/missing-vocab.txt" -o "$TMP/x.tfrecord" "$TMP/name"$'\n'"with"$'\x1b'"[2J.txt"
expect_rc 1 "a missing vocabulary"
CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail_case "the error is not one line: $ERR"
long=$(printf 'n%.0s' $(seq 246)).txt
run sent-seg -q -o "$TMP/$long" "$TMP/corpus.txt"
expect_rc 0 "an output named with 250 bytes"
CASES=$((CASES + 1)); [ -s "$TMP/$long" ] || fail_case "no output of 250 bytes' name"
run sent-seg -q -o "$TMP/nl"$'\n'"x"$'\x1b'"[2J/$(printf 'n%.0s' $(seq 300))" "$TMP/corpus.txt"
expect_rc 1 "an output name past NAME_MAX"
CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && ! printf '%s' "$ERR" | grep -q $'\x1b' ||
  fail_case "a name with a newline and an escape is not escaped: $ERR"

# 21. Review of issue 28's changes: a reference split by a read is decoded whole (wiki-clean takes text as it reads
# it and holds back only what may start a reference); a shard name that is a directory is refused, not replaced.
python3 -c 'import sys
pages = "".join("<page><title>P%d</title><ns>0</ns><id>%d</id><revision><text>%s&#x41; tail</text></revision></page>"
                % (pad, pad + 1, "a" * (1048576 - 200 - pad)) for pad in range(16))
sys.stdout.write("<mediawiki>" + pages + "</mediawiki>")' >"$TMP/split.xml"
run wiki-clean -q "$TMP/split.xml"
expect_rc 0 "references across read boundaries"
CASES=$((CASES + 1)); [ "$(printf '%s\n' "$OUT" | grep -c 'aA tail$')" -eq 16 ] || fail_case "a reference split by a read was not decoded"
mkdir -p "$TMP/shdir/out/s_training-00000-of-00001.txt/keep"
echo keep >"$TMP/shdir/out/s_training-00000-of-00001.txt/keep/me"
run shard -q -n 1 -o "$TMP/shdir/out/s" "$TMP/corpus.txt"
expect_rc 1 "a shard name that is a directory"
expect_err "s_training-00000-of-00001.txt: is a directory" "the directory named"
CASES=$((CASES + 1)); [ -f "$TMP/shdir/out/s_training-00000-of-00001.txt/keep/me" ] || fail_case "the directory was removed"
# 22. (issue 38) What a killed or raced commit leaves, stamps and leftovers. The commit windows are held open with
# strace's syscall delays, as the hostile run found them.
# wait_for TEST...: polls a condition for up to 20 s.
wait_for() { for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done; return 1; }
# strace_windows: strace can trace here, on x86_64 (whose glibc renames with rename(2), renameat2 only for the swap).
strace_windows() { [ "$(uname -m)" = x86_64 ] && command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; }
# Item 4: shard -f killed during its renames leaves no marker over a mix of old and new shards (the old marker goes
# aside before anything moves), and the next run removes the staging folder it left.
if strace_windows; then
  mkdir "$TMP/mix"
  shard -q -n 3 --seed 1 -o "$TMP/mix/s" "$TMP/corpus.txt"
  # Renames 1-4 put each staged file's own temporary in place (three shards, the marker); the commit's begin at 5.
  strace -f -o "$TMP/mix.strace" -e trace=rename -e inject=rename:delay_enter=8000000:when=6 \
    shard -q -f -n 3 --seed 2 -o "$TMP/mix/s" "$TMP/corpus.txt" &
  tracer=$!
  wait_for sh -c '[ "$(grep -c "rename(.*= 0" "$1")" -ge 5 ]' _ "$TMP/mix.strace" && sleep 0.3
  pkill -9 -P "$tracer" shard; wait "$tracer" 2>/dev/null
  CASES=$((CASES + 1)); [ ! -e "$TMP/mix/s.done" ] || fail_case "a killed shard -f left its old marker over a mixed set"
  run shard -q -f -n 3 --seed 2 -o "$TMP/mix/s" "$TMP/corpus.txt"
  expect_rc 0 "shard -f after a killed one"
  OUT=$(ls -A "$TMP/mix" | grep -v '^s_training-0000[0-2]-of-00003.txt$\|^s.done$' || true)
  expect_out "" "nothing but the shards and the marker after the rerun"
  CASES=$((CASES + 1)); grep -q '"seed": 2' "$TMP/mix/s.done" || fail_case "the new marker does not name seed 2"
fi
# Item 5: bin4 -f swaps the new output in with one renameat2 (RENAME_EXCHANGE): killed right after it, OUT is the
# new output whole, and the old one left at its temporary name is removed by the next run. Where the file system
# cannot swap (EINVAL, injected), a run killed between the fallback's two renames has moved OUT aside: the next run
# puts it back before anything else.
mkpretrain -q --vocab "$TMP/vocab.txt" --format hdf5 --max-seq-length 16 --max-predictions 2 -o "$TMP/stamped.hdf5" "$TMP/corpus.txt"
if strace_windows; then
  bin4 -q --bins 8,16 -o "$TMP/b5" "$TMP/stamped.hdf5"
  cp "$TMP/b5/bin4.json" "$TMP/b5.old.json"
  strace -f -o /dev/null -e trace=renameat2 -e inject=renameat2:delay_exit=8000000 \
    bin4 -q -f --bins 4,16 -o "$TMP/b5" "$TMP/stamped.hdf5" &
  tracer=$!
  wait_for grep -q '"max_length": 4' "$TMP/b5/bin4.json"
  pkill -9 -P "$tracer" bin4; wait "$tracer" 2>/dev/null
  CASES=$((CASES + 1)); grep -q '"max_length": 4' "$TMP/b5/bin4.json" || fail_case "bin4 -f killed after its swap: OUT is not the new output"
  run bin4 -q -f --bins 4,16 -o "$TMP/b5" "$TMP/stamped.hdf5"
  expect_rc 0 "bin4 -f after a killed one"
  OUT=$(ls -A "$TMP" | grep '^\.b5\.' || true); expect_out "" "no .b5.partial-* left after the rerun"
  strace -f -o /dev/null -e trace=renameat2,rename -e inject=renameat2:error=EINVAL \
    -e inject=rename:delay_exit=8000000 -P "$TMP/b5" bin4 -q -f --bins 8,16 -o "$TMP/b5" "$TMP/stamped.hdf5" &
  tracer=$!
  wait_for test ! -e "$TMP/b5"
  pkill -9 -P "$tracer" bin4; wait "$tracer" 2>/dev/null
  run bin4 -q --bins 8,16 -o "$TMP/b5" "$TMP/stamped.hdf5"
  expect_rc 1 "bin4 without -f after a fallback commit was killed"
  expect_err "^bin4: $TMP/b5: put back the output that a killed run had moved aside" "the put-back said"
  CASES=$((CASES + 1)); grep -q '"max_length": 4' "$TMP/b5/bin4.json" || fail_case "the old output was not put back"
  OUT=$(ls -A "$TMP" | grep '^\.b5\.' || true); expect_out "" "no .b5.partial-* left after the put-back"
  # Item 6: a file put into OUT while bin4 -f runs is refused by name at the commit, never deleted with the old
  # output, and the old output stays.
  strace -f -o /dev/null -e trace=renameat2 -e inject=renameat2:delay_enter=4000000 \
    bin4 -q -f --bins 8,16 -o "$TMP/b5" "$TMP/stamped.hdf5" >"$TMP/b6.out" 2>"$TMP/b6.err" &
  tracer=$!
  wait_for sh -c 'ls "$1"/.b5.partial-*/bin4.json' _ "$TMP" >/dev/null 2>&1 && sleep 0.5
  echo "my notes" >"$TMP/b5/notes.txt"
  wait "$tracer"; RC=$?; ERR=$(cat "$TMP/b6.err")
  expect_rc 1 "bin4 -f with a file put into OUT during the run"
  expect_err "^bin4: error: $TMP/b5: holds notes.txt, which bin4 did not write" "the file named"
  CASES=$((CASES + 1)); [ "$(cat "$TMP/b5/notes.txt")" = "my notes" ] && grep -q '"max_length": 4' "$TMP/b5/bin4.json" ||
    fail_case "the user's file or the old output is gone"
fi
# Item 9: a stamped and an unstamped file: the output keeps the known stamp and says so.
run pack -o "$TMP/mixed.hdf5" "$TMP/stamped.hdf5" "$TMP/in.hdf5"
expect_rc 0 "pack of a stamped and an unstamped file"
expect_err "^pack: warning: $TMP/in.hdf5 records no vocabulary; taken as $TMP/stamped.hdf5's " "the warning"
OUT=$("$PYTHON" -c 'import sys, h5py
a, b = (h5py.File(p).attrs.get("bertkit_vocab") for p in sys.argv[1:])
print(a is not None and a == b)' "$TMP/stamped.hdf5" "$TMP/mixed.hdf5")
expect_out "True" "the packed output keeps the stamp"
# Item 12: tfrecord2hdf5 --output-dir is all or nothing: a later input that fails leaves no earlier output.
printf 'not a tfrecord' >"$TMP/bad.tfrecord"
mkdir "$TMP/t12"
run tfrecord2hdf5 -q --output-dir "$TMP/t12/out" "$TMP/good.tfrecord" "$TMP/bad.tfrecord"
expect_rc 1 "tfrecord2hdf5 --output-dir with a bad second input"
OUT=$(ls -A "$TMP/t12"); expect_out "" "no output and no directory left"
run tfrecord2hdf5 -q --output-dir "$TMP/t12/out" "$TMP/good.tfrecord"
expect_rc 0 "the rerun is not refused"
# Item 13: a dead run's temporaries (no process holds them, older than the run) are removed by the next run that
# writes the same output; one a live process holds stays.
mkdir "$TMP/t13"
touch -d '1 hour ago' "$TMP/t13/out.txt.tmp.AbCdEf"
host=$(uname -n | sed 's/[^A-Za-z0-9.-]/_/g')
mkdir "$TMP/t13/.bertkit-staged-$host-XyZ123" && echo old >"$TMP/t13/.bertkit-staged-$host-XyZ123/s.done.old"
touch -d '1 hour ago' "$TMP/t13/held.txt.tmp.HeLd00"
flock "$TMP/t13/held.txt.tmp.HeLd00" sleep 30 &
holder=$!
wait_for sh -c '! flock -n "$1" true' _ "$TMP/t13/held.txt.tmp.HeLd00"
run sent-seg -q -o "$TMP/t13/out.txt" "$TMP/corpus.txt"
run sent-seg -q -o "$TMP/t13/held.txt" "$TMP/corpus.txt"
run shard -q -n 1 -o "$TMP/t13/s" "$TMP/corpus.txt"
expect_rc 0 "runs beside a dead run's leftovers"
OUT=$(ls -A "$TMP/t13" | tr '\n' ' '); expect_out "held.txt held.txt.tmp.HeLd00 out.txt s.done s_training-00000-of-00001.txt " "only the held temporary stays"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
# Item 14: an error after the disk fills names the output, not its staging path.
run bash -c 'ulimit -f 1 && exec shard -q -n 1 -o "$1" "$2"' _ "$TMP/t14/s" "$TMP/split.xml"
expect_rc 1 "shard past a file-size limit"
expect_err "^shard: error: $TMP/t14/s_training-00000-of-00001.txt: " "the shard named as the user knows it"
finish
