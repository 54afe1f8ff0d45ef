#!/usr/bin/env bash
# bin4: options, errors and the exact files it writes.
source "$(dirname "$0")/lib.sh"

run bin4 --help
expect_rc 0 "--help"
[[ "$OUT" == "Usage: bin4 "* ]] || fail_case "--help does not start with the usage line"
run bin4 --version
expect_rc 0 "--version"
expect_out "bin4 (bertkit) $(sed -n 's/^project(bertkit VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")" "--version"
run bin4 --bogus
expect_rc 2 "unknown flag"
expect_err "^bin4: .*--bogus.*; try --help$" "unknown flag"
run bin4 in.hdf5
expect_rc 2 "missing -o"
run bin4 -o "$TMP/x"
expect_rc 2 "no inputs"
expect_err "^bin4: no input files; try --help$" "no inputs"
run bin4 --bins 256,128 -o "$TMP/x" in.hdf5
expect_rc 2 "decreasing bins"
expect_err "^bin4: --bins: bounds must increase, but 128 follows 256; try --help$" "decreasing bins"
run bin4 --layout tf -o "$TMP/x" in.hdf5
expect_rc 2 "bad layout"
run bin4 --gzip 10 -o "$TMP/x" in.hdf5
expect_rc 2 "bad gzip level"
run bin4 --shards-per-bin 0 -o "$TMP/x" in.hdf5
expect_rc 2 "zero shards"

run bin4 -o "$TMP/x" "$TMP/missing.hdf5"
expect_rc 1 "missing input"
expect_err "^bin4: error: $TMP/missing.hdf5: cannot open: No such file or directory$" "missing input"
[ ! -e "$TMP/x" ] || fail_case "missing input: output directory was created"
printf 'plain text\n' >"$TMP/text.hdf5"
run bin4 -o "$TMP/x" "$TMP/text.hdf5"
expect_rc 1 "not HDF5"
expect_err "^bin4: error: $TMP/text.hdf5: not an HDF5 file$" "not HDF5"
run bin4 -o "$TMP/x" - <"$TMP/text.hdf5"
expect_rc 1 "stdin refused"
expect_err "random access" "stdin refused"

# The rest needs h5py to make inputs.
if ! "${PYTHON:-false}" -c 'import h5py' 2>/dev/null; then echo "skipped: no h5py in PYTHON"; finish; exit 77; fi
# Eight samples of lengths 1, 127, 128, 129, 256, 257, 385, 512 (NVIDIA layout, L=512, P=4).
"$PYTHON" - "$TMP/in.hdf5" <<'PY'
import sys, h5py, numpy as np
lengths = [1 + 1, 127, 128, 129, 256, 257, 385, 512]
n, L, P = len(lengths), 512, 4
ids = np.zeros((n, L), "i4"); mask = np.zeros((n, L), "i1"); seg = np.zeros((n, L), "i1")
pos = np.zeros((n, P), "i4"); mlm = np.zeros((n, P), "i4")
for i, k in enumerate(lengths):
    ids[i, :k] = 1000 + i; mask[i, :k] = 1; pos[i, 0] = 1; mlm[i, 0] = 7
with h5py.File(sys.argv[1], "w") as f:
    for name, data in [("input_ids", ids), ("input_mask", mask), ("segment_ids", seg),
                       ("masked_lm_positions", pos), ("masked_lm_ids", mlm),
                       ("next_sentence_labels", np.zeros(n, "i1"))]:
        f.create_dataset(name, data=data, compression="gzip")
PY

run bin4 --shards-per-bin 2 -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 0 "binning"
expect_out "" "binning writes nothing to stdout"
expect_err "^bin4: 8 samples from 1 file \(128: 3, 256: 2, 384: 1, 512: 2\), .* in .* s \(" "summary line"
OUT=$(cd "$TMP/bins" && find . -type f | sort)
expect_out "./128/part-00000-of-00002.hdf5
./128/part-00001-of-00002.hdf5
./256/part-00000-of-00002.hdf5
./256/part-00001-of-00002.hdf5
./384/part-00000-of-00002.hdf5
./384/part-00001-of-00002.hdf5
./512/part-00000-of-00002.hdf5
./512/part-00001-of-00002.hdf5
./bin4.json" "exact output files"
run "$PYTHON" -c 'import json,sys; print([b["samples"] for b in json.load(open(sys.argv[1]))["bins"]])' "$TMP/bins/bin4.json"
expect_out "[3, 2, 1, 2]" "bin4.json counts"

run bin4 -q -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 1 "existing output dir without -f"
expect_err "^bin4: error: $TMP/bins: output directory exists and is not empty; use --force to replace it$" \
  "existing output dir"
run bin4 -q -f --layout varlength -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 0 "existing output dir with -f"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "-q printed: $ERR"
# --force replaces the whole output: other bins leave no old shards behind for a training run to mix in.
run bin4 -q -f --bins 96,512 --shards-per-bin 1 -o "$TMP/bins/" "$TMP/in.hdf5"
expect_rc 0 "-f with other bins"
OUT=$(cd "$TMP/bins" && find . | sort)
expect_out ".
./512
./512/part-00000-of-00001.hdf5
./96
./96/part-00000-of-00001.hdf5
./bin4.json" "-f with other bins: only the new output"
# A failed --force run leaves the earlier output as it was; a directory with anything bin4 did not write is refused.
before=$(cd "$TMP/bins" && find . -type f | sort | xargs md5sum)
run bin4 -q -f --bins 128,256 -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 1 "-f run that fails"
CASES=$((CASES + 1))
[ "$(cd "$TMP/bins" && find . -type f | sort | xargs md5sum)" = "$before" ] || fail_case "a failed -f run changed the output"
[ -z "$(ls -A "$TMP" | grep partial)" ] || fail_case "a failed -f run left its staging directory: $(ls -A "$TMP")"
echo notes >"$TMP/bins/README"
run bin4 -q -f -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 1 "-f over a foreign file"
expect_err "^bin4: error: $TMP/bins: holds README, which bin4 did not write; -f replaces only an earlier bin4 output" \
  "-f over a foreign file"
CASES=$((CASES + 1))
[ "$(cat "$TMP/bins/README")" = notes ] && [ -f "$TMP/bins/96/part-00000-of-00001.hdf5" ] || fail_case "-f removed files"
rm "$TMP/bins/README"
# DIR a link to a directory (the data on a bigger disk): the output replaces what it points at; the link stays.
mkdir "$TMP/disk" && mv "$TMP/bins" "$TMP/disk/bins" && ln -s "$TMP/disk/bins" "$TMP/bins"
run bin4 -q -f --bins 64,512 --shards-per-bin 1 -o "$TMP/bins" "$TMP/in.hdf5"
expect_rc 0 "-f into a link to a directory"
CASES=$((CASES + 1))
[ -L "$TMP/bins" ] && [ -f "$TMP/disk/bins/64/part-00000-of-00001.hdf5" ] && [ ! -e "$TMP/disk/bins/96" ] \
  || fail_case "-f into a link: the link replaced or the target not: $(ls -la "$TMP" "$TMP/disk/bins")"
rm "$TMP/bins" && mv "$TMP/disk/bins" "$TMP/bins"

run bin4 -q --bins 128,256 -o "$TMP/short" "$TMP/in.hdf5"
expect_rc 1 "sample longer than the last bin"
expect_err "^bin4: error: $TMP/in.hdf5: row 5: 257 tokens, longer than the last bin \(256\); use --drop-long" "too long"
CASES=$((CASES + 1))
[ ! -e "$TMP/short" ] || fail_case "too long: output left behind: $(find "$TMP/short")"
[ -z "$(ls -A "$TMP" | grep partial)" ] || fail_case "too long: staging directory left: $(ls -A "$TMP")"
run bin4 --bins 128,256 --drop-long -o "$TMP/short2" "$TMP/in.hdf5"
expect_rc 0 "--drop-long"
expect_err "^bin4: 8 samples from 1 file \(128: 3, 256: 2\), 3 too long dropped, " "--drop-long summary"

run bin4 --threads -1 -o "$TMP/x" "$TMP/in.hdf5"
expect_rc 2 "negative threads"
expect_err "^bin4: --threads must be 0 \(all cores\) or positive, got -1; try --help$" "negative threads"

# --threads: 3000 samples of random lengths (several deflated chunks per shard), binned with 1 and 3 threads: the
# same files byte for byte, and h5py reads each shard's rows as the input's, dealt round-robin in input order.
"$PYTHON" - "$TMP/many.hdf5" <<'PY'
import sys, h5py, numpy as np
rng = np.random.default_rng(3)
n, L, P = 3000, 512, 20
lengths = rng.integers(5, L + 1, n)
ids = np.zeros((n, L), "i4"); mask = np.zeros((n, L), "i1"); seg = np.zeros((n, L), "i1")
pos = np.zeros((n, P), "i4"); mlm = np.zeros((n, P), "i4")
for i, k in enumerate(lengths):
    ids[i, :k] = rng.integers(999, 30000, k); mask[i, :k] = 1; seg[i, k // 2:k] = 1
    pos[i, :3] = [1, 2, 3]; mlm[i, :3] = rng.integers(999, 30000, 3)
with h5py.File(sys.argv[1], "w") as f:
    for name, data in [("input_ids", ids), ("input_mask", mask), ("segment_ids", seg),
                       ("masked_lm_positions", pos), ("masked_lm_ids", mlm),
                       ("next_sentence_labels", rng.integers(0, 2, n).astype("i1"))]:
        f.create_dataset(name, data=data)
PY
run bin4 -q -t 1 --shards-per-bin 2 -o "$TMP/t1" "$TMP/many.hdf5"
expect_rc 0 "one thread"
run bin4 -q -t 3 --shards-per-bin 2 -o "$TMP/t3" "$TMP/many.hdf5"
expect_rc 0 "three threads"
CASES=$((CASES + 1))
for f in $(cd "$TMP/t1" && find . -name '*.hdf5' | sort); do
  cmp -s "$TMP/t1/$f" "$TMP/t3/$f" || fail_case "--threads 3 wrote another $f than --threads 1"
done
run "$PYTHON" - "$TMP/many.hdf5" "$TMP/t3" <<'PY'
import sys, h5py, numpy as np
src = h5py.File(sys.argv[1], "r")
lengths = src["input_mask"][:].sum(1)
for lo, hi in [(1, 128), (129, 256), (257, 384), (385, 512)]:
    rows = np.flatnonzero((lengths >= lo) & (lengths <= hi))
    for k in range(2):
        part = h5py.File(f"{sys.argv[2]}/{hi}/part-0000{k}-of-00002.hdf5", "r")
        for name in ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids", "next_sentence_labels"]:
            assert (part[name][:] == src[name][rows[k::2]]).all(), (hi, k, name)
print("same rows")
PY
expect_out "same rows" "h5py reads the threaded shards' rows as the input's"

if [ -n "$FIXTURES" ] && [ -f "$FIXTURES/hdf5-closest/keras-bert-test_bert_fit.h5" ]; then
  run bin4 -o "$TMP/keras" "$FIXTURES/hdf5-closest/keras-bert-test_bert_fit.h5"
  expect_rc 1 "HDF5 file of another kind"
  expect_err "not a BERT pretraining HDF5 file: missing datasets input_ids, input_mask, segment_ids, masked_lm_positions, masked_lm_ids, next_sentence_labels \(found at the root: model_weights, optimizer_weights\)$" "keras weights file"
fi
finish
