"""TFRecord + tf.train.Example: our writer/reader against TensorFlow's own, both directions.

1. The google-research fixtures (and MRPC) re-encoded by our library are byte-identical to the originals, and
   TensorFlow reads our files (tf.data.TFRecordDataset checks both CRCs) into equal protos, also with
   --sorted order, which must equal protobuf's deterministic serialisation byte for byte.
2. Edge-case Examples (every kind, empty lists, int64 extremes, NaN/inf/-0/denormal floats, binary bytes, an unset
   Feature) written by us are parsed by TensorFlow (FromString and tf.io.parse_single_example) into the intended
   values; the sorted encoding equals SerializeToString(deterministic=True).
3. Records written by tf.io.TFRecordWriter (plain and GZIP; arbitrary payloads and Examples) read by ours.
4. A file with one flipped byte is rejected by both TensorFlow and us.
"""
import glob
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from compat_common import FIXTURES, TEST_TOOLS, Checks

HELPER = os.path.join(TEST_TOOLS, "data_test_helper")
check = Checks()


def helper(*args, **kw):
    proc = subprocess.run([HELPER, *args], capture_output=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"helper {args}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def canonical(example):
    """An order-free, NaN-safe view of a tf.train.Example: {name: (kind, values)}."""
    out = {}
    for name, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        if kind == "int64_list":
            out[name] = ("int64", list(feature.int64_list.value))
        elif kind == "float_list":
            out[name] = ("float", [f32_bits(v) for v in feature.float_list.value])
        elif kind == "bytes_list":
            out[name] = ("bytes", [v.hex() for v in feature.bytes_list.value])
        else:
            out[name] = ("none", [])
    return out


def canonical_from_ours(line):
    record = json.loads(line)
    return {name: (f["kind"], f["values"]) for name, f in record["features"].items()}


def tf_records(path, compression=""):
    import tensorflow as tf
    return [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]


def quiet(bits):
    is_nan = (bits & 0x7f800000) == 0x7f800000 and bits & 0x7fffff
    return bits | 0x400000 if is_nan else bits


def edge_examples():
    """Feature specs (insertion order kept) as lists of (name, kind, values) with floats given as bit patterns."""
    rng = random.Random(7)
    specs = [
        [("ints", "int64", [0, 1, -1, 127, 128, 300, -2**63, 2**63 - 1, 2**40, -(2**33)]),
         ("floats", "float", [f32_bits(v) for v in [0.0, -0.0, 1.5, -2.25, 3.4028234663852886e38, 1e-45,
                                                     float("inf"), float("-inf")]] + [0x7fc00000, 0xffc00001]),
         ("bytes", "bytes", [b"".hex(), b"\x00\xff\x80binary\n".hex(), "héllo ünïcode".encode().hex(),
                             bytes(range(256)).hex()])],
        [("empty_int", "int64", []), ("empty_float", "float", []), ("empty_bytes", "bytes", []),
         ("unset", "none", [])],
        [("z_last", "int64", [1]), ("A_upper", "float", [f32_bits(0.5)]), ("ключ", "bytes", ["00"]),
         ("a" * 300, "int64", list(range(200)))],
        [("b", "int64", [1]), ("", "int64", [42])],
        [],
    ]
    for _ in range(20):
        spec = []
        for i in range(rng.randrange(1, 9)):
            kind = rng.choice(["int64", "float", "bytes"])
            n = rng.choice([0, 1, 2, 20, 128, 1000])
            if kind == "int64":
                values = [rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(0, 30522)]) for _ in range(n)]
            elif kind == "float":
                # Any bit pattern, NaN payloads included, except signalling NaNs: Python floats are doubles, and
                # converting one quiets it, so the TensorFlow side could not carry it through unchanged.
                values = [quiet(rng.getrandbits(32)) for _ in range(n)]
            else:
                values = [rng.randbytes(rng.choice([0, 1, 17, 500])).hex() for _ in range(n)]
            spec.append((f"feature_{rng.getrandbits(20):05x}_{i}", kind, values))
        specs.append(spec)
    return specs


def spec_to_tf(spec):
    import tensorflow as tf
    features = {}
    for name, kind, values in spec:
        if kind == "int64":
            features[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif kind == "float":
            floats = [struct.unpack("<f", struct.pack("<I", b))[0] for b in values]
            features[name] = tf.train.Feature(float_list=tf.train.FloatList(value=floats))
        elif kind == "bytes":
            features[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes.fromhex(v) for v in values]))
        else:
            features[name] = tf.train.Feature()
    return tf.train.Example(features=tf.train.Features(feature=features))


def spec_canonical(spec):
    return {name: (kind, values) for name, kind, values in spec}


def fixtures_both_ways(tmp):
    import tensorflow as tf
    files = sorted(glob.glob(os.path.join(FIXTURES, "tfrecord/sample_text-pretraining/*.tfrecord")))
    files.append(os.path.join(FIXTURES, "tfrecord/mrpc-run_classifier/train.tf_record"))
    for path in files:
        name = os.path.basename(path)
        original = tf_records(path)
        ours = os.path.join(tmp, name + ".ours")
        helper("reencode", path, ours)
        check(open(ours, "rb").read() == open(path, "rb").read(), f"{name}: re-encoding is not byte-identical")
        ours_sorted = os.path.join(tmp, name + ".sorted")
        helper("reencode", path, ours_sorted, "--sorted")
        for label, file in (("insertion order", ours), ("sorted", ours_sorted)):
            got = tf_records(file)  # TensorFlow verifies both CRCs of every record here
            check(len(got) == len(original), f"{name} ({label}): TF read {len(got)} records, want {len(original)}")
            same = sum(tf.train.Example.FromString(a) == tf.train.Example.FromString(b) for a, b in zip(got, original))
            check(same == len(original), f"{name} ({label}): {same}/{len(original)} records equal in TensorFlow")
        deterministic = [tf.train.Example.FromString(r).SerializeToString(deterministic=True) for r in original]
        check(tf_records(ours_sorted) == deterministic, f"{name}: sorted encoding != protobuf deterministic bytes")
        # Our reader decodes what TensorFlow decodes.
        ours_lines = helper("decode", path).decode().splitlines()[:-1]
        agree = sum(canonical_from_ours(l) == canonical(tf.train.Example.FromString(r)) for l, r in zip(ours_lines, original))
        check(agree == len(original), f"{name}: our decoding agrees with TF on {agree}/{len(original)} records")
        print(f"fixture {name}: {len(original)} records, byte-identical re-encode, TF reads ours, decode agreement "
              f"{100.0 * agree / len(original):.1f}%")


def edge_cases_ours_to_tf(tmp):
    import tensorflow as tf
    specs = edge_examples()
    jsonl = os.path.join(tmp, "edge.jsonl")
    with open(jsonl, "w") as f:
        for spec in specs:
            f.write(json.dumps([{"name": n, "kind": k, "values": v} for n, k, v in spec]) + "\n")
    out, out_sorted = os.path.join(tmp, "edge.tfrecord"), os.path.join(tmp, "edge.sorted.tfrecord")
    helper("write-json", jsonl, out)
    helper("write-json", jsonl, out_sorted, "--sorted")
    got, got_sorted = tf_records(out), tf_records(out_sorted)
    check(len(got) == len(specs), f"edge cases: TF read {len(got)} records, want {len(specs)}")
    agree = sum(canonical(tf.train.Example.FromString(r)) == spec_canonical(s) for r, s in zip(got, specs))
    check(agree == len(specs), f"edge cases: TF parses {agree}/{len(specs)} of our records to the intended values")
    # protobuf's upb backend sorts the empty key last in deterministic mode (C++ protobuf sorts it first, as we
    # do), so records with an empty key are left out of the byte comparison (their values are compared above).
    comparable = [(r, s) for r, s in zip(got_sorted, specs) if all(name for name, _, _ in s)]
    exact = sum(r == spec_to_tf(s).SerializeToString(deterministic=True) for r, s in comparable)
    check(exact == len(comparable), f"edge cases: {exact}/{len(comparable)} sorted encodings equal protobuf deterministic bytes")
    # tf.io.parse_single_example on the typed first record (the path a TF input pipeline takes).
    spec = specs[0]
    parsed = tf.io.parse_single_example(got[0], {
        "ints": tf.io.VarLenFeature(tf.int64), "floats": tf.io.VarLenFeature(tf.float32),
        "bytes": tf.io.VarLenFeature(tf.string)})
    check(list(parsed["ints"].values.numpy()) == spec[0][2], "parse_single_example: int64 values differ")
    check([f32_bits(v) for v in parsed["floats"].values.numpy().tolist()] == spec[1][2],
          "parse_single_example: float bits differ")
    check([v.hex() for v in parsed["bytes"].values.numpy()] == spec[2][2], "parse_single_example: bytes differ")
    print(f"edge cases ours -> TF: {len(specs)} records, value agreement {100.0 * agree / len(specs):.1f}%, "
          f"sorted byte-exact vs protobuf deterministic {exact}/{len(comparable)}")
    return specs


def tf_to_ours(tmp, specs):
    import tensorflow as tf
    rng = random.Random(11)
    payloads = [b"", b"x", bytes(range(256)) * 3, rng.randbytes(1 << 20), rng.randbytes(70000)]
    payloads += [rng.randbytes(rng.randrange(0, 5000)) for _ in range(50)]
    for compression in ("", "GZIP"):
        path = os.path.join(tmp, f"tf_raw.{compression or 'plain'}")
        with tf.io.TFRecordWriter(path, options=compression or None) as w:
            for p in payloads:
                w.write(p)
        lines = helper("dump", path).decode().splitlines()
        same = sum(bytes.fromhex(l) == p for l, p in zip(lines, payloads))
        check(len(lines) == len(payloads) and same == len(payloads),
              f"TF-written raw records ({compression or 'plain'}): ours read {same}/{len(payloads)} equal")
        path = os.path.join(tmp, f"tf_examples.{compression or 'plain'}")
        with tf.io.TFRecordWriter(path, options=compression or None) as w:
            for s in specs:
                w.write(spec_to_tf(s).SerializeToString())
        lines = helper("decode", path).decode().splitlines()[:-1]
        agree = sum(canonical_from_ours(l) == spec_canonical(s) for l, s in zip(lines, specs))
        check(len(lines) == len(specs) and agree == len(specs),
              f"TF-written Examples ({compression or 'plain'}): ours decode {agree}/{len(specs)} to the intended values")
        print(f"TF -> ours ({compression or 'plain'}): {len(payloads)} raw records equal: {same}; "
              f"{len(specs)} Examples decoded equal: {agree}")


def corruption_rejected_by_both(tmp):
    import tensorflow as tf
    path = os.path.join(tmp, "tf_raw.plain")
    data = bytearray(open(path, "rb").read())
    data[16 + 17 + 12 + 100] ^= 0x01  # inside the data of the third record (after "" and "x": 16 + 17 bytes)
    bad = os.path.join(tmp, "corrupt.tfrecord")
    open(bad, "wb").write(bytes(data))
    try:
        tf_records(bad)
        tf_rejects = False
    except tf.errors.DataLossError:
        tf_rejects = True
    proc = subprocess.run([HELPER, "dump", bad], capture_output=True)
    msg = proc.stderr.decode().strip()
    check(tf_rejects, "TensorFlow accepted a corrupt record")
    check(proc.returncode == 1 and f"{bad}: record 2 at byte 33: corrupt data (CRC32C mismatch over 768 bytes)" in msg, f"ours on a corrupt record: {msg}")
    print(f"corrupt record: TensorFlow rejects: {tf_rejects}; ours: {msg}")


def main():
    if not os.access(HELPER, os.X_OK):
        print(f"SKIP: {HELPER} not built")
        return 77
    try:
        import tensorflow as tf
    except ImportError as e:
        print(f"SKIP: tensorflow not importable ({e})")
        return 77
    print(f"TensorFlow {tf.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        if FIXTURES and os.path.isdir(os.path.join(FIXTURES, "tfrecord")):
            fixtures_both_ways(tmp)
        else:
            print("fixtures missing: fixture round trips skipped")
        specs = edge_cases_ours_to_tf(tmp)
        tf_to_ours(tmp, specs)
        corruption_rejected_by_both(tmp)
    return check.exit_code("tfrecord compat")


if __name__ == "__main__":
    sys.exit(main())
