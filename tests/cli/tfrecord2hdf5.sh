#!/usr/bin/env bash
# tfrecord2hdf5: usage, damaged inputs (each CRC, truncation), --skip-corrupt, --output-dir, refusals.
source "$(dirname "$0")/lib.sh"
need_fixtures
SAMPLE=$FIXTURES/tfrecord/sample_text-pretraining/BiaoLiu2017-bert.tf_examples.tfrecord
MRPC=$FIXTURES/tfrecord/mrpc-run_classifier/train.tf_record

run tfrecord2hdf5 --help
expect_rc 0 "--help"
run tfrecord2hdf5 --version
expect_rc 0 "--version"; expect_out "tfrecord2hdf5 (bertkit) 0.1.0" "--version text"
run tfrecord2hdf5 --layuot nvidia -o "$TMP/x.hdf5" "$SAMPLE"
expect_rc 2 "misspelt flag"; expect_err "layuot.*try --help" "misspelt flag named"
run tfrecord2hdf5 "$SAMPLE"
expect_rc 2 "no output"; expect_err "either -o FILE or --output-dir DIR; try --help" "no output message"
run tfrecord2hdf5 --layout parquet -o "$TMP/x.hdf5" "$SAMPLE"
expect_rc 2 "unknown layout"

# Byte offset of each record's header, walked from the length fields with Python (not with our reader).
offset() {
  python3 -c 'import struct,sys
d=open(sys.argv[1],"rb").read(); p=0
for _ in range(int(sys.argv[2])): p += 16 + struct.unpack("<Q", d[p:p+8])[0]
print(p)' "$SAMPLE" "$1"
}
# Damage the data of record 2 (0-based): one flipped byte in its payload.
cp "$SAMPLE" "$TMP/bad-data.tfrecord"
printf '\x77' | dd of="$TMP/bad-data.tfrecord" bs=1 seek=$(($(offset 2) + 12 + 40)) conv=notrunc status=none
run tfrecord2hdf5 -o "$TMP/x.hdf5" "$TMP/bad-data.tfrecord"
expect_rc 1 "data CRC mismatch"
expect_err "bad-data.tfrecord: record 2 at byte $(offset 2): .*(crc|CRC)" "data CRC error names file, record, offset"
expect_file_absent "$TMP/x.hdf5" "no output after a CRC error"
run tfrecord2hdf5 --skip-corrupt -o "$TMP/x.hdf5" "$TMP/bad-data.tfrecord"
expect_rc 0 "--skip-corrupt"; expect_err "59 records \(1 corrupt skipped\)" "--skip-corrupt counts"
# Damage the length of record 3: a wrong length CRC can't be skipped.
cp "$SAMPLE" "$TMP/bad-length.tfrecord"
printf '\x01' | dd of="$TMP/bad-length.tfrecord" bs=1 seek=$(($(offset 3) + 2)) conv=notrunc status=none
run tfrecord2hdf5 --skip-corrupt -o "$TMP/y.hdf5" "$TMP/bad-length.tfrecord"
expect_rc 1 "length CRC mismatch"; expect_err "record 3 at byte $(offset 3)" "length CRC error names record and offset"
expect_file_absent "$TMP/y.hdf5" "no output after a length CRC error"
# Truncated in the middle of record 5.
head -c $(($(offset 5) + 100)) "$SAMPLE" >"$TMP/cut.tfrecord"
run tfrecord2hdf5 -o "$TMP/z.hdf5" "$TMP/cut.tfrecord"
expect_rc 1 "truncated file"; expect_err "cut.tfrecord: record 5 at byte $(offset 5): .*truncated" "truncation named"
expect_file_absent "$TMP/z.hdf5" "no output after truncation"
: >"$TMP/empty.tfrecord"
run tfrecord2hdf5 -o "$TMP/e.hdf5" "$TMP/empty.tfrecord"
expect_rc 1 "empty input"; expect_err "empty.tfrecord: no records" "empty input named"
run tfrecord2hdf5 --layout nvidia -o "$TMP/m.hdf5" "$MRPC"
expect_rc 1 "classifier records as pretraining"; expect_err "not a pretraining record.*--layout generic" "layout mismatch explained"
printf 'not a tfrecord at all, just text\n' >"$TMP/text.tfrecord"
run tfrecord2hdf5 -o "$TMP/t.hdf5" "$TMP/text.tfrecord"
expect_rc 1 "not a TFRecord"; expect_err "text.tfrecord: not a TFRecord file" "garbage named"

# Output modes and refusals.
gzip -c "$SAMPLE" >"$TMP/sample.tfrecord.gz"
cp "$MRPC" "$TMP/mrpc.tf_record"
mkdir "$TMP/h5dir"
run tfrecord2hdf5 --output-dir "$TMP/h5dir" "$TMP/sample.tfrecord.gz" "$TMP/mrpc.tf_record"
expect_rc 0 "--output-dir"; expect_err "3728 records, 2 output files" "--output-dir summary"
run ls "$TMP/h5dir"
expect_out "mrpc.hdf5
sample.hdf5" "one output per input, named after it"
run tfrecord2hdf5 --output-dir "$TMP/h5dir" "$TMP/sample.tfrecord.gz"
expect_rc 1 "existing output refused"; expect_err "sample.hdf5: already exists; use --force" "refusal message"
run tfrecord2hdf5 -o "$TMP/s.hdf5" - <"$SAMPLE"
expect_rc 0 "stdin"; expect_err "60 records, 1 output file" "stdin summary"
run tfrecord2hdf5 -o "$TMP/two.hdf5" "$SAMPLE" "$SAMPLE"
expect_rc 0 "two inputs into one file"; expect_err "120 records" "two inputs counted"

# An HDF5 file given by mistake is named for what it is.
run tfrecord2hdf5 -o "$TMP/again.hdf5" "$TMP/two.hdf5"
expect_rc 1 "an HDF5 input"
expect_err "^tfrecord2hdf5: error: $TMP/two.hdf5: an HDF5 file, not a TFRecord file \(HDF5 pretraining data needs no conversion" \
  "an HDF5 input: what it is"
CASES=$((CASES + 1)); [ ! -e "$TMP/again.hdf5" ] || fail_case "an HDF5 input: output left"
finish
