#!/usr/bin/env bash
# mkpretrain against google-research/bert create_pretraining_data.py (PyPI bert-tensorflow), same input, same
# flags, one process each, in one run: prints both wall times, the ratio, and whether the instances are identical.
#   bench/mkpretrain.sh [BUILD_DIR] [KILOBYTES_OF_TEXT]
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with bert-tensorflow and tensorflow-cpu).
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
FLAGS=(--max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5)
echo "input: $(wc -c <"$TMP/in.txt") bytes; flags: ${FLAGS[*]}"

t0=$(date +%s.%N)
TF_CPP_MIN_LOG_LEVEL=3 /usr/bin/time -f "%U %S" -o "$TMP/ref_cpu" "$PYTHON" -m bert.create_pretraining_data --input_file="$TMP/in.txt" --output_file="$TMP/ref.tfrecord" \
  --vocab_file="$VOCAB" --do_lower_case=True "${FLAGS[@]}" >/dev/null 2>&1
t1=$(date +%s.%N)
/usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$BUILD/tools/mkpretrain" -q --vocab "$VOCAB" --max-seq-length 128 --max-predictions 20 \
  --masked-lm-prob 0.15 --seed 12345 --dupe-factor 5 -t 1 -o "$TMP/ours.tfrecord" "$TMP/in.txt"
t2=$(date +%s.%N)
TF_CPP_MIN_LOG_LEVEL=3 "$PYTHON" - "$TMP/ref.tfrecord" "$TMP/ours.tfrecord" "$t0" "$t1" "$t2" "$TMP/rss" "$TMP/in.txt" "$TMP/ref_cpu" <<'PY' 2>/dev/null
import os, sys
import tensorflow as tf
ref, ours, t0, t1, t2, rss, inp, ref_cpu = sys.argv[1:]
def load(p):
    return [{k: list(v.int64_list.value) or list(v.float_list.value)
             for k, v in tf.train.Example.FromString(r.numpy()).features.feature.items()}
            for r in tf.data.TFRecordDataset(p)]
a, b = load(ref), load(ours)
same = sum(x == y for x, y in zip(a, b))
reference, mine = float(t1) - float(t0), float(t2) - float(t1)
mb = os.path.getsize(inp) / 1e6
rss_kb, user, system = open(rss).read().split()[-3:]
peak = int(rss_kb) / 1024
mine_cpu = float(user) + float(system)
ref_user, ref_system = open(ref_cpu).read().split()[-2:]
reference_cpu = float(ref_user) + float(ref_system)
print(f"create_pretraining_data.py: {reference:8.2f} s wall {reference_cpu:8.2f} s CPU")
print(f"mkpretrain (1 thread):      {mine:8.2f} s wall {mine_cpu:8.2f} s CPU   peak RSS {peak:.0f} MB ({peak / mb:.1f} MB per MB of input)")
print(f"ratio: {reference / mine:.0f}x wall, {reference_cpu / mine_cpu:.0f}x CPU   identical instances: {same}/{len(a)} (ours {len(b)})")
PY
