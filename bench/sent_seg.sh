#!/usr/bin/env bash
# sent-seg --threads 1 against NLTK punkt (one Python process) on the same text: MLPerf's WikiExtractor sample
# (wiki_00) as paragraphs, repeated REPEAT times. Prints both times, MB/s and the ratio. Not a test.
#   bench/sent_seg.sh            (env: BIN=build/tools PYTHON=venv python FIXTURES=../shared/fixtures REPEAT=20)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${SRC:-$(dirname "$HERE")}
BIN=${BIN:-$SRC/build/tools}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
REPEAT=${REPEAT:-20}
RUNS=${RUNS:-3}
[ -x "$BIN/sent-seg" ] || { echo "no $BIN/sent-seg (set BIN)" >&2; exit 1; }
exec "$PYTHON" "$HERE/sent_seg_punkt.py" --sent-seg "$BIN/sent-seg" --repeat "$REPEAT" --runs "$RUNS" \
  "$FIXTURES/wiki/mlperf-extracted/wiki_00"
