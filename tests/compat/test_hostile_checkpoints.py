"""Hostile checkpoints (issue 28, items 1-4): the crafted torch.save archives, TF1 indexes and safetensors headers of
hostile_checkpoints.py, each read by ckpt-convert --list as a user would. Each must end with exit 1 and one short,
printable line matching its expected error: no crash (valgrind's over-reads and stack overflows of the old reader
died by a signal or exited 0), and no memory beyond a small multiple of the file's size.

A big-endian torch.save archive (ARCHIVE/byteorder "big", storages byte-swapped) is made from a real torch.save file;
torch.load reads it back to the same tensors, and so must ckpt-convert.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile

from compat_common import BIN, TEST_TOOLS, Checks, skip
from hostile_checkpoints import one_tensor, safetensors_cases, tf_index_cases, torch_save_cases

CONVERT = os.path.join(BIN, "ckpt-convert")
# The torch-free reader alone, whose peak memory is not buried under LibTorch's libraries (ckpt-convert's ~450 MB).
READER = os.path.join(TEST_TOOLS, "data_test_helper")
if not os.access(CONVERT, os.X_OK):
    skip("ckpt-convert not built (needs LibTorch)")

check = Checks()
# What the pickle machine may hold is 16 bytes per byte of the file (ckpt/torch_save.cpp); with the file itself in
# memory and vectors grown by doubling, the process may take about twice that above what a tiny file needs.
MEMORY_PER_FILE_BYTE = 40


def run_measured(*args):
    """(returncode, stdout, stderr, peak RSS in bytes) of one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(a) for a in args], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"), \
            usage.ru_maxrss * 1024


def expect_one_line(what, rc, out, err, pattern):
    check(rc == 1, f"{what}: exit {rc}, expected 1 (a signal is negative): {err[:300]!r}")
    check(err.count("\n") == 1 and err.startswith("ckpt-convert: error: "), f"{what}: one line: {err[:300]!r}")
    check(len(err) < 2500, f"{what}: the line is {len(err)} bytes")
    check(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", err), f"{what}: control bytes in the message: {err[:300]!r}")
    check(re.search(pattern, err) is not None, f"{what}: /{pattern}/ not in {err[:300]!r}")
    check(out == "", f"{what}: nothing on stdout")


# Made before any measurement: a child's peak RSS starts from its parent's at fork (Linux keeps the high-water mark
# across exec), so the baseline and the cases are measured from the same parent.
TORCH_SAVE_CASES = torch_save_cases()

with tempfile.TemporaryDirectory() as tmp:
    small = os.path.join(tmp, "small.pt")
    with open(small, "wb") as f:
        f.write(one_tensor(0, [4], [1]))
    rc, out, err, _ = run_measured(CONVERT, "--list", small)
    check(rc == 0 and out.startswith("w (F32) [4]\n"), f"a small well-formed archive lists: {rc} {out!r} {err!r}")
    rc, out, err, baseline = run_measured(READER, "torch-save", small)
    check(rc == 0 and out == "w F32 [4]\n", f"the reader alone reads it: {rc} {out!r} {err!r}")

    for name, data, pattern in TORCH_SAVE_CASES:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err, _ = run_measured(CONVERT, "--list", path)
        expect_one_line(name, rc, out, err, pattern)
        rc, out, err, peak = run_measured(READER, "torch-save", path)
        check(rc == 1 and peak - baseline < MEMORY_PER_FILE_BYTE * len(data),
              f"{name}: {peak - baseline} bytes above a tiny file's run for a file of {len(data)}")
        os.remove(path)

    for name, index, pattern in tf_index_cases():
        prefix = os.path.join(tmp, name[:-len(".index")])
        with open(prefix + ".index", "wb") as f:
            f.write(index)
        with open(prefix + ".data-00000-of-00001", "wb") as f:
            f.write(bytes(16))
        rc, out, err, _ = run_measured(CONVERT, "--list", prefix)
        expect_one_line(name, rc, out, err, pattern)

    for name, data, pattern in safetensors_cases():
        folder = os.path.join(tmp, name + ".d")
        os.makedirs(folder)
        with open(os.path.join(folder, "model.safetensors"), "wb") as f:
            f.write(data)
        rc, out, err, _ = run_measured(CONVERT, "--list", folder)
        expect_one_line(name, rc, out, err, pattern)

    # A big-endian archive, as torch.save writes it on such a machine: what torch.load reads, ckpt-convert reads.
    try:
        import torch
        from safetensors.torch import load_file
    except ImportError:
        torch = None
    if torch is not None:
        config = {"vocab_size": 40, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
                  "intermediate_size": 16, "hidden_act": "gelu", "max_position_embeddings": 16, "type_vocab_size": 2,
                  "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
        from transformers import BertConfig, BertForPreTraining
        torch.manual_seed(5)
        model = BertForPreTraining(BertConfig(**config))
        state = {k: v for k, v in model.state_dict().items() if v.is_floating_point()}
        state["bert.pooler.dense.weight"] = state["bert.pooler.dense.weight"].half().float()
        folder = os.path.join(tmp, "big")
        os.makedirs(folder)
        with open(os.path.join(folder, "bert_config.json"), "w") as f:
            json.dump(config, f)
        little, big = os.path.join(folder, "little.pt"), os.path.join(folder, "model.pt")
        torch.save(state, little)
        with zipfile.ZipFile(little) as src, zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("/byteorder"):
                    data = b"big"
                elif "/data/" in info.filename:
                    data = b"".join(struct.pack(">f", v) for v in struct.unpack(f"<{len(data) // 4}f", data))
                dst.writestr(info.filename, data)
        os.remove(little)
        reread = torch.load(big)
        check(all(torch.equal(reread[k], v) for k, v in state.items()), "torch.load reads the big-endian archive back")
        native = os.path.join(tmp, "big-native")
        rc, out, err, _ = run_measured(CONVERT, "-q", "--to", "native", "-o", native, big)
        check(rc == 0, f"ckpt-convert reads a big-endian archive: {err.strip()}")
        if rc == 0:
            got = load_file(os.path.join(native, "model.safetensors"))
            same = [k for k in got if k in reread and torch.equal(got[k], reread[k])]
            check(len(same) == len(got) and len(got) > 10, f"{len(same)} of {len(got)} tensors as torch.load reads them")

sys.exit(check.exit_code("compat.hostile_checkpoints"))
