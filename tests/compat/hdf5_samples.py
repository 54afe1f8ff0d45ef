"""Shared helpers for the HDF5 compat tests (not a test itself: the runner only picks up test_*.py).

The files here are written with h5py the way the peers write them (NVIDIA DeepLearningExamples'
create_pretraining_data.py: i4/i1 datasets with gzip; MLPerf's variable-length converter: vlen int16/int8),
and read back the way their loaders read them. Our tools are only ever run as subprocesses.
"""
import collections
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # the project venv has both; anything else cannot run these tests
    print(f"skipped: {e}")
    sys.exit(77)

CLS, SEP = 101, 102
BIN = os.environ.get("BIN", "")
BIN4 = os.path.join(BIN, "bin4")
if not os.access(BIN4, os.X_OK):
    print(f"skipped: no bin4 at '{BIN4}' (set BIN)")
    sys.exit(77)

Sample = collections.namedtuple("Sample", "input_ids segment_ids positions masked_ids next_sentence")


def make_samples(seed, n, max_len=512, max_pred=20, lengths=()):
    """Random samples shaped like create_pretraining_data.py output: [CLS] a [SEP] b [SEP], sorted positions
    that never hit [CLS]/[SEP], about 15% of the tokens predicted (at most max_pred)."""
    rng = np.random.default_rng(seed)
    wanted = list(lengths) + list(rng.integers(5, max_len + 1, n - len(lengths)))
    samples = []
    for length in wanted:
        length = int(length)
        a_len = int(rng.integers(1, length - 2))  # length >= 4: [CLS] a [SEP] b [SEP], b may be empty
        b_len = length - 3 - a_len
        ids = [CLS] + list(rng.integers(999, 30522, a_len)) + [SEP] + list(rng.integers(999, 30522, b_len)) + [SEP]
        seg = [0] * (a_len + 2) + [1] * (b_len + 1)
        candidates = [i for i, t in enumerate(ids) if t not in (CLS, SEP)]
        k = min(max_pred, max(1, round(length * 0.15)), len(candidates))
        positions = sorted(int(p) for p in rng.choice(candidates, k, replace=False))
        masked = [int(x) for x in rng.integers(0, 30522, k)]
        samples.append(Sample([int(x) for x in ids], seg, positions, masked, int(rng.integers(0, 2))))
    return samples


def nvidia_arrays(samples, seq_len, max_pred):
    n = len(samples)
    a = {"input_ids": np.zeros((n, seq_len), "i4"), "input_mask": np.zeros((n, seq_len), "i1"),
         "segment_ids": np.zeros((n, seq_len), "i1"), "masked_lm_positions": np.zeros((n, max_pred), "i4"),
         "masked_lm_ids": np.zeros((n, max_pred), "i4"), "next_sentence_labels": np.zeros(n, "i1")}
    for i, s in enumerate(samples):
        L, k = len(s.input_ids), len(s.positions)
        a["input_ids"][i, :L] = s.input_ids
        a["input_mask"][i, :L] = 1
        a["segment_ids"][i, :L] = s.segment_ids
        a["masked_lm_positions"][i, :k] = s.positions
        a["masked_lm_ids"][i, :k] = s.masked_ids
        a["next_sentence_labels"][i] = s.next_sentence
    return a


def write_nvidia(path, samples, seq_len=512, max_pred=20, dtype_override=None):
    """As NVIDIA's create_pretraining_data.py writes: f.create_dataset(name, data=..., dtype='i4'|'i1', gzip)."""
    arrays = nvidia_arrays(samples, seq_len, max_pred)
    with h5py.File(path, "w") as f:
        for name, data in arrays.items():
            dtype = (dtype_override or {}).get(name, data.dtype)
            f.create_dataset(name, data=data.astype(dtype), dtype=dtype, compression="gzip")


def write_varlength(path, samples):
    """As MLPerf's variable-length converter writes: vlen int16 ids/positions, vlen int8 segments, int8 labels."""
    n = len(samples)
    i16, i8 = h5py.vlen_dtype(np.dtype("int16")), h5py.vlen_dtype(np.dtype("int8"))
    with h5py.File(path, "w") as f:
        columns = [("input_ids", i16, "input_ids", "int16"), ("segment_ids", i8, "segment_ids", "int8"),
                   ("masked_lm_positions", i16, "positions", "int16"), ("masked_lm_ids", i16, "masked_ids", "int16")]
        for name, dtype, field, base in columns:
            d = f.create_dataset(name, (n,), dtype=dtype)
            for i, s in enumerate(samples):
                d[i] = np.asarray(getattr(s, field), base)
        f.create_dataset("next_sentence_labels", data=np.array([s.next_sentence for s in samples], "int8"), dtype="i1")


def nvidia_getitem(f, index, max_pred_length):
    """NVIDIA's pretraining dataset __getitem__, in numpy: masked_lm_labels is -1 everywhere except at the
    positions before the first 0 in masked_lm_positions (or all P of them if there is no 0)."""
    input_ids = f["input_ids"][index].astype(np.int64)
    input_mask = f["input_mask"][index].astype(np.int64)
    segment_ids = f["segment_ids"][index].astype(np.int64)
    positions = f["masked_lm_positions"][index].astype(np.int64)
    ids = f["masked_lm_ids"][index].astype(np.int64)
    next_sentence = np.asarray(f["next_sentence_labels"][index].astype(np.int64))
    labels = np.full(input_ids.shape, -1, np.int64)
    end = max_pred_length
    zeros = (positions == 0).nonzero()[0]
    if len(zeros) != 0:
        end = zeros[0]
    labels[positions[:end]] = ids[:end]
    return input_ids, segment_ids, input_mask, labels, next_sentence


def varlength_getitem(f, index):
    """The variable-length layout's reading: the row's own length, mask all ones, labels from the lists."""
    input_ids = f["input_ids"][index].astype(np.int64)
    segment_ids = f["segment_ids"][index].astype(np.int64)
    positions = f["masked_lm_positions"][index].astype(np.int64)
    ids = f["masked_lm_ids"][index].astype(np.int64)
    labels = np.full(input_ids.shape, -1, np.int64)
    labels[positions] = ids
    return input_ids, segment_ids, np.ones_like(input_ids), labels, np.asarray(f["next_sentence_labels"][index])


def canonical(item):
    """A hashable view of one loaded sample that ignores padding width, so files of different L compare."""
    input_ids, segment_ids, input_mask, labels, next_sentence = item
    n = int(input_mask.sum())
    assert (input_mask[:n] == 1).all() and (input_mask[n:] == 0).all(), "input_mask is not 1s then 0s"
    assert (input_ids[n:] == 0).all() and (segment_ids[n:] == 0).all() and (labels[n:] == -1).all(), "bad padding"
    return (tuple(input_ids[:n].tolist()), tuple(segment_ids[:n].tolist()), tuple(labels[:n].tolist()),
            int(next_sentence))


def expected_canonical(s):
    labels = [-1] * len(s.input_ids)
    for p, t in zip(s.positions, s.masked_ids):
        labels[p] = t
    return (tuple(s.input_ids), tuple(s.segment_ids), tuple(labels), s.next_sentence)


def load_file(path):
    """Every sample of one HDF5 file through the loader of its layout, as canonical tuples."""
    with h5py.File(path, "r") as f:
        vlen = h5py.check_vlen_dtype(f["input_ids"].dtype) is not None
        n = f["input_ids"].shape[0]
        if vlen:
            return [canonical(varlength_getitem(f, i)) for i in range(n)]
        max_pred = f["masked_lm_positions"].shape[1]
        return [canonical(nvidia_getitem(f, i, max_pred)) for i in range(n)]


def run_bin4(*args):
    return subprocess.run([BIN4, *map(str, args)], capture_output=True, text=True)


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)
