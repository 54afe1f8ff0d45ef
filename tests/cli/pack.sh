#!/usr/bin/env bash
# pack: usage, bad inputs that fail loudly and leave no output, an existing output kept without -f, refusal of
# already packed input (by pack and by bin4), determinism. What the rows hold is compat.pack's to check.
source "$(dirname "$0")/lib.sh"
need_fixtures
mkpretrain -q --vocab "$FIXTURES/vocab/bert-base-uncased-vocab.txt" --max-seq-length 64 --max-predictions 10 \
  -o "$TMP/data.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"

run pack --version
expect_rc 0 "--version"; expect_out "pack (bertkit) 0.1.0" "--version text"
run pack --help
expect_rc 0 "--help"
run pack "$TMP/data.hdf5"
expect_rc 2 "no -o"
run pack --max-sequences 0 -o "$TMP/x.hdf5" "$TMP/data.hdf5"
expect_rc 2 "--max-sequences 0"
expect_err "^pack: --max-sequences must be in \[1, 127\], got 0" "--max-sequences 0 message"
run pack -o "$TMP/x.hdf5" "$TMP/missing.hdf5"
expect_rc 1 "missing input"
expect_err "^pack: error: $TMP/missing.hdf5: cannot open: No such file or directory$" "missing input message"
expect_file_absent "$TMP/x.hdf5" "missing input"

run pack --max-seq-length 32 -o "$TMP/x.hdf5" "$TMP/data.hdf5"
expect_rc 1 "samples longer than the rows"
expect_err "^pack: error: $TMP/data.hdf5: sample [0-9]+ \([0-9]+ tokens, [0-9]+ predictions\) does not fit a row of 32 tokens and [0-9]+ predictions; raise --max-seq-length or --max-predictions$" \
  "samples longer than the rows: message"
expect_file_absent "$TMP/x.hdf5" "samples longer than the rows"

run pack -o "$TMP/packed.hdf5" "$TMP/data.hdf5"
expect_rc 0 "packing"
expect_out "" "packing writes nothing to stdout"
expect_err "^pack: [0-9]+ samples -> [0-9]+ rows of 64 tokens \([0-9.]+ samples per row\); real tokens [0-9.]+% unpacked, [0-9.]+% packed, " \
  "summary line"
cp "$TMP/packed.hdf5" "$TMP/first.hdf5"
run pack -o "$TMP/packed.hdf5" "$TMP/data.hdf5"
expect_rc 1 "existing output without -f"
expect_err "^pack: error: $TMP/packed.hdf5: already exists; use --force to overwrite it$" "existing output message"
expect_same "$TMP/packed.hdf5" "$TMP/first.hdf5" "existing output kept"
run pack -q -f -o "$TMP/packed.hdf5" "$TMP/data.hdf5"
expect_rc 0 "-f replaces"
expect_same "$TMP/packed.hdf5" "$TMP/first.hdf5" "the same inputs give the same bytes"

run pack -o "$TMP/twice.hdf5" "$TMP/packed.hdf5"
expect_rc 1 "packed input"
expect_err "^pack: error: $TMP/packed.hdf5: already packed \(it has next_sentence_positions\)$" "packed input message"
run bin4 -o "$TMP/bins" "$TMP/packed.hdf5"
expect_rc 1 "bin4 on packed input"
expect_err "^bin4: error: $TMP/packed.hdf5: packed rows \(pack\(1\)\) cannot be binned by length$" "bin4 message"
finish
