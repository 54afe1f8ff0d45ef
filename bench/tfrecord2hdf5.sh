#!/usr/bin/env bash
# tfrecord2hdf5 throughput against a plain copy of the same bytes (cp), in one run.
#   bench/tfrecord2hdf5.sh [BUILD_DIR] [COPIES]
# Input: the MRPC classifier records and the sample_text pretraining records, concatenated COPIES times.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
COPIES=${2:-40}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for _ in $(seq "$COPIES"); do cat "$FIXTURES/tfrecord/mrpc-run_classifier/train.tf_record"; done >"$TMP/mrpc.tfrecord"
for _ in $(seq $((COPIES * 40))); do cat "$FIXTURES/tfrecord/sample_text-pretraining/BiaoLiu2017-bert.tf_examples.tfrecord"; done >"$TMP/pre.tfrecord"
now() { date +%s.%N; }
for name in mrpc pre; do
  f=$TMP/$name.tfrecord
  mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN{printf "%.1f", b/1e6}')
  cat "$f" >/dev/null  # both runs start with the file in the page cache
  t0=$(now); cp "$f" "$TMP/copy"; t1=$(now)
  "$BUILD/tools/tfrecord2hdf5" -q -f -o "$TMP/out.hdf5" "$f"; t2=$(now)
  awk -v n="$name" -v mb="$mb" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN{
    cp = mb / (b - a); conv = mb / (c - b)
    printf "%-5s %7.1f MB   cp %8.0f MB/s   tfrecord2hdf5 %6.0f MB/s   ratio %.2f of a plain copy\n", n, mb, cp, conv, conv / cp }'
  rm -f "$TMP/copy" "$TMP/out.hdf5"
done
