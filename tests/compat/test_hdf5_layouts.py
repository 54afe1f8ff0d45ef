"""Our HDF5 reader and writer against h5py and the NVIDIA/MLPerf conventions.

1. Files written with h5py exactly as NVIDIA's create_pretraining_data.py and MLPerf's variable-length converter
   write them go through bin4 with one bin and one shard, so the output keeps the input's row order; h5py then
   reads our output and it must equal, array for array, what the peer writer produced from the same samples
   (same dtypes, shapes, padding), in both layouts and across layouts.
2. NVIDIA's loader semantics (masked_lm_labels from the positions up to the first 0), implemented in numpy,
   applied to our output give the labels the samples were generated with.
3. Empty files, a float input_ids, a truncated file and a real HDF5 file of another kind (keras-bert weights)
   give the errors they should.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_samples import (h5py, np, check, expected_canonical, load_file, make_samples, nvidia_arrays,  # noqa: E402
                          nvidia_getitem, run_bin4, write_nvidia, write_varlength)

FIXTURES = os.environ.get("FIXTURES", "")
SEQ_LEN, MAX_PRED = 512, 20
NVIDIA_DTYPES = {"input_ids": "int32", "input_mask": "int8", "segment_ids": "int8", "masked_lm_positions": "int32",
                 "masked_lm_ids": "int32", "next_sentence_labels": "int8"}
VLEN_DTYPES = {"input_ids": "int16", "segment_ids": "int8", "masked_lm_positions": "int16", "masked_lm_ids": "int16"}


def only_shard(out_dir):
    return os.path.join(out_dir, "512", "part-00000-of-00001.hdf5")


def bin4_ok(*args):
    r = run_bin4("-q", "--bins", SEQ_LEN, *args)
    check(r.returncode == 0, f"bin4 {args} failed: {r.stderr}")


def compare_nvidia(ours, peer_arrays, what):
    with h5py.File(ours, "r") as f:
        check(sorted(f.keys()) == sorted(NVIDIA_DTYPES), f"{what}: datasets {sorted(f.keys())}")
        for name, dtype in NVIDIA_DTYPES.items():
            check(f[name].dtype == np.dtype(dtype), f"{what}: {name} is {f[name].dtype}, NVIDIA writes {dtype}")
            check(f[name].shape == peer_arrays[name].shape, f"{what}: {name} shape {f[name].shape}")
            check(np.array_equal(f[name][()], peer_arrays[name]), f"{what}: {name} differs from the peer's")


def compare_varlength(ours, peer, what):
    with h5py.File(ours, "r") as a, h5py.File(peer, "r") as b:
        check("input_mask" not in a, f"{what}: the varlength layout has no input_mask")
        for name, base in VLEN_DTYPES.items():
            check(h5py.check_vlen_dtype(a[name].dtype) == np.dtype(base), f"{what}: {name} is {a[name].dtype}")
            check(len(a[name]) == len(b[name]), f"{what}: {name} has {len(a[name])} rows")
            for i in range(len(b[name])):
                check(np.array_equal(a[name][i], b[name][i]), f"{what}: {name} row {i} differs")
        check(a["next_sentence_labels"].dtype == np.dtype("int8"), f"{what}: next_sentence_labels dtype")
        check(np.array_equal(a["next_sentence_labels"][()], b["next_sentence_labels"][()]), f"{what}: labels differ")


def main():
    scratch = tempfile.TemporaryDirectory(prefix="bertkit-compat-hdf5-")  # removed at exit, even on failure
    tmp = scratch.name
    boundary = [4, 127, 128, 129, 255, 256, 257, 384, 385, 511, 512]
    samples = make_samples(seed=20240605, n=240, max_len=SEQ_LEN, max_pred=MAX_PRED, lengths=boundary)
    peer_nvidia, peer_varlength = os.path.join(tmp, "nvidia.hdf5"), os.path.join(tmp, "varlength.hdf5")
    write_nvidia(peer_nvidia, samples, SEQ_LEN, MAX_PRED)
    write_varlength(peer_varlength, samples)
    arrays = nvidia_arrays(samples, SEQ_LEN, MAX_PRED)
    expected = [expected_canonical(s) for s in samples]

    # The numpy version of NVIDIA's loader, on the peer's own file, gives the labels we generated.
    check(load_file(peer_nvidia) == expected, "NVIDIA loader semantics on the h5py-written file")
    with h5py.File(peer_nvidia, "r") as f:
        _, _, _, labels, _ = nvidia_getitem(f, 0, MAX_PRED)
        check(int((labels != -1).sum()) == len(samples[0].positions), "label count of row 0")

    cases = [("nvidia -> nvidia", peer_nvidia, []), ("varlength -> nvidia", peer_varlength,
             ["--layout", "nvidia", "--max-predictions", MAX_PRED]),
             ("nvidia -> varlength", peer_nvidia, ["--layout", "varlength"]),
             ("varlength -> varlength", peer_varlength, [])]
    for what, source, extra in cases:
        out = os.path.join(tmp, what.replace(" -> ", "_to_"))
        bin4_ok(*extra, "-o", out, source)
        if what.endswith("-> nvidia"):
            compare_nvidia(only_shard(out), arrays, what)
        else:
            compare_varlength(only_shard(out), peer_varlength, what)
        check(load_file(only_shard(out)) == expected, f"{what}: loader output differs")
        print(f"{what}: {len(samples)}/{len(samples)} samples identical to the h5py peer file")

    with h5py.File(only_shard(os.path.join(tmp, "nvidia_to_nvidia")), "r") as f:
        check(f["input_ids"].compression == "gzip", "NVIDIA output is gzip-compressed by default, like NVIDIA's")
    bin4_ok("--gzip", 0, "-o", os.path.join(tmp, "plain"), peer_nvidia)
    with h5py.File(only_shard(os.path.join(tmp, "plain")), "r") as f:
        check(f["input_ids"].compression is None, "--gzip 0 output is uncompressed")

    # Empty inputs in both layouts give empty outputs of the right shapes.
    for layout, writer in (("nvidia", write_nvidia), ("varlength", write_varlength)):
        path = os.path.join(tmp, f"empty-{layout}.hdf5")
        writer(path, [])
        out = os.path.join(tmp, f"empty-{layout}-out")
        bin4_ok("--max-predictions", MAX_PRED, "-o", out, path)
        with h5py.File(only_shard(out), "r") as f:
            check(f["input_ids"].shape[0] == 0 and f["next_sentence_labels"].shape == (0,), f"empty {layout}")
            if layout == "nvidia":
                check(f["input_ids"].shape == (0, SEQ_LEN), f"empty nvidia shape {f['input_ids'].shape}")

    # Errors: wrong dtype, truncated file, an HDF5 file that is not pretraining data.
    floats = os.path.join(tmp, "float.hdf5")
    write_nvidia(floats, samples[:5], dtype_override={"input_ids": "float32"})
    r = run_bin4("-o", os.path.join(tmp, "x"), floats)
    check(r.returncode == 1, f"float input_ids: exit {r.returncode}")
    check(r.stderr == f"bin4: error: {floats}: dataset input_ids has type float; it must hold integers\n",
          f"float input_ids: {r.stderr!r}")
    cut = os.path.join(tmp, "cut.hdf5")
    with open(peer_nvidia, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read()[: os.path.getsize(peer_nvidia) // 2])
    r = run_bin4("-o", os.path.join(tmp, "x"), cut)
    check(r.returncode == 1 and r.stderr.startswith(f"bin4: error: {cut}: "), f"truncated: {r.stderr!r}")
    check(r.stderr.count("\n") == 1, f"truncated: one line only, got {r.stderr!r}")
    print(f"truncated file: {r.stderr.strip()}")
    keras = os.path.join(FIXTURES, "hdf5-closest", "keras-bert-test_bert_fit.h5")
    if os.path.exists(keras):
        with h5py.File(keras, "r") as f:
            found = ", ".join(sorted(f.keys()))
        r = run_bin4("-o", os.path.join(tmp, "x"), keras)
        want = (f"bin4: error: {keras}: not a BERT pretraining HDF5 file: missing datasets input_ids, input_mask, "
                f"segment_ids, masked_lm_positions, masked_lm_ids, next_sentence_labels (found at the root: {found})\n")
        check(r.returncode == 1 and r.stderr == want, f"keras-bert file: {r.stderr!r}")
        print(f"keras-bert weights file: {r.stderr.strip()}")
    else:
        print("note: keras-bert fixture not found; that check was skipped")
    check(not os.path.exists(os.path.join(tmp, "x", "bin4.json")), "a failed run left a marker")
    print("hdf5 layouts: all checks passed")


if __name__ == "__main__":
    main()
