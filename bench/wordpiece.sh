#!/usr/bin/env bash
# Tokens per second of `wordpiece encode` against Hugging Face tokenizers (Rust WordPiece), same text, same
# vocabulary, one run; single thread and all threads, with the ratio per core and the line agreement.
#   bench/wordpiece.sh [BUILD_DIR] [MEGABYTES]
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with `tokenizers`), TEXT, VOCAB.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
MB=${2:-20}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
TEXT=${TEXT:-$FIXTURES/wiki/mlperf-extracted/wiki_00}
VOCAB=${VOCAB:-$FIXTURES/vocab/bert-base-uncased-vocab.txt}
[ -x "$BUILD/tools/wordpiece" ] || { echo "no $BUILD/tools/wordpiece; build it first" >&2; exit 1; }
"$PYTHON" -c "import tokenizers" 2>/dev/null || { echo "$PYTHON has no tokenizers package" >&2; exit 1; }
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec "$PYTHON" "$SRC/bench/tokenizer_bench.py" --kind wordpiece --tool "$BUILD/tools/wordpiece" --vocab "$VOCAB" \
  --text "$TEXT" --mb "$MB"
