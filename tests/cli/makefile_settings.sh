#!/usr/bin/env bash
# make -f Makefile.data with a changed variable rebuilds exactly the steps that variable shapes: nothing for the
# same command, the mkpretrain steps and bin4 for DUPE_FACTOR, the data of every step after the vocabulary for
# another VOCAB, and for other shard counts new shards with no shard or data file of the old count left beside them.
source "$(dirname "$0")/lib.sh"
need_fixtures
DUMP=$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
OUTDIR=$TMP/data
knobs=(DUMP="$DUMP" BIN="$BIN" OUT="$OUTDIR" TEST_SHARDS=1 TEST_FRACTION=0.05 VOCAB_SIZE=5000 EVAL_DOCS=3 QUIET=1)
data() { make -s -f "$SRC/Makefile.data" -C "$SRC" -j2 "${knobs[@]}" "$@"; }
# The files (under OUT, the settings left out) written since the last call of `mark`.
mark() { sleep 1.1; touch "$TMP/mark"; }
rebuilt() { (cd "$OUTDIR" && find . -type f -newer "$TMP/mark" -not -path './.settings/*' | sed 's|^\./||' | sort | tr '\n' ' '); }

run data TRAIN_SHARDS=2 DUPE_FACTOR=2
expect_rc 0 "a first run"
mark
run data TRAIN_SHARDS=2 DUPE_FACTOR=2
expect_rc 0 "the same command again"
CASES=$((CASES + 1)); [ -z "$(rebuilt)" ] || fail_case "the same command rebuilt: $(rebuilt)"

cp "$OUTDIR/eval/eval.hdf5" "$TMP/eval-before.hdf5"
cp "$OUTDIR/phase1/wiki_training-00000-of-00002.hdf5" "$TMP/phase1-before.hdf5"
mark
run data TRAIN_SHARDS=2 DUPE_FACTOR=3
expect_rc 0 "DUPE_FACTOR=3"
CASES=$((CASES + 1))
expected="bins/128/part-00000-of-00001.hdf5 bins/256/part-00000-of-00001.hdf5 bins/384/part-00000-of-00001.hdf5 \
bins/512/part-00000-of-00001.hdf5 bins/bin4.json phase1/wiki_training-00000-of-00002.hdf5 \
phase1/wiki_training-00001-of-00002.hdf5 phase2/wiki_training-00000-of-00002.hdf5 \
phase2/wiki_training-00001-of-00002.hdf5 "
[ "$(rebuilt)" = "$expected" ] || fail_case "DUPE_FACTOR should rebuild the mkpretrain steps and bin4 only: $(rebuilt)"
CASES=$((CASES + 1))
! cmp -s "$TMP/phase1-before.hdf5" "$OUTDIR/phase1/wiki_training-00000-of-00002.hdf5" || fail_case "DUPE_FACTOR=3 kept the old phase 1 data"

# Google's vocabulary instead of the learned one: every step that encodes with it is made again, with it.
GOOGLE=$FIXTURES/vocab/bert-base-uncased-vocab.txt
mark
run data TRAIN_SHARDS=2 DUPE_FACTOR=3 VOCAB="$GOOGLE"
expect_rc 0 "VOCAB=Google's"
CASES=$((CASES + 1))
case " $(rebuilt)" in
  *" eval/eval.hdf5 "*"phase1/wiki_training-00000-of-00002.hdf5 "*) ;;
  *) fail_case "another VOCAB did not rebuild the encoded data: $(rebuilt)" ;;
esac
CASES=$((CASES + 1))
case " $(rebuilt)" in *" vocab.txt "* | *" articles.txt "* | *shards/*) fail_case "another VOCAB rebuilt more than the encoded data: $(rebuilt)" ;; esac
run "$PYTHON" - "$OUTDIR/phase1/wiki_training-00000-of-00002.hdf5" "$GOOGLE" <<'PY'
import h5py, sys
ids = h5py.File(sys.argv[1], "r")["input_ids"][:]
vocab = [line.rstrip("\n") for line in open(sys.argv[2], encoding="utf-8")]
print(ids[0][0] == vocab.index("[CLS]"), ids.max() < len(vocab), ids.max() >= 5000)
PY
expect_out "True True True" "the phase 1 data is encoded with Google's vocabulary (ids beyond the learned 5000)"

# FULL_SENTENCES=1 (ModernBERT's and RoBERTa's rows): the encoded data again, one segment per row, no NSP labels.
mark
run data TRAIN_SHARDS=2 DUPE_FACTOR=3 VOCAB="$GOOGLE" FULL_SENTENCES=1
expect_rc 2 "FULL_SENTENCES=1 with static masks"
expect_err "FULL_SENTENCES=1 makes unmasked rows \(mkpretrain --full-sentences\): set MASKING=dynamic" "says what to set"
run data TRAIN_SHARDS=2 DUPE_FACTOR=3 VOCAB="$GOOGLE" FULL_SENTENCES=1 MASKING=dynamic
expect_rc 0 "FULL_SENTENCES=1 MASKING=dynamic"
CASES=$((CASES + 1))
case " $(rebuilt)" in *" phase1/wiki_training-00000-of-00002.hdf5 "*) ;; *) fail_case "FULL_SENTENCES did not rebuild phase 1: $(rebuilt)" ;; esac
run "$PYTHON" - "$OUTDIR/phase1/wiki_training-00000-of-00002.hdf5" <<'PY'
import h5py, sys
f = h5py.File(sys.argv[1], "r")
print(int(f["segment_ids"][:].max()), int(f["next_sentence_labels"][:].max()))
PY
expect_out "0 0" "FULL_SENTENCES=1 rows have one segment and no random-next label"
run data TRAIN_SHARDS=2 DUPE_FACTOR=3 VOCAB="$GOOGLE"
expect_rc 0 "back to FULL_SENTENCES=0"

# Other shard counts: the new shards, and no file of the old count anywhere under OUT.
run data TRAIN_SHARDS=3 DUPE_FACTOR=3 VOCAB="$GOOGLE"
expect_rc 0 "TRAIN_SHARDS=3"
CASES=$((CASES + 1))
old=$(cd "$OUTDIR" && find . -name '*-of-00002*' | tr '\n' ' ')
[ -z "$old" ] || fail_case "files of the old shard count left: $old"
CASES=$((CASES + 1))
[ "$(cd "$OUTDIR/phase1" && ls | tr '\n' ' ')" = "wiki_training-00000-of-00003.hdf5 wiki_training-00001-of-00003.hdf5 wiki_training-00002-of-00003.hdf5 " ] \
  || fail_case "phase 1 holds: $(ls "$OUTDIR/phase1")"

run make -s -f "$SRC/Makefile.data" help
expect_rc 0 "help"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "clean: rm -rf OUT" || fail_case "help names make clean and what it deletes"
# (issue 39) TEXT= takes one's own corpus instead of DUMP: JSON lines in (the WikiExtractor extract written as
# such), phase 1 and the eval set out, the shards named for the corpus; a changed TEXT_FIELD rebuilds the text.
python3 - "$FIXTURES/wiki/mlperf-extracted/wiki_00" "$TMP/notes.jsonl" <<'PY'
import json, sys
docs, lines = [], None
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("<doc "): lines = []
    elif line.startswith("</doc>"): docs.append("\n".join(lines[1:])); lines = None
    elif lines is not None: lines.append(line.rstrip("\n"))
with open(sys.argv[2], "w") as f:
    for d in docs: f.write(json.dumps({"body": d}) + "\n")
PY
text=(BIN="$BIN" OUT="$TMP/text" TEXT="$TMP/notes.jsonl" TEXT_FORMAT=jsonl TEXT_FIELD=body TRAIN_SHARDS=2 TEST_SHARDS=1
      TEST_FRACTION=0.1 VOCAB="$FIXTURES/vocab/bert-base-uncased-vocab.txt" EVAL_DOCS=2 DUPE_FACTOR=1 QUIET=1)
run make -s -f "$SRC/Makefile.data" -C "$SRC" "${text[@]}" phase1 eval
expect_rc 0 "TEXT=notes.jsonl: phase 1 and the eval set"
OUT=$(cd "$TMP/text" && ls shards phase1 eval | tr '\n' ' ')
expect_out "eval: eval-docs.txt eval.hdf5  phase1: notes_training-00000-of-00002.hdf5 notes_training-00001-of-00002.hdf5  shards: notes.done notes_test-00000-of-00001.txt notes_training-00000-of-00002.txt notes_training-00001-of-00002.txt " "the corpus's files"
CASES=$((CASES + 1)); [ "$(grep -c '^$' "$TMP/text/sentences.txt")" = 37 ] || fail_case "TEXT: not the 37 documents of the JSON lines"
run make -s -f "$SRC/Makefile.data" -C "$SRC" "${text[@]}" TEXT_FIELD=text phase1
expect_rc 2 "another TEXT_FIELD rebuilds the text"
expect_err "line 1: no field \"text\"" "the text rebuilt with the new field"
run make -s -f "$SRC/Makefile.data" -C "$SRC" "${text[@]}" DUMP="$DUMP" phase1
expect_rc 2 "TEXT and DUMP together"
expect_err "give DUMP= \(a Wikipedia dump\) or TEXT= \(your own text files\), not both" "TEXT and DUMP: message"
finish
