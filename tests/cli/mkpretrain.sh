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
: > "$TMP/afile"
run mkpretrain --vocab "$VOCAB" -o "$TMP/afile/x.tfrecord" "$SAMPLE"
expect_rc 1 "unwritable output"; expect_err "^mkpretrain: error: $TMP/afile: exists and is not a directory$" "unwritable output named"

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

# --no-nsp: [CLS] whole sentences of one document [SEP], segment 0, label 0; the same bytes for any --threads.
# Each document has words of its own, so a sample that crosses documents or cuts a sentence shows.
cat >"$TMP/docs.txt" <<'TEXT'
apple banana cherry
grape lemon apple banana cherry grape lemon
banana
cherry grape lemon apple
lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon lemon
apple grape

red green blue
black white red green
blue blue black
white
green red blue black white green

one two three four five six
seven eight nine
ten one
two three four five six seven eight nine ten one two
three
TEXT
NONSP=(mkpretrain -q --vocab "$VOCAB" --no-nsp --max-seq-length 16 --max-predictions 4 --dupe-factor 4
       --short-seq-prob 0.3 --seed 7)
run "${NONSP[@]}" -t 1 -o "$TMP/nonsp1.hdf5" "$TMP/docs.txt"
expect_rc 0 "--no-nsp hdf5"
run "${NONSP[@]}" -t 2 -o "$TMP/nonsp2.hdf5" "$TMP/docs.txt"
expect_same "$TMP/nonsp1.hdf5" "$TMP/nonsp2.hdf5" "--no-nsp: same bytes for --threads 1 and 2"
run "${NONSP[@]}" -t 1 -o "$TMP/nonsp1.tfrecord" "$TMP/docs.txt"
run "${NONSP[@]}" -t 2 -o "$TMP/nonsp2.tfrecord" - <"$TMP/docs.txt"
expect_same "$TMP/nonsp1.tfrecord" "$TMP/nonsp2.tfrecord" "--no-nsp TFRecord: same bytes for --threads 1 and 2"
run mkpretrain -q --vocab "$VOCAB" --max-seq-length 16 --max-predictions 4 --dupe-factor 4 --short-seq-prob 0.3 \
  --seed 7 -o "$TMP/nsp.tfrecord" "$TMP/docs.txt"
CASES=$((CASES + 1)); cmp -s "$TMP/nsp.tfrecord" "$TMP/nonsp1.tfrecord" && fail_case "--no-nsp changes the instances"
if "${PYTHON:-false}" -c 'import h5py' 2>/dev/null; then
  run "$PYTHON" - "$TMP/nonsp1.hdf5" "$VOCAB" "$TMP/docs.txt" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
vocab = {w: i for i, w in enumerate(open(sys.argv[2]).read().split("\n"))}
docs, sentences = [], []
for line in open(sys.argv[3]).read().split("\n") + [""]:
    if line.strip(): sentences.append([vocab[w] for w in line.split()])
    elif sentences: docs.append(sentences); sentences = []
CLS, SEP, L = vocab["[CLS]"], vocab["[SEP]"], 16
def whole_sentences(tokens):  # consecutive whole sentences of one document, or a cut of one longer sentence
    for doc in docs:
        for i in range(len(doc)):
            run = []
            for sentence in doc[i:]:
                run = run + sentence
                if run == tokens: return True
            if len(doc[i]) > L - 2 and any(doc[i][k:k + L - 2] == tokens for k in range(len(doc[i]))): return True
    return False
rows = f["input_ids"].shape[0]
bad = []
for r in range(rows):
    n = int(f["input_mask"][r].sum())
    ids = [int(x) for x in f["input_ids"][r][:n]]
    for p, t in zip(f["masked_lm_positions"][r], f["masked_lm_ids"][r]):
        if p == 0: break
        ids[int(p)] = int(t)
    if ids[0] != CLS or ids[-1] != SEP or ids.count(SEP) != 1: bad.append(f"row {r}: not [CLS] ... [SEP]")
    if any(f["segment_ids"][r]): bad.append(f"row {r}: segment_ids not all 0")
    if f["next_sentence_labels"][r] != 0: bad.append(f"row {r}: next_sentence_label not 0")
    if not whole_sentences(ids[1:-1]): bad.append(f"row {r}: not whole sentences of one document: {ids}")
print(rows, *bad)
PY
  expect_rc 0 "--no-nsp check ran"
  CASES=$((CASES + 1)); [[ "$OUT" =~ ^[0-9]+$ ]] || fail_case "--no-nsp samples: $OUT"
  CASES=$((CASES + 1)); [[ "$OUT" =~ ^[0-9]+$ ]] && [ "$OUT" -gt 20 ] || fail_case "--no-nsp: too few samples: $OUT"
fi

# The [UNK] share: in the summary line, and a warning naming the vocabulary when it is high (a 15-token vocabulary
# makes most of Wikipedia's text [UNK] and still writes instances) or when the casing disagrees with it.
printf '%s\n' '[PAD]' '[UNK]' '[CLS]' '[SEP]' '[MASK]' the a of , . and in to is was >"$TMP/v15.txt"
run mkpretrain --vocab "$TMP/v15.txt" --max-seq-length 64 --max-predictions 10 -o "$TMP/unk.hdf5" "$SAMPLE"
expect_rc 0 "a 15-token vocabulary"
expect_err "^mkpretrain: [0-9]+ documents, [0-9]+ sentences, [0-9]+ instances, 70\.0% \[UNK\], " "the [UNK] share in the summary"
expect_err "^mkpretrain: warning: 70\.0% of the 931 pieces are \[UNK\]: the vocabulary $TMP/v15.txt does not fit this text" \
  "a warning for a vocabulary that does not fit"
run mkpretrain --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 -o "$TMP/fits.hdf5" "$SAMPLE"
expect_rc 0 "Google's vocabulary"
expect_err "instances, 0\.0% \[UNK\], " "no [UNK] with the vocabulary that fits"
CASES=$((CASES + 1)); printf '%s' "$ERR" | grep -q warning && fail_case "a warning for a vocabulary that fits: $ERR"
run mkpretrain --cased --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 -o "$TMP/cased.hdf5" "$SAMPLE"
expect_err "^mkpretrain: warning: the vocabulary $VOCAB is lower-case but the text was kept cased \([0-9.]+% \[UNK\]\): drop --cased$" \
  "--cased with an uncased vocabulary"
run mkpretrain -q --vocab "$TMP/v15.txt" --max-seq-length 64 --max-predictions 10 -o "$TMP/unk-q.hdf5" "$SAMPLE"
expect_rc 0 "-q"
CASES=$((CASES + 1)); [ -z "$ERR" ] || fail_case "-q printed: $ERR"
finish
