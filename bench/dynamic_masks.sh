#!/usr/bin/env bash
# Dynamic masking's own cost: sequences masked per second on one core by the loader's draw
# (pretraining_data/dynamic_masks.h), against google-research/bert's create_masked_lm_predictions doing the same
# work (the same rule, samples and random streams: the ratio that counts) and HF's DataCollatorForLanguageModeling
# (torch_mask_tokens: an independent 15% coin per token, 80/10/10, on a padded batch: the field's usual loader,
# a different rule, for scale), all measured in this run.
#   bench/dynamic_masks.sh [BUILD_DIR] [EPOCHS]
# Samples: mkpretrain's instances of the fixtures' sample_text.txt at 128 tokens (dupe factor 80), unmasked.
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with bert-tensorflow and transformers).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
EPOCHS=${2:-20}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
HELPER=$BUILD/tests/data_test_helper
export TF_CPP_MIN_LOG_LEVEL=3
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
[ -x "$HELPER" ] || { echo "no $HELPER; build the data_test_helper target first" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BUILD/tools/mkpretrain" -q --vocab "$VOCAB" --max-seq-length 128 --max-predictions 20 --dupe-factor 80 \
  -o "$TMP/d.hdf5" "$FIXTURES/pretraining_text/sample_text.txt"
PYTHONPATH=$SRC/tests/compat "$PYTHON" - "$TMP/d.hdf5" >"$TMP/samples.txt" <<'PY'
import sys
from reference_masking import unmasked_samples
for row, sample in enumerate(unmasked_samples(sys.argv[1])):
    print(row, 0, *sample)
PY
SAMPLES=$(wc -l <"$TMP/samples.txt")
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "samples: $SAMPLES of up to 128 tokens, $EPOCHS epochs each; one thread on every side"
best() {  # best of three runs of the helper: its sequences_per_second
  local b=0 r
  for _ in 1 2 3; do
    r=$("$HELPER" dynamic-masks-bench "$VOCAB" "$1" "$2" "$EPOCHS" "${@:3}" <"$TMP/samples.txt" |
      awk '$1 == "sequences_per_second" { print $2 }')
    b=$(awk -v a="$b" -v r="$r" 'BEGIN { print (r > a ? r : a) }')
  done
  echo "$b"
}
OURS=$(best 0.15 20)
WWM=$(best 0.15 20 --whole-word-mask)
M30=$(best 0.3 40)
"$PYTHON" - "$TMP/samples.txt" "$VOCAB" "$OURS" "$WWM" "$M30" <<'PY'
import random, sys, time
samples = [list(map(int, line.split()[2:])) for line in open(sys.argv[1])]
ours, wwm, m30 = map(float, sys.argv[3:6])
print(f"bertkit dynamic masks, 15%:          {ours:>10,.0f} sequences/s")
print(f"bertkit dynamic masks, whole words:  {wwm:>10,.0f} sequences/s")
print(f"bertkit dynamic masks, 30%:          {m30:>10,.0f} sequences/s")
try:
    from bert import create_pretraining_data as reference, tokenization
    vocab = tokenization.load_vocab(sys.argv[2])
    inverse = {i: t for t, i in vocab.items()}
    words = list(vocab.keys())
    tokens = [[inverse[t] for t in s] for s in samples]
    start, n = time.perf_counter(), 0
    for e in range(3):
        for i, t in enumerate(tokens):
            reference.create_masked_lm_predictions(t, 0.15, 20, words, random.Random(7 * 2**96 + e * 2**64 + i))
            n += 1
    google = n / (time.perf_counter() - start)
    print(f"create_masked_lm_predictions, 15%:   {google:>10,.0f} sequences/s")
    print(f"ratio (counts): bertkit / google-research/bert = {ours / google:.1f}x")
except Exception as e:  # noqa: BLE001
    print(f"google-research/bert: not measured ({e})")
try:
    import torch
    from transformers import BertTokenizerFast, DataCollatorForLanguageModeling
    torch.set_num_threads(1)
    collator = DataCollatorForLanguageModeling(BertTokenizerFast(vocab_file=sys.argv[2]), mlm_probability=0.15)
    batches = [samples[k:k + 256] for k in range(0, len(samples), 256)]
    padded = []
    for b in batches:
        width = max(map(len, b))
        padded.append(torch.tensor([s + [0] * (width - len(s)) for s in b]))
    start, n = time.perf_counter(), 0
    for _ in range(3):
        for b in padded:
            collator.torch_mask_tokens(b.clone())
            n += len(b)
    hf = n / (time.perf_counter() - start)
    print(f"HF torch_mask_tokens (Bernoulli):    {hf:>10,.0f} sequences/s")
    print(f"ratio (for scale: another rule): bertkit / HF collator = {ours / hf:.1f}x")
except Exception as e:  # noqa: BLE001
    print(f"HF collator: not measured ({e})")
PY
