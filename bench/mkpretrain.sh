#!/usr/bin/env bash
# mkpretrain against google-research/bert create_pretraining_data.py (PyPI bert-tensorflow), same input, same
# flags, one process each, in one run: prints wall and CPU times, the ratios, and whether the instances are identical.
#   bench/mkpretrain.sh [BUILD_DIR] [KILOBYTES_OF_TEXT]
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with bert-tensorflow and tensorflow-cpu),
# RUNS (how many times ours runs; default 5).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
KB=${2:-1000}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
# Input: the MLPerf WikiExtractor sample as documents (paragraph lines, a blank line after each document), cut
# or repeated to the requested size.
awk '/^<doc /{t=1; next} /^<\/doc>/{print ""; next} t{t=0; next} NF' "$FIXTURES/wiki/mlperf-extracted/wiki_00" >"$TMP/one.txt"
: >"$TMP/input.txt"
while [ "$(wc -c <"$TMP/input.txt")" -lt $((KB * 1000)) ]; do cat "$TMP/one.txt" >>"$TMP/input.txt"; done
head -c $((KB * 1000)) "$TMP/input.txt" | awk '{print} END{print ""}' >"$TMP/in.txt"
echo "input: $(wc -c <"$TMP/in.txt") bytes; flags: --max-seq-length 128 --max-predictions 20 --masked-lm-prob 0.15 --seed 12345 --dupe-factor 5"

# Both programs are timed by the same Python parent (os.wait4 gives each child's own CPU time and peak RSS, to
# the microsecond). The reference runs once (it takes seconds); ours runs RUNS times and the median is reported.
TF_CPP_MIN_LOG_LEVEL=3 "$PYTHON" - "$PYTHON" "$BUILD/tools/mkpretrain" "$VOCAB" "$TMP" "${RUNS:-5}" <<'PY' 2>/dev/null
import os, statistics, subprocess, sys, time
python, mkpretrain, vocab, tmp, runs = sys.argv[1:]
inp = os.path.join(tmp, "in.txt")

def timed(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024

ref_out = os.path.join(tmp, "ref.tfrecord")
reference = timed([python, "-m", "bert.create_pretraining_data", f"--input_file={inp}", f"--output_file={ref_out}",
                   f"--vocab_file={vocab}", "--do_lower_case=True", "--max_seq_length=128",
                   "--max_predictions_per_seq=20", "--masked_lm_prob=0.15", "--random_seed=12345", "--dupe_factor=5"])
ours_runs = []
for i in range(int(runs)):
    out = os.path.join(tmp, f"ours{i}.tfrecord")
    ours_runs.append(timed([mkpretrain, "-q", "--vocab", vocab, "--max-seq-length", "128", "--max-predictions", "20",
                            "--masked-lm-prob", "0.15", "--seed", "12345", "--dupe-factor", "5", "-t", "1",
                            "-o", out, inp]))
wall = statistics.median(r[0] for r in ours_runs)
cpu = statistics.median(r[1] for r in ours_runs)
peak = max(r[2] for r in ours_runs)

import tensorflow as tf
def load(p):
    return [{k: list(v.int64_list.value) or list(v.float_list.value)
             for k, v in tf.train.Example.FromString(r.numpy()).features.feature.items()}
            for r in tf.data.TFRecordDataset(p)]
a, b = load(ref_out), load(os.path.join(tmp, "ours0.tfrecord"))
same = sum(x == y for x, y in zip(a, b))
mb = os.path.getsize(inp) / 1e6
print(f"create_pretraining_data.py:        {reference[0]:8.3f} s wall {reference[1]:8.3f} s CPU   peak RSS {reference[2]:.0f} MB")
print(f"mkpretrain (1 thread, median of {runs}): {wall:8.3f} s wall {cpu:8.3f} s CPU   peak RSS {peak:.0f} MB "
      f"({peak / mb:.1f} MB per MB of input)")
print(f"ratio: {reference[0] / wall:.0f}x wall, {reference[1] / cpu:.0f}x CPU   identical instances: {same}/{len(a)} "
      f"(ours {len(b)})")
PY
