"""bin4 on h5py-written inputs: the union of its outputs is exactly the input, bin by bin and shard by shard.

Three inputs written with h5py as the peers write them (two NVIDIA-layout files with different P, one MLPerf
variable-length file) go through bin4 three ways (default; --trim with 4 shards; varlength output with custom
bins). h5py reads every output shard with the loader semantics of its layout, and we check:
  - exactly the expected file names, and nothing else (no temporaries), bin4.json last with the right counts;
  - every sample sits in the bin its real-token count calls for: (previous bound, bound];
  - within a bin, the k-th sample in input order is in shard k mod K, so each shard's content is known exactly;
  - the union of all shards equals the inputs as a multiset of samples;
  - NVIDIA output rows are as wide as the widest input (or the bin bound with --trim), P = the largest P.
"""
import collections
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hdf5_samples import h5py, check, load_file, make_samples, run_bin4, write_nvidia, write_varlength  # noqa: E402

_loaded_inputs = {}


def load_input(path):
    """The inputs are read (by h5py) once, however many runs compare against them."""
    if path not in _loaded_inputs:
        _loaded_inputs[path] = load_file(path)
    return _loaded_inputs[path]


def expected_layout(inputs, bins, shards):
    """What bin4 must write: {(bound, shard): [samples in order]}, from the inputs as h5py reads them."""
    want = collections.defaultdict(list)
    dealt = collections.Counter()
    for path in inputs:
        for sample in load_input(path):
            n = len(sample[0])
            bound = next(b for b in bins if n <= b)
            want[(bound, dealt[bound] % shards)].append(sample)
            dealt[bound] += 1
    return want


def check_run(name, out, inputs, bins, shards, layout, trim, max_pred):
    expected_files = sorted([f"{b}/part-{k:05d}-of-{shards:05d}.hdf5" for b in bins for k in range(shards)]
                            + ["bin4.json"])
    found = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
    check(found == expected_files, f"{name}: files {found}")
    want = expected_layout(inputs, bins, shards)
    union, counts, slots, tokens = collections.Counter(), [], 0, 0
    for i, bound in enumerate(bins):
        low = bins[i - 1] + 1 if i else 1
        in_bin = 0
        for k in range(shards):
            path = os.path.join(out, str(bound), f"part-{k:05d}-of-{shards:05d}.hdf5")
            with h5py.File(path, "r") as f:
                is_vlen = h5py.check_vlen_dtype(f["input_ids"].dtype) is not None
                check(is_vlen == (layout == "varlength"), f"{name}: {path} is not {layout}")
                if not is_vlen:
                    width = f["input_ids"].shape[1]
                    check(width == (bound if trim else 512), f"{name}: {path} has rows of {width}")
                    check(f["masked_lm_positions"].shape[1] == max_pred, f"{name}: {path} P")
                    slots += f["input_ids"].shape[0] * width
            samples = load_file(path)
            for s in samples:
                check(low <= len(s[0]) <= bound, f"{name}: a sample of {len(s[0])} tokens in bin {bound}")
                tokens += len(s[0])
            check(samples == want[(bound, k)], f"{name}: {path} does not hold the round-robin share it should")
            union.update(samples)
            in_bin += len(samples)
        counts.append(in_bin)
    inputs_union = collections.Counter(s for p in inputs for s in load_input(p))
    check(union == inputs_union, f"{name}: the union of the outputs is not the input multiset")
    with open(os.path.join(out, "bin4.json")) as f:
        marker = json.load(f)
    check([b["samples"] for b in marker["bins"]] == counts, f"{name}: bin4.json counts {marker['bins']}")
    check(marker["samples"] == sum(inputs_union.values()), f"{name}: bin4.json total")
    padding = f", padding {100 * (1 - tokens / slots):.1f}% of token slots" if slots else ""
    print(f"{name}: {sum(union.values())}/{sum(inputs_union.values())} input samples found in the outputs "
          f"(union = input multiset), per bin {dict(zip(bins, counts))}{padding}")


def main():
    scratch = tempfile.TemporaryDirectory(prefix="bertkit-compat-bin4-")  # removed at exit, even on failure
    tmp = scratch.name
    edges = [4, 127, 128, 129, 256, 257, 384, 385, 512]
    a, b, c = (os.path.join(tmp, n) for n in ("a.hdf5", "b.hdf5", "c.hdf5"))
    write_nvidia(a, make_samples(seed=1, n=700, max_pred=20, lengths=edges), max_pred=20)
    write_nvidia(b, make_samples(seed=2, n=500, max_pred=76, lengths=edges), max_pred=76)
    write_varlength(c, make_samples(seed=3, n=400, max_pred=76, lengths=edges))
    inputs = [a, b, c]

    runs = [("default, 3 shards", [128, 256, 384, 512], 3, "nvidia", False, []),
            ("--trim, 4 shards", [128, 256, 384, 512], 4, "nvidia", True, ["--trim"]),
            ("varlength, bins 64,128,256,512", [64, 128, 256, 512], 2, "varlength", False,
             ["--layout", "varlength", "--bins", "64,128,256,512"])]
    for name, bins, shards, layout, trim, extra in runs:
        out = os.path.join(tmp, f"out{len(os.listdir(tmp))}")
        r = run_bin4("--shards-per-bin", shards, *extra, "-o", out, *inputs)
        check(r.returncode == 0, f"{name}: bin4 failed: {r.stderr}")
        print(f"{name}: {r.stderr.strip()}")
        check_run(name, out, inputs, bins, shards, layout, trim, 76)

    # Samples longer than the last bound: an error naming the file and row, or counted and skipped.
    r = run_bin4("--bins", "128,256", "-o", os.path.join(tmp, "short"), a)
    check(r.returncode == 1 and f"{a}: row 5: 257 tokens, longer than the last bin (256)" in r.stderr,
          f"too long: {r.stderr!r}")
    check(not os.path.exists(os.path.join(tmp, "short", "bin4.json")), "too long: marker written")
    r = run_bin4("-q", "--drop-long", "--bins", "128,256", "-o", os.path.join(tmp, "dropped"), a)
    with open(os.path.join(tmp, "dropped", "bin4.json")) as f:
        marker = json.load(f)
    longer = sum(1 for s in load_input(a) if len(s[0]) > 256)
    check(r.returncode == 0 and marker["dropped"] == longer, f"--drop-long dropped {marker['dropped']}, not {longer}")
    print(f"--drop-long: {longer} samples over 256 tokens dropped, as counted by h5py")
    print("bin4: all checks passed")


if __name__ == "__main__":
    main()
