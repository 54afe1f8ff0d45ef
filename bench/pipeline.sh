#!/usr/bin/env bash
# The data half of the pipeline, measured: a Wikipedia dump scaled up from the fixture, compressed as Wikimedia's
# pages-articles-multistream.xml.bz2 is (100 pages per bzip2 stream), through Makefile.data with -j JOBS, every
# tool timed. Prints a table (per step: input MB, wall span, CPU seconds, MB/s, MB/s per CPU second, share of the
# wall time, peak RSS), the peak disk use, and a projection to a full English Wikipedia dump on one node of NODE
# cores; for both paths, static masks (Makefile.data's default) and dynamic (MASKING=dynamic), side by side on the
# same dump, then the two compared. Not a test: nothing is asserted.
#   bench/pipeline.sh [COPIES] [JOBS]
# COPIES: how many times the fixture's pages are repeated (default 40: ~245 MB of XML). JOBS: make -j and each
# tool's --threads (default: all cores). Environment: BIN (built tools; default build/tools), FIXTURES, PYTHON,
# KEEP=1 keeps the work directory, NODE (cores of the projected node, default 32), ENWIKI_XML_GB (default 95),
# ENWIKI_TEXT_GB (the cleaned text of enwiki, default 16: the BERT paper's 2,500M words at about 6.4 bytes each),
# BIN4_PROBE (tests/bin4_probe of the build, for bin4's serial part; default beside BIN), MAKE_VARS (more VAR=value for Makefile.data, e.g. "TEST_FRACTION=0.05" for a small COPIES).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${BIN:-$SRC/build/tools}" && pwd)
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-python3}
COPIES=${1:-40}
JOBS=${2:-$(nproc)}
NODE=${NODE:-32}
ENWIKI_XML_GB=${ENWIKI_XML_GB:-95}
ENWIKI_TEXT_GB=${ENWIKI_TEXT_GB:-16}
BIN4_PROBE=${BIN4_PROBE:-$BIN/../tests/bin4_probe}
FIXTURE_DUMP=$FIXTURES/wiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2
WORK=$(mktemp -d)
sampler=
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

# The scaled dump: the fixture's header, its pages COPIES times (each copy's page ids shifted so that they stay
# unique), its footer; bzip2 -9 in streams of 100 pages.
"$PYTHON" - "$FIXTURE_DUMP" "$COPIES" "$WORK/dump.xml.bz2" "$JOBS" <<'PY'
import bz2, re, sys
from multiprocessing import Pool
src, copies, dst, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
data = bz2.open(src, "rb").read()
first = data.rindex(b"\n", 0, data.index(b"<page>")) + 1
last = data.rindex(b"</page>") + len(b"</page>\n")
pages = [m.group(0) for m in re.finditer(rb"[ \t]*<page>.*?</page>\n", data[first:last], re.S)]
def shifted(page, copy):
    return re.sub(rb"<id>(\d+)</id>", lambda m: b"<id>%d</id>" % (int(m.group(1)) + copy * 10_000_000), page, count=1)
all_pages = [shifted(p, c) for c in range(copies) for p in pages]
streams = [data[:first]] + [b"".join(all_pages[i:i + 100]) for i in range(0, len(all_pages), 100)] + [data[last:]]
with Pool(jobs) as pool, open(dst, "wb") as out:
    for chunk in pool.imap(bz2.compress, streams, chunksize=4):
        out.write(chunk)
print(f"dump: {sum(map(len, streams)) / 1e6:.0f} MB of XML, {len(all_pages)} pages, {len(streams)} bzip2 streams",
      file=sys.stderr)
PY

# Every tool runs through a wrapper that logs: tool, start, end, user+sys CPU, peak RSS, input bytes.
mkdir -p "$WORK/bin"
for tool in wiki-clean sent-seg shard wordpiece mkpretrain bin4; do
  cat > "$WORK/bin/$tool" <<EOF
#!/usr/bin/env bash
in=0 prev=
for a in "\$@"; do  # input bytes: the files named, less --vocab's
  [ -f "\$a" ] && [ "\$prev" != --vocab ] && in=\$((in + \$(stat -c %s "\$a")))
  prev=\$a
done
start=\$(date +%s.%N)
/usr/bin/time -f '%U %S %M' -o "\$\$.time" "$BIN/$tool" "\$@"; rc=\$?
end=\$(date +%s.%N)
step=$tool; case " \$* " in *" train "*) step="wordpiece-train";; esac
[ $tool = mkpretrain ] && case " \$* " in
  *"/phase1/"*) step="mkpretrain-p1";; *"/phase2/"*) step="mkpretrain-p2";; *"/eval/"*) step="mkpretrain-eval";;
esac
echo "\$step \$start \$end \$(cat "\$\$.time") \$in" >> "\$STEPS_LOG"
rm -f "\$\$.time"
exit \$rc
EOF
  chmod +x "$WORK/bin/$tool"
done

# One path through Makefile.data, measured: MASKING=static (masks fixed in the data, create_pretraining_data.py's
# way) or dynamic (unmasked instances at dupe factor 1, masked by bert-train's loader at every epoch).
measure() {
export STEPS_LOG=$WORK/steps-$1.log
# Disk: sampled every second while make runs.
( while sleep 1; do du -sb "$WORK/out-$1" 2>/dev/null | cut -f1; done > "$WORK/disk-$1.log" ) &
sampler=$!
t0=$(date +%s.%N)
make -s -f "$SRC/Makefile.data" -j "$JOBS" DUMP="$WORK/dump.xml.bz2" OUT="$WORK/out-$1" BIN="$WORK/bin" \
  THREADS="$JOBS" MASKING="$1" ${MAKE_VARS:-} > "$WORK/make-$1.log" 2>&1 || { cat "$WORK/make-$1.log"; exit 1; }
t1=$(date +%s.%N)
kill $sampler 2>/dev/null || true
sampler=
final=$(du -sb "$WORK/out-$1" | cut -f1)
# bin4's part that --threads does not spread: its reading thread and its calling thread (dealing, appending, the
# writers' HDF5 calls) run side by side, so the busier of the two bounds it; measured in process on the same data
# (tests/bin4_probe) as a share of the whole process's CPU.
bin4_serial_share=$("$BIN4_PROBE" "$JOBS" "$WORK/bin4-probe" "$WORK"/out-$1/phase2/*.hdf5 |
  "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin)
print(max(d["main_thread_cpu_s"], d["reading_thread_cpu_s"]) / d["process_cpu_s"])')
rm -rf "$WORK/bin4-probe"
dump_bytes=$(wc -c < "$WORK/dump.xml.bz2")
xml_bytes=$(bzcat "$WORK/dump.xml.bz2" | wc -c)

echo "== MASKING=$1"
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), make -j $JOBS, THREADS=$JOBS"
awk -v total="$(echo "$t1 - $t0" | bc)" -v xml="$xml_bytes" -v bz="$dump_bytes" -v node="$NODE" -v cores="$(nproc)" \
    -v bin4_serial_share="$bin4_serial_share" -v enwiki_text="$ENWIKI_TEXT_GB" \
    -v enwiki="$ENWIKI_XML_GB" -v label="$1" -v totals="$WORK/total-$1" -v disk="$(sort -n "$WORK/disk-$1.log" | tail -1)" -v final="$final" '
{ s = $1; if (s == "wiki-clean") $7 = xml  # its input counted as XML, not as .bz2 bytes
  if (!(s in first) || $2 < first[s]) first[s] = $2; if ($3 > last[s]) last[s] = $3
  cpu[s] += $4 + $5; if ($6 > rss[s]) rss[s] = $6; inb[s] += $7; n[s]++
  if (!(s in seen)) { order[++k] = s; seen[s] = 1 } }
END {
  # wiki-clean scales with the XML; every later step with the cleaned text (sent-seg reads all of it).
  scale = enwiki * 1e9 / xml; text_scale = enwiki_text * 1e9 / inb["sent-seg"]
  printf "dump: %.0f MB of XML, %.0f MB as multistream .bz2; whole run %.1f s wall (%.1f MB/s of XML)\n", xml / 1e6, bz / 1e6, total, xml / 1e6 / total
  printf "%-16s %5s %9s %8s %8s %9s %11s %6s %9s %11s\n", "step", "runs", "input MB", "wall s", "cpu s", "MB/s", "MB/cpu-s", "share", "peak RSS", "enwiki@" node
  for (i = 1; i <= k; i++) {
    s = order[i]; w = last[s] - first[s]
    # Projection: the CPU seconds of the step scaled to the enwiki dump, spread over the cores of the node; shard
    # runs on one core (one process, no threads), so its time is not divided; the deflate of bin4 spreads over
    # --threads, the rest of it (bin4_serial_share of its CPU: the busier of its reading and calling threads) does not.
    f = s == "wiki-clean" ? scale : text_scale
    if (s == "bin4") proj = cpu[s] * (bin4_serial_share + (1 - bin4_serial_share) / node) * f
    else proj = cpu[s] * f / (s == "shard" ? 1 : node)
    tp += proj
    printf "%-16s %5d %9.1f %8.1f %8.1f %9.1f %11.1f %5.1f%% %7.0f MB %9.1f min\n", s, n[s], inb[s] / 1e6, w, cpu[s],
           inb[s] / 1e6 / (w > 0 ? w : 1e-3), inb[s] / 1e6 / (cpu[s] > 0 ? cpu[s] : 1e-3), 100 * w / total, rss[s] / 1024, proj / 60
    tc += cpu[s]
  }
  printf "CPU seconds in all: %.1f (%.2f of %d cores busy on average)\n", tc, tc / total / cores, cores
  printf "disk: peak %.0f MB, final %.0f MB (%.2f and %.2f times the XML)\n", disk / 1e6, final / 1e6, disk / xml, final / xml
  printf "bin4: the busier of its reading and calling threads (not spread by --threads) %.0f%% of its CPU\n", 100 * bin4_serial_share
  printf "total %s %.2f %.3f\n", label, tp / 60, disk * text_scale / 1e9 > totals
  printf "projection to %d GB of XML (x%.0f) and %d GB of text (x%.0f) on %d cores, CPU time / cores per step (shard: / 1; bin4: its busier serial thread / 1): %.1f min in all; disk about %.0f GB\n", enwiki, scale, enwiki_text, text_scale, node, tp / 60, disk * text_scale / 1e9
}' "$WORK/steps-$1.log"
}
measure static
measure dynamic
read -r _ _ static_min static_gb < "$WORK/total-static"
read -r _ _ dynamic_min dynamic_gb < "$WORK/total-dynamic"
awk -v sm="$static_min" -v sg="$static_gb" -v dm="$dynamic_min" -v dg="$dynamic_gb" -v node="$NODE" 'BEGIN {
  printf "dynamic vs static, projected to enwiki on %d cores: %.1f vs %.1f min (%.2fx), peak disk %.0f vs %.0f GB (%.2fx)\n",
         node, dm, sm, dm / sm, dg, sg, dg / sg }'
