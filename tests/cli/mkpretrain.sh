#!/usr/bin/env bash
# mkpretrain: usage, bad inputs, determinism across --threads, formats. Instance identity with the reference is
# the compat test's job (tests/compat/test_mkpretrain.py).
source "$(dirname "$0")/lib.sh"
need_fixtures
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
SAMPLE=$FIXTURES/pretraining_text/sample_text.txt

run mkpretrain --help
expect_rc 0 "--help"
printf '%s' "$OUT" | grep -q -- '--max-seq-length' || fail_case "--help lists --max-seq-length"
run mkpretrain --version
expect_rc 0 "--version"; expect_out "mkpretrain (bertkit) 0.1.0" "--version text"
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" --max-seq-lenght 12 "$SAMPLE"
expect_rc 2 "misspelt flag"; expect_err "max-seq-lenght.*try --help" "misspelt flag named"
run mkpretrain -o "$TMP/x.tfrecord" "$SAMPLE"
expect_rc 2 "missing --vocab"; expect_err "vocab.*try --help" "missing --vocab named"
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" --masked-lm-prob 1.5 "$SAMPLE"
expect_rc 2 "masked-lm-prob out of range"; expect_err "masked-lm-prob" "masked-lm-prob named"
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" --format parquet "$SAMPLE"
expect_rc 2 "unknown format"

# Bad inputs: each a one-line error naming the file, exit 1, no output left.
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" "$TMP/missing.txt"
expect_rc 1 "missing input"; expect_err "missing.txt: cannot open" "missing input named"
expect_file_absent "$TMP/x.tfrecord" "missing input leaves no output"
: >"$TMP/empty.txt"
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" "$TMP/empty.txt"
expect_rc 1 "empty input"; expect_err "empty.txt: no documents" "empty input named"
expect_file_absent "$TMP/x.tfrecord" "empty input leaves no output"
grep -v '^\[UNK\]$' "$VOCAB" >"$TMP/no-unk.txt"
run mkpretrain --vocab "$TMP/no-unk.txt" -o "$TMP/x.tfrecord" "$SAMPLE"
expect_rc 1 "vocab without [UNK]"; expect_err "no-unk.txt.*\[UNK\]" "vocab without [UNK] named"
for special in CLS SEP MASK; do
  grep -v "^\[$special\]\$" "$VOCAB" >"$TMP/no-$special.txt"
  run mkpretrain --vocab "$TMP/no-$special.txt" -o "$TMP/x.tfrecord" "$SAMPLE"
  expect_rc 1 "vocab without [$special]"; expect_err "no-$special.txt: the vocabulary has no \[$special\] token" "[$special] named"
done
expect_file_absent "$TMP/x.tfrecord" "bad vocab leaves no output"
printf 'good line\n\xff\xfe bad\n' >"$TMP/bad-utf8.txt"
run mkpretrain --vocab "$VOCAB" -o "$TMP/x.tfrecord" "$TMP/bad-utf8.txt"
expect_rc 1 "invalid UTF-8"; expect_err "bad-utf8.txt: line 2: invalid UTF-8" "invalid UTF-8 names file and line"
run mkpretrain --vocab "$VOCAB" -o /nonexistent-dir/x.tfrecord "$SAMPLE"
expect_rc 1 "unwritable output"; expect_err "/nonexistent-dir/x.tfrecord" "unwritable output named"

# Determinism: any --threads, stdin, same bytes; an existing output is refused without -f.
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 3 -t 1 -o "$TMP/a.tfrecord" "$SAMPLE"
expect_rc 0 "threads 1"
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 3 -t 3 -o "$TMP/b.tfrecord" - <"$SAMPLE"
expect_rc 0 "threads 3 from stdin"
expect_same "$TMP/a.tfrecord" "$TMP/b.tfrecord" "same bytes for --threads 1 and 3"
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 3 -o "$TMP/a.tfrecord" "$SAMPLE"
expect_rc 1 "existing output refused"; expect_err "already exists; use --force" "existing output message"
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 3 --seed 99 -f -o "$TMP/a.tfrecord" "$SAMPLE"
expect_rc 0 "--force overwrites"
CASES=$((CASES + 1)); cmp -s "$TMP/a.tfrecord" "$TMP/b.tfrecord" && fail_case "another seed gives other instances"

# Formats: the extension picks HDF5; gzip'ed HDF5 works; the summary line counts instances.
run mkpretrain --vocab "$VOCAB" --dupe-factor 5 -o "$TMP/s.hdf5" "$SAMPLE"
expect_rc 0 "hdf5 by extension"; expect_err "3 documents, 31 sentences, 60 instances" "summary line"
CASES=$((CASES + 1)); [ "$(head -c 8 "$TMP/s.hdf5" | od -An -c | tr -d ' ')" = '211HDF\r\n032\n' ] || fail_case "HDF5 signature"
sleep 1  # HDF5 would record modification times; ours carry none, so a later run gives the same bytes
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 5 -t 2 -o "$TMP/s2.hdf5" "$SAMPLE"
expect_same "$TMP/s.hdf5" "$TMP/s2.hdf5" "HDF5 output is byte-identical across runs and thread counts"
run mkpretrain -q --vocab "$VOCAB" --dupe-factor 5 --gzip 6 --layout varlength -o "$TMP/v.h5" "$SAMPLE"
expect_rc 0 "varlength gzip"
finish
