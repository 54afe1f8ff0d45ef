"""ckpt-convert against the real peers: TensorFlow reads the TF1 checkpoints, HF transformers loads our conversions.

- --list equals TensorFlow's inspect_checkpoint output and tf.train.list_variables (names, dtypes, shapes).
- Every converted tensor equals TensorFlow's value of its variable (transposed for kernels), bit for bit.
- HF BertForPreTraining loads --to hf strictly (no missing/unexpected keys); its logits equal those of a NumPy
  forward pass run directly on the TF variables with google-research/bert's modeling.py semantics (transformers
  5.x no longer ships a TF checkpoint loader, and bert-tensorflow's modeling.py needs tf.contrib, gone in TF 2).
- native -> hf -> native is byte-identical; the .pt loads with torch.load (weights_only True and False) and its
  'model' dict equals HF's state_dict(); --pad-vocab 8 pads with zero rows.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from compat_common import BIN, FIXTURES, skip  # noqa: E402

TOOL = os.path.join(BIN, "ckpt-convert")
TINY = os.path.join(FIXTURES, "tf_checkpoint", "keras-bert-tiny", "bert_model.ckpt")
RELEASE = os.path.join(FIXTURES, "tf_checkpoint", "uncased_L-2_H-128_A-2.index-only", "bert_model.ckpt")
if not os.access(TOOL, os.X_OK) or not os.path.exists(TINY + ".index"):
    skip("ckpt-convert not built or fixtures missing")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
from safetensors.numpy import load_file  # noqa: E402
from transformers import BertForPreTraining  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def convert(*args):
    subprocess.run([TOOL, "-q", *args], check=True)


# --- listing ---------------------------------------------------------------------------------------------------
for prefix in (TINY, RELEASE):
    ours = subprocess.run([TOOL, "--list", prefix], check=True, capture_output=True, text=True).stdout
    lines = [line for line in ours.splitlines() if " (" in line]
    theirs = tf.train.list_variables(prefix)
    check([(n, s) for n, s in theirs] ==
          [(line.split(" (")[0], json.loads(line.split(") ")[1])) for line in lines],
          f"--list names and shapes = tf.train.list_variables ({len(theirs)} tensors, {os.path.basename(os.path.dirname(prefix))})")
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    check(all(line.split(" (")[1].split(")")[0] == "DT_" + dtypes[line.split(" (")[0]].name.upper()
              .replace("FLOAT32", "FLOAT").replace("FLOAT16", "HALF") for line in lines),
          "--list dtypes = TensorFlow's")
inspect = subprocess.run([sys.executable, "-m", "tensorflow.python.tools.inspect_checkpoint", "--file_name=" + TINY],
                         check=True, capture_output=True, text=True).stdout
ours = subprocess.run([TOOL, "--list", TINY], check=True, capture_output=True, text=True).stdout
check(ours == inspect, "--list output = inspect_checkpoint output, byte for byte")

# --- conversion ------------------------------------------------------------------------------------------------
tmp = tempfile.mkdtemp(prefix="ckpt-convert-compat-")
native, hf, native2, pt, padded = (os.path.join(tmp, n) for n in ("native", "hf", "native2", "model.pt", "hf8"))
convert("--to", "native", "--keep-optimizer", "-o", native, TINY)
convert("--to", "hf", "-o", hf, native)
convert("--to", "native", "-o", native2, hf)
convert("--to", "pt", "-o", pt, TINY)
convert("--to", "hf", "--pad-vocab", "8", "-o", padded, TINY)

# Each tensor against TensorFlow's value, with the mapping of DESIGN.md spelled out independently here.
reader = tf.train.load_checkpoint(TINY)


def tf_name(hf_name):
    n = hf_name
    transpose = False
    if n == "cls.predictions.bias":
        return "cls/predictions/output_bias", False
    if n.startswith("cls.seq_relationship."):
        return "cls/seq_relationship/output_" + ("weights" if n.endswith("weight") else "bias"), False
    parts = n.split(".")
    out = []
    i = 0
    while i < len(parts):
        if parts[i] == "layer" and i + 1 < len(parts) and parts[i + 1].isdigit():
            out.append("layer_" + parts[i + 1])
            i += 2
            continue
        out.append(parts[i])
        i += 1
    last = out.pop()
    if out[-1] == "LayerNorm":
        out.append("gamma" if last == "weight" else "beta")
    elif out[-1].endswith("_embeddings"):
        pass
    elif last == "weight":
        out.append("kernel")
        transpose = True
    else:
        out.append("bias")
    return "/".join(out), transpose


ours = load_file(os.path.join(native, "model.safetensors"))
exact = True
for name, value in ours.items():
    tname, transpose = tf_name(name)
    ref = reader.get_tensor(tname)
    exact &= np.array_equal(value, ref.T if transpose else ref) and value.dtype == np.float32
check(exact and len(ours) == 46, f"all {len(ours)} native tensors equal TensorFlow's values (kernels transposed)")
opt = load_file(os.path.join(native, "optimizer.safetensors"))
moments_ok = len(opt) == 92
for name, value in opt.items():
    base, slot = name.rsplit(".", 1)
    tname, transpose = tf_name(base)
    ref = reader.get_tensor(tname + ("/adam_m" if slot == "exp_avg" else "/adam_v"))
    moments_ok &= np.array_equal(value, ref.T if transpose else ref)
check(moments_ok, f"--keep-optimizer: {len(opt)} Adam moments equal adam_m / adam_v")

same = all(open(os.path.join(native, f), "rb").read() == open(os.path.join(native2, f), "rb").read()
           for f in ("model.safetensors", "config.json"))
check(same, "native -> hf -> native is byte-identical (model.safetensors, config.json)")

model, info = BertForPreTraining.from_pretrained(hf, output_loading_info=True)
model.eval()
check(not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"],
      f"transformers loads --to hf strictly: {info}")

# NumPy forward on the TF variables (google-research/bert modeling.py: x @ kernel + bias, post-LN, erf GELU).
cfg = json.load(open(os.path.join(os.path.dirname(TINY), "bert_config.json")))
T = reader.get_tensor
from math import erf, sqrt  # noqa: E402

erf_v = np.vectorize(erf)


def layer_norm(x, scope):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * T(scope + "/gamma") + T(scope + "/beta")


def dense(x, scope):
    return x @ T(scope + "/kernel") + T(scope + "/bias")


def gelu(x):
    return x * 0.5 * (1.0 + erf_v(x / sqrt(2.0)))


def tf_forward(ids, types, mask):
    H, A = cfg["hidden_size"], cfg["num_attention_heads"]
    d = H // A
    x = T("bert/embeddings/word_embeddings")[ids] + T("bert/embeddings/token_type_embeddings")[types] + \
        T("bert/embeddings/position_embeddings")[: ids.shape[1]][None]
    x = layer_norm(x, "bert/embeddings/LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -10000.0
    for layer in range(cfg["num_hidden_layers"]):
        s = f"bert/encoder/layer_{layer}"
        heads = lambda t: t.reshape(t.shape[0], t.shape[1], A, d).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = (heads(dense(x, f"{s}/attention/self/{n}")) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / sqrt(d) + bias
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(x.shape)
        x = layer_norm(dense(ctx, f"{s}/attention/output/dense") + x, f"{s}/attention/output/LayerNorm")
        h = gelu(dense(x, f"{s}/intermediate/dense"))
        x = layer_norm(dense(h, f"{s}/output/dense") + x, f"{s}/output/LayerNorm")
    pooled = np.tanh(dense(x[:, 0], "bert/pooler/dense"))
    t = layer_norm(gelu(dense(x, "cls/predictions/transform/dense")), "cls/predictions/transform/LayerNorm")
    mlm = t @ T("bert/embeddings/word_embeddings").T + T("cls/predictions/output_bias")
    nsp = pooled @ T("cls/seq_relationship/output_weights").T + T("cls/seq_relationship/output_bias")
    return mlm, nsp


rng = np.random.default_rng(5)
ids = rng.integers(0, cfg["vocab_size"], size=(3, 12))
types = np.concatenate([np.zeros((3, 6), int), np.ones((3, 6), int)], axis=1)
mask = np.ones((3, 12), np.float32)
mask[1, 9:] = 0
mask[2, 5:] = 0
ref_mlm, ref_nsp = tf_forward(ids, types, mask)
with torch.no_grad():
    out = model(input_ids=torch.tensor(ids), token_type_ids=torch.tensor(types), attention_mask=torch.tensor(mask))
keep = mask.astype(bool)
mlm_diff = np.abs(out.prediction_logits.numpy()[keep] - ref_mlm[keep]).max()
nsp_diff = np.abs(out.seq_relationship_logits.numpy() - ref_nsp).max()
print(f"max |logit difference|: MLM {mlm_diff:.3g}, NSP {nsp_diff:.3g} over 3 sequences of 12 tokens")
check(mlm_diff <= 1e-6 and nsp_diff <= 1e-6, "HF on our conversion = forward on TF's variables (<= 1e-6)")

state = model.state_dict()
for weights_only in (True, False):
    loaded = torch.load(pt, weights_only=weights_only)
    sd = loaded["model"]
    check(isinstance(loaded, dict) and set(sd) == set(state) and all(torch.equal(sd[k], state[k]) for k in state),
          f"torch.load(weights_only={weights_only})['model'] equals HF state_dict() ({len(sd)} entries)")

model8, info8 = BertForPreTraining.from_pretrained(padded, output_loading_info=True)
w8 = model8.bert.embeddings.word_embeddings.weight.detach()
check(w8.shape[0] == 16 and torch.count_nonzero(w8[15:]) == 0 and torch.equal(w8[:15], state["bert.embeddings.word_embeddings.weight"])
      and not info8["missing_keys"], "--pad-vocab 8: 16 rows, the extra one zero, loads in transformers")

# bert-eval on the native conversion: its masked-token probabilities are the softmax of the same logits.
EVAL = os.path.join(BIN, "bert-eval")
if os.access(EVAL, os.X_OK):
    text = "all work and [MASK] play makes jack a dull boy"
    vocab = os.path.join(os.path.dirname(TINY), "vocab.txt")
    got = json.loads(subprocess.run([EVAL, "-q", "--checkpoint", native, "--vocab", vocab, "--top-k", "15",
                                     "--fill-mask", text], check=True, capture_output=True, text=True).stdout)
    words = [line.strip() for line in open(vocab)]
    tokens = ["[CLS]"] + text.split() + ["[SEP]"]
    ids1 = np.array([[words.index(t) for t in tokens]])
    mlm, _ = tf_forward(ids1, np.zeros_like(ids1), np.ones(ids1.shape, np.float32))
    logits = mlm[0, tokens.index("[MASK]")]
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    ours = {p["id"]: p["probability"] for p in got["masks"][0]["predictions"]}
    diff = max(abs(ours[i] - probs[i]) for i in range(len(words)))
    print(f"bert-eval --fill-mask on the native conversion vs the forward on TF's variables: max |p| diff {diff:.3g}")
    check(got["masks"][0]["position"] == tokens.index("[MASK]") and len(ours) == 15 and diff <= 1e-6,
          "bert-eval on the native conversion gives TF's masked-token distribution (<= 1e-6)")
else:
    print("bert-eval not built: its check on the native conversion is skipped")

# --- the tokenizer travels with the model ------------------------------------------------------------------------
# transformers' own pipeline on the hf directory (its tokenizer from our vocab.txt / tokenizer_config.json) gives
# bert-eval --fill-mask's answer on the same model.
from transformers import AutoTokenizer, pipeline  # noqa: E402

tok = AutoTokenizer.from_pretrained(hf)
check(len(tok) == 15 and tok.do_lower_case and tok.mask_token == "[MASK]",
      f"AutoTokenizer on --to hf: {len(tok)} tokens, do_lower_case {getattr(tok, 'do_lower_case', None)}")
text = "All work and [MASK] play makes Jack a dull boy"
theirs = pipeline("fill-mask", model=hf, tokenizer=hf, top_k=15)(text)
if os.access(os.path.join(BIN, "bert-eval"), os.X_OK):
    # No --vocab: bert-eval reads the vocab.txt and tokenizer_config.json beside the model.
    got = json.loads(subprocess.run([os.path.join(BIN, "bert-eval"), "-q", "--checkpoint", native, "--top-k", "15",
                                     "--fill-mask", text], check=True, capture_output=True, text=True).stdout)
    ours_p = {p["id"]: p["probability"] for p in got["masks"][0]["predictions"]}
    theirs_p = {t["token"]: t["score"] for t in theirs}
    diff = max(abs(ours_p[i] - theirs_p[i]) for i in theirs_p)
    order_same = [p["id"] for p in got["masks"][0]["predictions"][:3]] == [t["token"] for t in theirs[:3]]
    print(f"transformers pipeline('fill-mask') on the hf export vs bert-eval --fill-mask: max |p| diff {diff:.3g}")
    check(set(ours_p) == set(theirs_p) and diff <= 1e-6 and order_same and theirs[0]["token_str"] != "",
          "fill-mask pipeline on --to hf = bert-eval --fill-mask (every token's probability <= 1e-6, same top 3)")
else:
    check(theirs[0]["token_str"] != "", "fill-mask pipeline on --to hf names real tokens")
bare = os.path.join(tmp, "bare")
os.makedirs(bare)
for name in ("model.safetensors", "config.json"):
    shutil.copy(os.path.join(native, name), bare)
r = subprocess.run([TOOL, "--to", "hf", "-o", os.path.join(tmp, "hf-bare"), bare], capture_output=True, text=True)
check(r.returncode == 1 and "--vocab" in r.stderr and not os.path.exists(os.path.join(tmp, "hf-bare")),
      f"--to hf with no vocabulary known is refused in one line: {r.stderr.strip()}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
