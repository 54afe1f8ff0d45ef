#!/usr/bin/env bash
# bert-finetune features against google-research/bert run_squad.py (PyPI bert-tensorflow) on xquad.en.json (1190
# SQuAD v1.1 questions), the defaults (384/128/64, uncased), in one run: the reference's read_squad_examples +
# convert_examples_to_features timed inside its Python process (TensorFlow's import and the tokenizer's vocabulary
# left out; once with a no-op output_fn, once writing through its FeatureWriter), ours as a whole process
# (vocabulary, JSON, features, TFRecord out), median of RUNS. Prints the seconds, the ratios and whether the records
# are identical.
#   bench/finetune_features.sh [BUILD_DIR] [--train]
# Environment: FIXTURES (default ../shared/fixtures), PYTHON (the venv with bert-tensorflow and tensorflow-cpu),
# RUNS (default 5).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
TRAIN=${2:-}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
TF_CPP_MIN_LOG_LEVEL=3 "$PYTHON" - "$BUILD/tools/bert-finetune" "$FIXTURES" "$TMP" "${RUNS:-5}" "$TRAIN" <<'PY' 2>/dev/null
import os, random, statistics, subprocess, sys, time, types
tool, fixtures, tmp, runs, train = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "--train"
vocab, squad = f"{fixtures}/vocab/bert-base-uncased-vocab.txt", f"{fixtures}/squad/xquad.en.json"

import tensorflow as tf
from absl import flags
contrib = types.ModuleType("tensorflow.contrib")  # the packaged modeling.py imports it; the features never use it
contrib.layers = types.ModuleType("tensorflow.contrib.layers")
sys.modules.setdefault("tensorflow.contrib", contrib)
sys.modules.setdefault("tensorflow.contrib.layers", contrib.layers)
from bert import run_squad, tokenization
flags.FLAGS.mark_as_parsed()

tokenizer = tokenization.FullTokenizer(vocab_file=vocab, do_lower_case=True)
def reference(output_fn):
    start = time.perf_counter()
    examples = run_squad.read_squad_examples(input_file=squad, is_training=train)
    if train:
        random.Random(12345).shuffle(examples)
    run_squad.convert_examples_to_features(examples=examples, tokenizer=tokenizer, max_seq_length=384, doc_stride=128,
                                           max_query_length=64, is_training=train, output_fn=output_fn)
    return time.perf_counter() - start
features = []
convert_only = reference(features.append)
writer = run_squad.FeatureWriter(filename=f"{tmp}/ref.tfrecord", is_training=train)
convert_write = reference(writer.process_feature)
writer.close()

ours = []
for i in range(runs):
    start = time.perf_counter()
    subprocess.run([tool, "features", "-q", "-f", "--task", "squad", "--vocab", vocab, "-o", f"{tmp}/ours.tfrecord"]
                   + (["--train"] if train else []) + [squad], check=True)
    ours.append(time.perf_counter() - start)
wall = statistics.median(ours)

def load(p):
    return [{k: list(v.int64_list.value) for k, v in tf.train.Example.FromString(r.numpy()).features.feature.items()}
            for r in tf.data.TFRecordDataset(p)]
a, b = load(f"{tmp}/ref.tfrecord"), load(f"{tmp}/ours.tfrecord")
same = sum(x == y for x, y in zip(a, b))
print(f"xquad.en.json, {'training' if train else 'evaluation'} features, L=384 S=128 Q=64, uncased: "
      f"{len(features)} features")
print(f"run_squad.py read + convert_examples_to_features:                {convert_only:7.3f} s")
print(f"run_squad.py read + convert_examples_to_features + FeatureWriter: {convert_write:7.3f} s")
print(f"bert-finetune features, whole process (median of {runs}):           {wall:7.3f} s")
print(f"ratio: {convert_only / wall:.0f}x (convert only), {convert_write / wall:.0f}x (with writing)   "
      f"identical records: {same}/{len(a)} (ours {len(b)})")
PY
