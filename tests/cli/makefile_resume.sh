#!/usr/bin/env bash
# make -f Makefile.data on the real enwiki fixture with small shard counts: killed midway (kill -9 of the whole
# make process group) and run again, it ends with exactly the files of an uninterrupted run.
source "$(dirname "$0")/lib.sh"
need_fixtures
DUMP=$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
knobs=(DUMP="$DUMP" BIN="$BIN" TRAIN_SHARDS=4 TEST_SHARDS=1 TEST_FRACTION=0.05 VOCAB_SIZE=5000 DUPE_FACTOR=2
       EVAL_DOCS=3 THREADS=1)

run make -s -f "$SRC/Makefile.data" -C "$SRC" -j2 OUT="$TMP/whole" "${knobs[@]}"
expect_rc 0 "uninterrupted run"

for target in "phase1/wiki_training-00001-of-00004.hdf5" "vocab.txt" "sentences.txt"; do
  out="$TMP/killed-${target%%/*}"
  setsid make -s -f "$SRC/Makefile.data" -C "$SRC" -j2 OUT="$out" "${knobs[@]}" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 2000); do [ -e "$out/$target" ] && break; sleep 0.01; done
  kill -9 -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  CASES=$((CASES + 1)); [ -e "$out/bins/bin4.json" ] && fail_case "the run was killed before it finished (after $target)"
  run make -s -f "$SRC/Makefile.data" -C "$SRC" -j2 OUT="$out" "${knobs[@]}"
  expect_rc 0 "resumed after a kill at $target"
  CASES=$((CASES + 1))
  differ=$(cd "$TMP/whole" && find . -type f | sort | while read -r f; do cmp -s "$f" "$out/$f" || echo "$f"; done)
  [ -z "$differ" ] || fail_case "killed at $target and resumed: these differ from the uninterrupted run: $differ"
  # Leftover temporaries of the killed steps are never inputs (their names never match a target).
  echo "killed after $target: $(find "$out" -name '*.tmp.*' | wc -l) temporary file(s) left by the kill"
done
CASES=$((CASES + 1))
[ "$(find "$TMP/whole" -name '*.hdf5' | wc -l)" = 13 ] || fail_case "4 phase-1 + 4 phase-2 shards, 4 bins and an eval set"
finish
