#!/usr/bin/env bash
# Tokens and megabytes per second of `bpe encode` against Hugging Face tokenizers (Rust BPE) with the same
# tokenizer.json on the same text, one run; single thread and all threads, with the ratio per core and the line
# agreement (which must be total). The tokenizer is learned first by `bpe train` from the text's source
# (RoBERTa's size), unless TOKENIZER names one.
#   bench/bpe.sh [BUILD_DIR] [MEGABYTES]
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with `tokenizers`), TEXT, TOKENIZER.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
MB=${2:-20}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
TEXT=${TEXT:-$FIXTURES/wiki/mlperf-extracted/wiki_00}
[ -x "$BUILD/tools/bpe" ] || { echo "no $BUILD/tools/bpe; build it first" >&2; exit 1; }
"$PYTHON" -c "import tokenizers" 2>/dev/null || { echo "$PYTHON has no tokenizers package" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -z "${TOKENIZER:-}" ]; then
  TOKENIZER=$TMP/tokenizer.json
  "$BUILD/tools/bpe" train -q --vocab-size 50265 -o "$TOKENIZER" "$TEXT"
fi
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$PYTHON" "$SRC/bench/tokenizer_bench.py" --kind bpe --tool "$BUILD/tools/bpe" --vocab "$TOKENIZER" \
  --text "$TEXT" --mb "$MB"
