#!/usr/bin/env bash
# bk::Input's decoders against the reference command-line tools: every file read back through bk::Input
# (data_test_helper cat FILE THREADS) must give exactly what bzcat / zcat / xzcat / zstdcat give, for any number
# of bzip2 workers; corrupt input is reported with the file and the byte; memory does not grow with the input.
. "$(dirname "$0")/lib.sh"
HELPER=${TEST_TOOLS:?}/data_test_helper

# same_as REFERENCE-CMD FILE THREADS...: our decoding equals the reference tool's output
same_as() {
  local ref=$1 file=$2; shift 2
  $ref < "$file" > "$TMP/ref.out" || { fail_case "$ref failed on $file"; return; }
  for t in "$@"; do
    "$HELPER" cat "$file" "$t" > "$TMP/ours.out" 2> "$TMP/ours.err" || fail_case "$file -t $t: $(cat "$TMP/ours.err")"
    expect_same "$TMP/ref.out" "$TMP/ours.out" "$(basename "$file") with $t threads vs $ref"
  done
}

# Pieces: text, text holding both bzip2 magics as bytes, incompressible bytes, long runs, nothing at all.
seq 1 200000 | sed 's/$/ lorem ipsum dolor/' > "$TMP/text"
printf '1AY&SY\x17\x72\x45\x38\x50\x90BZh91AY&SY' > "$TMP/magic"
head -c 400000 /dev/urandom > "$TMP/noise"
head -c 2000000 /dev/zero > "$TMP/zeros"
: > "$TMP/empty"
cat "$TMP/text" "$TMP/magic" "$TMP/noise" "$TMP/magic" "$TMP/zeros" "$TMP/text" > "$TMP/all"

# One stream, small (-1: 100k) and large (-9: 900k) blocks
bzip2 -1 -c "$TMP/all" > "$TMP/all1.bz2"
bzip2 -9 -c "$TMP/all" > "$TMP/all9.bz2"
same_as bzcat "$TMP/all1.bz2" 1 2 4
same_as bzcat "$TMP/all9.bz2" 1 2 4
# Many streams, as Wikimedia's multistream dumps: levels mixed, empty streams first, between and last
for f in empty text empty empty magic noise zeros magic empty; do bzip2 -"$((RANDOM % 9 + 1))" -c "$TMP/$f"; done \
  > "$TMP/multi.bz2"
same_as bzcat "$TMP/multi.bz2" 1 2 4
bzip2 -c "$TMP/empty" > "$TMP/empty.bz2"
same_as bzcat "$TMP/empty.bz2" 1 3
# stdin
"$HELPER" cat - 2 < "$TMP/multi.bz2" > "$TMP/stdin.out"; bzcat "$TMP/multi.bz2" > "$TMP/ref.out"
expect_same "$TMP/ref.out" "$TMP/stdin.out" "multistream bzip2 on stdin"

# gzip, xz, zstd: one member and several
for z in "gzip zcat" "xz xzcat" "zstd zstdcat"; do
  set -- $z
  $1 -c "$TMP/all" > "$TMP/all.$1"
  same_as "$2" "$TMP/all.$1" 1
  for f in text magic noise empty; do $1 -c "$TMP/$f"; done > "$TMP/multi.$1"
  same_as "$2" "$TMP/multi.$1" 2
done

# The fixture dump, as users run it
need_fixtures
DUMP="$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
[ -f "$DUMP" ] || { echo "skipped: $DUMP missing"; exit 77; }
same_as bzcat "$DUMP" 1 2 4

# Corrupt and truncated: exit 1, one line naming the file and the byte
size9=$(wc -c < "$TMP/all9.bz2")
head -c $((size9 / 2)) "$TMP/all9.bz2" > "$TMP/cut.bz2"
cp "$TMP/all9.bz2" "$TMP/flip.bz2"; printf '\x55' | dd of="$TMP/flip.bz2" bs=1 seek=1000 conv=notrunc 2>/dev/null
{ cat "$TMP/all9.bz2"; echo garbage; } > "$TMP/trail.bz2"
for t in 1 2; do
  run "$HELPER" cat "$TMP/cut.bz2" $t
  expect_rc 1 "truncated bzip2 ($t threads)"
  expect_err "^data_test_helper: error: $TMP/cut.bz2: unexpected end of bzip2 data in the block at byte [0-9]+ \(file truncated\?\)\$" \
    "truncated bzip2 named ($t threads)"
  run "$HELPER" cat "$TMP/flip.bz2" $t
  expect_rc 1 "corrupt bzip2 ($t threads)"
  expect_err "^data_test_helper: error: $TMP/flip.bz2: corrupt bzip2 data in the block at byte 4: [a-z (CRC)]+\$" \
    "corrupt bzip2 named ($t threads)"
  run "$HELPER" cat "$TMP/trail.bz2" $t
  expect_rc 1 "trailing garbage ($t threads)"
  expect_err "^data_test_helper: error: $TMP/trail.bz2: corrupt bzip2 data at byte $size9: bad stream magic" \
    "trailing garbage named ($t threads)"
done
for z in xz zstd; do
  size=$(wc -c < "$TMP/all.$z")
  head -c $((size / 2)) "$TMP/all.$z" > "$TMP/cut.$z"
  run "$HELPER" cat "$TMP/cut.$z" 1
  expect_rc 1 "truncated $z"
  expect_err "^data_test_helper: error: $TMP/cut.$z: unexpected end of $z data at byte $((size / 2)) \(file truncated\?\)\$" \
    "truncated $z named"
done

# Memory: peak RSS with 4 workers does not follow the input when it grows 4 times (the decoder holds at most
# 2 * 4 + 4 blocks, about 15 MB for text: how many are in flight depends on how fast the reader drains them, so
# the two runs may differ by up to that, never by the 37 MB of XML the larger input adds), and stays under 80 MB.
rss() { "$HELPER" cat "$1" 4 --rss 2>&1 >/dev/null | sed -n 's/^peak_rss_kb //p'; }
bzcat "$DUMP" > "$TMP/dump.xml"
bzip2 -c "$TMP/dump.xml" > "$TMP/x1.bz2"
cat "$TMP/x1.bz2" "$TMP/x1.bz2" > "$TMP/x2.bz2"
cat "$TMP/x2.bz2" "$TMP/x2.bz2" "$TMP/x2.bz2" "$TMP/x2.bz2" > "$TMP/x8.bz2"
small=$(rss "$TMP/x2.bz2"); large=$(rss "$TMP/x8.bz2")
CASES=$((CASES + 1))
[ -n "$small" ] && [ -n "$large" ] && [ "$large" -lt $((small + 16384)) ] && [ "$large" -lt 81920 ] ||
  fail_case "peak RSS grows with the input: ${small} kB for 12 MB, ${large} kB for 49 MB of XML"
finish
