"""torch.save checkpoints in: NVIDIA's .pt as its DeepLearningExamples scripts save them, HF's pytorch_model.bin, and
our own --to pt, read by ckpt-convert and by bert-train --init-checkpoint without Python.

The NVIDIA file is made here with torch itself in NVIDIA's layout: {'model': state dict, 'optimizer': ..., 'files':
..., 'epoch': ...}, the names of its modeling.py (LinearActivation modules intermediate.dense_act, pooler.dense_act,
predictions.transform.dense_act) under DistributedDataParallel's "module." prefix, and bert_config.json beside it.
Every tensor transformers loads from our conversion must equal the one torch.save wrote.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, require_fixtures, skip

CONVERT, TRAIN, MKPRETRAIN = (os.path.join(BIN, t) for t in ("ckpt-convert", "bert-train", "mkpretrain"))
if not os.access(CONVERT, os.X_OK) or not os.access(TRAIN, os.X_OK):
    skip("ckpt-convert / bert-train not built (needs LibTorch)")
require_fixtures()

import torch  # noqa: E402
from transformers import BertConfig, BertForPreTraining  # noqa: E402

check = Checks()
GOOGLE_CONFIG = {"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                 "intermediate_size": 64, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
                 "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 128, "type_vocab_size": 2,
                 "initializer_range": 0.02}


def nvidia_name(hf_name):
    for module in ("intermediate.dense.", "pooler.dense.", "transform.dense."):
        hf_name = hf_name.replace(module, module.replace("dense.", "dense_act."))
    return "module." + hf_name


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    torch.manual_seed(3)
    model = BertForPreTraining(BertConfig(**GOOGLE_CONFIG)).eval()
    reference = {k: v.clone() for k, v in model.state_dict().items()}

    nv = os.path.join(tmp, "nvidia")
    os.makedirs(nv)
    with open(os.path.join(nv, "bert_config.json"), "w") as f:
        json.dump(GOOGLE_CONFIG, f)
    state = {nvidia_name(k): v for k, v in reference.items() if not k.endswith("position_ids")}
    check(any(".dense_act." in k for k in state) and all(k.startswith("module.") for k in state),
          "the NVIDIA file carries NVIDIA's names")
    params = list(range(len(state)))
    torch.save({"model": state, "optimizer": {"state": {}, "param_groups": [{"lr": 6e-3, "params": params}]},
                "files": [3, "part_00003.hdf5"], "epoch": 1, "data_loader": None}, os.path.join(nv, "model.pt"))

    # 1. ckpt-convert --to hf: transformers loads it strictly, every tensor as torch.save wrote it.
    out = os.path.join(tmp, "hf")
    proc = run(CONVERT, "-q", "--to", "hf", "-o", out, "--vocab", f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt",
               os.path.join(nv, "model.pt"))
    check(proc.returncode == 0, f"ckpt-convert --to hf of NVIDIA's .pt: {proc.stderr.strip()}")
    if proc.returncode == 0:
        loaded, info = BertForPreTraining.from_pretrained(out, output_loading_info=True)
        check(not info["missing_keys"] and not info["unexpected_keys"], f"transformers loads it strictly: {info}")
        got = loaded.state_dict()
        same = [k for k in reference if k in got and torch.equal(got[k], reference[k])]
        check(len(same) == len(reference), f"{len(same)} of {len(reference)} tensors equal to those torch.save wrote")

    # 2. HF's pytorch_model.bin (a bare state dict) with config.json beside it.
    # (as save_pretrained wrote it before safetensors: torch.save of the state dict, config.json beside it).
    hfbin = os.path.join(tmp, "hfbin")
    os.makedirs(hfbin)
    bin_path = os.path.join(hfbin, "pytorch_model.bin")
    torch.save(model.state_dict(), bin_path)
    model.config.to_json_file(os.path.join(hfbin, "config.json"))
    native = os.path.join(tmp, "native")
    proc = run(CONVERT, "-q", "--to", "native", "-o", native, bin_path)
    check(proc.returncode == 0, f"ckpt-convert --to native of pytorch_model.bin: {proc.stderr.strip()}")

    # 3. Our own --to pt reads back to the same native checkpoint, byte for byte.
    pt = os.path.join(tmp, "ours.pt")
    native2 = os.path.join(tmp, "native2")
    proc = run(CONVERT, "-q", "--to", "pt", "-o", pt, native)
    proc2 = run(CONVERT, "-q", "--config", os.path.join(native, "config.json"), "--to", "native", "-o", native2, pt)
    check(proc.returncode == 0 and proc2.returncode == 0, f"--to pt and back: {proc.stderr.strip()} {proc2.stderr.strip()}")
    if proc2.returncode == 0:
        with open(os.path.join(native, "model.safetensors"), "rb") as a, open(os.path.join(native2, "model.safetensors"), "rb") as b:
            check(a.read() == b.read(), "native -> pt -> native: model.safetensors identical")

    # 4. bert-train --init-checkpoint NVIDIA's .pt: its weights, strictly (one step from them trains).
    data = os.path.join(tmp, "data.hdf5")
    subprocess.run([MKPRETRAIN, "-q", "--vocab", f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt", "--max-seq-length",
                    "64", "--max-predictions", "10", "-o", data, f"{FIXTURES}/pretraining_text/sample_text.txt"],
                   check=True)
    train = [TRAIN, "-q", "--config", os.path.join(nv, "bert_config.json"), "--input", data, "--train-batch-size", "4",
             "--max-steps", "1", "--output-dir", os.path.join(tmp, "run"), "--init-checkpoint", os.path.join(nv, "model.pt"),
             "--precision", "fp32"]
    proc = run(*train)
    check(proc.returncode == 0, f"bert-train --init-checkpoint model.pt: {proc.stderr.strip()}")

    # A .pt missing a tensor is refused, naming it; a file that is not torch.save's is one line.
    del state["module.bert.pooler.dense_act.bias"]
    torch.save({"model": state}, os.path.join(nv, "partial.pt"))
    proc = run(CONVERT, "--to", "native", "-o", os.path.join(tmp, "x"), os.path.join(nv, "partial.pt"))
    check(proc.returncode == 1 and "bert.pooler.dense.bias" in proc.stderr, f"a missing tensor is named: {proc.stderr.strip()}")
    with open(os.path.join(nv, "junk.pt"), "wb") as f:
        f.write(b"\x80\x02not a zip")
    proc = run(CONVERT, "--to", "native", "-o", os.path.join(tmp, "y"), os.path.join(nv, "junk.pt"))
    check(proc.returncode == 1 and proc.stderr.count("\n") == 1 and "junk.pt: not a torch.save zip archive" in proc.stderr,
          f"a file that is not torch.save's: {proc.stderr.strip()}")
    check(not os.path.exists(os.path.join(tmp, "x")) and not os.path.exists(os.path.join(tmp, "y")), "no output left behind")

sys.exit(check.exit_code("compat.ckpt_convert_pt"))
