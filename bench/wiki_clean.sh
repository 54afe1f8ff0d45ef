#!/usr/bin/env bash
# wiki-clean vs WikiExtractor 3.1.0 on the same dump, measured in this run:
#   1. one core each (--threads 1 / --processes 1) on the uncompressed XML: the cleaning itself;
#   2. N each (--threads N / --processes N, N = PROCS, default all cores) on the same dump uncompressed and
#      bzip2-compressed as Wikimedia's multistream dumps are (100 pages per stream): how users run them; and
#      the gzip decoding rate alone at 1 and N threads (tests/decode_probe) on the same cuts as a multi-member
#      gzip file and on the XML as one member, and wiki-clean on the multi-member file.
#   bench/wiki_clean.sh [DUMP] [COPIES]
# DUMP defaults to the fixture enwiki extract; its pages are repeated COPIES times (default 10, ~60 MB of XML).
# Prints wall and CPU (user+sys, children included: WikiExtractor forks a reader and a writer) seconds, MB/s of
# XML, and the ratios; and the bzip2 decoding rate per core of libbz2 and of bertkit's block decoder on the same
# .bz2 (tests/bzip2_probe). Environment: BIN (built tools; default build/tools), PYTHON (with wikiextractor),
# FIXTURES, PROCS, BZIP2_PROBE and DECODE_PROBE (default beside BIN).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$SRC/build/tools}
BZIP2_PROBE=${BZIP2_PROBE:-$BIN/../tests/bzip2_probe}
DECODE_PROBE=${DECODE_PROBE:-$BIN/../tests/decode_probe}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
DUMP=${1:-$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2}
COPIES=${2:-10}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$PYTHON" - "$DUMP" "$COPIES" "$TMP/dump.xml" "$TMP/dump.xml.bz2" <<'PY'
import bz2, gzip, re, sys
src, copies, dst, dst_bz2 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
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
# The multistream layout of pages-articles-multistream.xml.bz2: the header, 100 pages per stream, the footer.
with open(dst, "rb") as f:
    xml = f.read()
ends = [m.end() for m in re.finditer(rb"</page>\n", xml)]
cuts = [first] + ends[99::100] + ([ends[-1]] if len(ends) % 100 else []) + [len(xml)]
with open(dst_bz2, "wb") as out:
    start = 0
    for cut in cuts:
        out.write(bz2.compress(xml[start:cut], 9))
        start = cut
# The same cuts as a multi-member gzip file (what `cat` of gzipped shards gives), and the XML as one member.
with open(dst_bz2[:-4] + ".gz", "wb") as out:
    start = 0
    for cut in cuts:
        out.write(gzip.compress(xml[start:cut], 6))
        start = cut
with open(dst_bz2[:-len("dump.xml.bz2")] + "one-member.xml.gz", "wb") as out:
    out.write(gzip.compress(xml, 6))
PY
size=$(wc -c < "$TMP/dump.xml")
PROCS=${PROCS:-$(nproc)}
echo "dump: $DUMP, pages x$COPIES = $((size / 1000000)) MB of XML ($(($(wc -c < "$TMP/dump.xml.bz2") / 1000000)) MB as multistream .bz2); $(nproc) cores, $(uname -m)"

# measure NAME CMD...: runs CMD with stdout to a file, sets WALL and CPU (seconds)
measure() {
  local name=$1; shift
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"; } 2>&1 ) ||
    { echo "$name failed:"; cat "$TMP/$name.err"; exit 1; }
  WALL=$(echo "$t" | awk '{print $1}')
  CPU=$(echo "$t" | awk '{printf "%.3f", $2 + $3}')
  printf '%-22s wall %7.3f s   cpu %7.3f s   %6.1f MB/s of XML, %6.1f per core\n' "$name" "$WALL" "$CPU" \
    "$(awk -v s="$size" -v w="$WALL" 'BEGIN{print s / 1e6 / (w > 0 ? w : 1e-3)}')" \
    "$(awk -v s="$size" -v c="$CPU" 'BEGIN{print s / 1e6 / (c > 0 ? c : 1e-3)}')"
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

# 2. N processes each, uncompressed and compressed
echo "--- bzip2 decoding, one core ---"
"$BZIP2_PROBE" "$TMP/dump.xml.bz2" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
theirs, ours = d["libbz2_mb_per_cpu_s"], d["bertkit_mb_per_cpu_s"]
print("libbz2 %.1f MB/s of XML per CPU second, bertkit %.1f: %.2fx; same bytes: %s" % (theirs, ours, ours / theirs, d["identical"]))'
echo "--- $PROCS threads / processes each ---"
for input in dump.xml dump.xml.bz2; do
  measure "wiki-clean $input" "$BIN/wiki-clean" -q --threads "$PROCS" "$TMP/$input"
  eval "ours_${input//./_}=$WALL"
  cmp -s "$TMP/wiki-clean.out" "$TMP/wiki-clean $input.out" || echo "WARNING: $input output differs from the one-thread run"
  measure "WikiExtractor $input" "$PYTHON" -m wikiextractor.WikiExtractor "$TMP/$input" -o - --processes "$PROCS" -q
  eval "theirs_${input//./_}=$WALL"
done
echo "--- gzip decoding alone (tests/decode_probe), 1 and $PROCS threads ---"
for gz in dump.xml.gz one-member.xml.gz; do
  for t in 1 "$PROCS"; do
    "$DECODE_PROBE" "$TMP/$gz" "$t" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print("%-18s %2s threads: %6.1f MB/s of XML (wall), %6.1f per CPU second" % (sys.argv[1], sys.argv[2], d["decoded_mb"] / d["wall_s"], d["decoded_mb"] / d["cpu_s"]))' "$gz" "$t"
  done
done
measure "wiki-clean gz -t $PROCS" "$BIN/wiki-clean" -q --threads "$PROCS" "$TMP/dump.xml.gz"
cmp -s "$TMP/wiki-clean.out" "$TMP/wiki-clean gz -t $PROCS.out" || echo "WARNING: the gzip output differs from the one-thread run"
awk -v a="$ours_dump_xml" -v b="$theirs_dump_xml" -v c="$ours_dump_xml_bz2" -v d="$theirs_dump_xml_bz2" -v n="$PROCS" 'BEGIN {
  printf "ratio at %d each (WikiExtractor / wiki-clean, wall): uncompressed %.1fx, compressed .bz2 %.1fx (target: 10x)\n", n, b / a, d / c
}'
