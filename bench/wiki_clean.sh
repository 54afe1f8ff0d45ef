#!/usr/bin/env bash
# wiki-clean vs WikiExtractor 3.1.0 (--processes 1), one core each, on the same dump, measured in this run.
#   bench/wiki_clean.sh [DUMP] [COPIES]
# DUMP defaults to the fixture enwiki extract; its pages are repeated COPIES times (default 10, ~60 MB of XML)
# into one uncompressed dump so that both tools spend their time cleaning rather than starting up or in bzip2.
# Prints wall and CPU (user+sys, children included: WikiExtractor forks a reader and a writer) seconds and the
# ratios. Environment: BIN (built tools; default build/tools), PYTHON (with wikiextractor), FIXTURES.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$SRC/build/tools}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
DUMP=${1:-$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2}
COPIES=${2:-10}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$PYTHON" - "$DUMP" "$COPIES" "$TMP/dump.xml" <<'PY'
import bz2, gzip, sys
src, copies, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
opener = bz2.open if src.endswith(".bz2") else gzip.open if src.endswith(".gz") else open
with opener(src, "rb") as f:
    data = f.read()
first = data.index(b"<page>")
first = data.rindex(b"\n", 0, first) + 1
last = data.rindex(b"</page>") + len(b"</page>\n")
with open(dst, "wb") as out:
    out.write(data[:first])
    for _ in range(copies):
        out.write(data[first:last])
    out.write(data[last:])
PY
size=$(wc -c < "$TMP/dump.xml")
echo "dump: $DUMP, pages x$COPIES = $((size / 1000000)) MB of XML; $(nproc) cores, $(uname -m)"

# measure NAME CMD...: runs CMD with stdout to a file, sets WALL and CPU (seconds)
measure() {
  local name=$1; shift
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"; } 2>&1 ) ||
    { echo "$name failed:"; cat "$TMP/$name.err"; exit 1; }
  WALL=$(echo "$t" | awk '{print $1}')
  CPU=$(echo "$t" | awk '{printf "%.3f", $2 + $3}')
  printf '%-14s wall %7.3f s   cpu %7.3f s\n' "$name" "$WALL" "$CPU"
}

measure wiki-clean "$BIN/wiki-clean" -q --threads 1 "$TMP/dump.xml"
ours_wall=$WALL ours_cpu=$CPU
measure WikiExtractor "$PYTHON" -m wikiextractor.WikiExtractor "$TMP/dump.xml" -o - --processes 1 -q
theirs_wall=$WALL theirs_cpu=$CPU
echo "articles: wiki-clean $(grep -c '^$' "$TMP/wiki-clean.out" || true) (blank-line ends), WikiExtractor $(grep -c '^<doc ' "$TMP/WikiExtractor.out" || true)"
awk -v a="$ours_wall" -v b="$theirs_wall" -v c="$ours_cpu" -v d="$theirs_cpu" -v s="$size" 'BEGIN {
  printf "wiki-clean: %.1f MB/s per core\n", s / 1e6 / (c > 0 ? c : 1e-3)
  printf "ratio (WikiExtractor / wiki-clean): wall %.1fx, cpu %.1fx (target: 20x per core)\n", b / a, d / (c > 0 ? c : 1e-3)
}'
measure wiki-clean-t0 "$BIN/wiki-clean" -q --threads 0 "$TMP/dump.xml"
cmp -s "$TMP/wiki-clean.out" "$TMP/wiki-clean-t0.out" || echo "WARNING: --threads 0 output differs from --threads 1"
