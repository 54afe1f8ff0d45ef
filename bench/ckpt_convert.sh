#!/usr/bin/env bash
# Conversion time for a BERT-base-sized TF1 checkpoint (12 layers, hidden 768, vocab 30522: 110 M parameters,
# 440 MB of float32; optimizer slots left out), against the usual Python route measured in the same run:
# TensorFlow's checkpoint reader + NumPy transposes + safetensors' save_file.
#   bench/ckpt_convert.sh [BUILD_DIR]
# The checkpoint is written by TensorFlow (random values, google-research/bert's variable names and shapes).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
PYTHON=${PYTHON:-$HOME/.cache/bertkit/venv/bin/python}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
TOOL=$BUILD/tools/ckpt-convert
[ -x "$TOOL" ] || { echo "no $TOOL; build with -DBERTKIT_WITH_TORCH=ON" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TF_CPP_MIN_LOG_LEVEL=3

"$PYTHON" - "$TMP/base" <<'PY' 2>/dev/null
import json, os, sys
import numpy as np
import tensorflow as tf
out = sys.argv[1]
os.makedirs(out)
H, I, L, V, P = 768, 3072, 12, 30522, 512
shapes = {"bert/embeddings/word_embeddings": [V, H], "bert/embeddings/position_embeddings": [P, H],
          "bert/embeddings/token_type_embeddings": [2, H], "bert/embeddings/LayerNorm/gamma": [H],
          "bert/embeddings/LayerNorm/beta": [H], "bert/pooler/dense/kernel": [H, H], "bert/pooler/dense/bias": [H],
          "cls/predictions/transform/dense/kernel": [H, H], "cls/predictions/transform/dense/bias": [H],
          "cls/predictions/transform/LayerNorm/gamma": [H], "cls/predictions/transform/LayerNorm/beta": [H],
          "cls/predictions/output_bias": [V], "cls/seq_relationship/output_weights": [2, H],
          "cls/seq_relationship/output_bias": [2]}
for l in range(L):
    p = f"bert/encoder/layer_{l}/"
    for n in ("attention/self/query", "attention/self/key", "attention/self/value", "attention/output/dense"):
        shapes[p + n + "/kernel"], shapes[p + n + "/bias"] = [H, H], [H]
    shapes[p + "intermediate/dense/kernel"], shapes[p + "intermediate/dense/bias"] = [H, I], [I]
    shapes[p + "output/dense/kernel"], shapes[p + "output/dense/bias"] = [I, H], [H]
    for n in ("attention/output/LayerNorm", "output/LayerNorm"):
        shapes[p + n + "/gamma"], shapes[p + n + "/beta"] = [H], [H]
rng = np.random.default_rng(0)
tf.compat.v1.disable_eager_execution()
with tf.Graph().as_default():
    vs = [tf.compat.v1.Variable(rng.standard_normal(s, dtype=np.float32) * 0.02, name=n) for n, s in shapes.items()]
    vs.append(tf.compat.v1.Variable(np.int64(1000), name="global_step"))
    with tf.compat.v1.Session() as s:
        s.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver(vs).save(s, out + "/bert_model.ckpt", write_meta_graph=False)
json.dump({"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": H,
           "initializer_range": 0.02, "intermediate_size": I, "max_position_embeddings": P, "num_attention_heads": 12,
           "num_hidden_layers": L, "type_vocab_size": 2, "vocab_size": V}, open(out + "/bert_config.json", "w"))
PY
CKPT=$TMP/base/bert_model.ckpt
cp "$FIXTURES/vocab/bert-base-uncased-vocab.txt" "$TMP/base/vocab.txt"  # the tokenizer files hf output carries
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "input: BERT-base TF1 checkpoint, $(du -m "$CKPT".data-* | cut -f1) MB data (page cache warm)"
cat "$CKPT".data-* > /dev/null

now() { date +%s.%N; }
best() {  # best of three wall times of "$@"
  local b=999999 t0 t1
  for _ in 1 2 3; do
    rm -rf "$TMP/out" "$TMP/out.pt" "$TMP/out.st"
    t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
    b=$(awk -v a="$b" -v d="$(awk -v x="$t0" -v y="$t1" 'BEGIN{print y-x}')" 'BEGIN{print (d<a)?d:a}')
  done
  echo "$b"
}
OURS_HF=$(best "$TOOL" -q --to hf -o "$TMP/out" "$CKPT")
OURS_NATIVE=$(best "$TOOL" -q --to native -o "$TMP/out" "$CKPT")
OURS_PT=$(best "$TOOL" -q --to pt -o "$TMP/out.pt" "$CKPT")
PEER=$(best "$PYTHON" -c '
import sys, numpy as np, tensorflow as tf
from safetensors.numpy import save_file
r = tf.train.load_checkpoint(sys.argv[1]); out = {}
for n in r.get_variable_to_shape_map():
    if n == "global_step": continue
    t = r.get_tensor(n)
    out[n] = np.ascontiguousarray(t.T) if n.endswith("kernel") else t
save_file(out, sys.argv[2])' "$CKPT" "$TMP/out.st")
printf 'ckpt-convert --to hf:     %6.2f s\n' "$OURS_HF"
printf 'ckpt-convert --to native: %6.2f s\n' "$OURS_NATIVE"
printf 'ckpt-convert --to pt:     %6.2f s\n' "$OURS_PT"
printf 'TensorFlow + safetensors: %6.2f s (python start and TF import included)\n' "$PEER"
awk -v o="$OURS_HF" -v p="$PEER" 'BEGIN { printf "ratio (peer / ours, hf): %.2fx\n", p / o }'
