#!/usr/bin/env bash
# The text half as one streaming pipe: a compressed dump in, sentence-per-line shards out, no intermediate files.
#   pipelines/stream-text.sh DUMP.xml.bz2 OUTDIR [THREADS]
# wiki-clean and sent-seg stream (bounded memory); shard reads its input twice (sizes, then documents),
# so the pipe ends in a file. BIN: the tools' directory (default: the checkout's build/tools, an installation's
# bin/, or PATH: pipelines/tools-dir.sh).
set -euo pipefail
dump=${1:?usage: stream-text.sh DUMP OUTDIR [THREADS]}
out=${2:?usage: stream-text.sh DUMP OUTDIR [THREADS]}
threads=${3:-0}
source "$(dirname "$0")/tools-dir.sh" wiki-clean
mkdir -p "$out"
"$BIN/wiki-clean" -q --threads "$threads" - <"$dump" \
  | "$BIN/sent-seg" -q --threads "$threads" -o "$out/sentences.txt" -f -
"$BIN/shard" -f --training-shards "${TRAIN_SHARDS:-8}" --test-shards "${TEST_SHARDS:-1}" \
  --test-fraction "${TEST_FRACTION:-0.05}" --seed "${SEED:-12345}" -o "$out/wiki" "$out/sentences.txt"
