"""mkpretrain against google-research/bert's create_pretraining_data.py.

Proof 1: the three fixture TFRecords were written by the reference from sample_text.txt (flags in SOURCES.md).
  Every one of the 60 records must be reproduced: same features and values (TensorFlow parses both files), and
  the same bytes once our feature-map entries are put in the order that file happened to serialise them in
  (protobuf map order is an accident of the writer; the three fixture files already differ in it).
Proof 2: the reference script itself (PyPI bert-tensorflow 1.0.4, run in this process) on other inputs and flags:
  longer sequences, cased, other seeds (one above 2**64), several input files, HDF5 output, whole-word masking.
  Records are compared one by one, in order.

Difference between the packaged 1.0.4 script and HEAD (DESIGN.md 5): 1.0.4 has no --do_whole_word_mask. For the
whole-word cases the test swaps the packaged create_masked_lm_predictions for one written here from the rule in
DESIGN.md 5 (candidates grouped by "##" continuation, a group that would overflow is skipped, a group with a covered
position is skipped); document reading, chunking, random next, truncation and the random stream stay the
reference's own code.
"""
import os
import struct
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, require_fixtures, skip
from reference_masking import whole_word_predictions

MKPRETRAIN = os.path.join(BIN, "mkpretrain")
require_fixtures()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import h5py
    import numpy as np
    import tensorflow as tf
    from absl import flags
    from bert import create_pretraining_data as reference
except Exception as e:  # noqa: BLE001 - the peer is not installed
    skip(f"cannot import the reference: {e}")

UNCASED = f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt"
CASED = f"{FIXTURES}/vocab/bert-base-cased-vocab.txt"
SAMPLE = f"{FIXTURES}/pretraining_text/sample_text.txt"


def parse_records(path):
    """Each record as {feature: list of values}, parsed by TensorFlow."""
    out = []
    for raw in tf.data.TFRecordDataset(path):
        ex = tf.train.Example.FromString(raw.numpy())
        out.append({k: list(v.int64_list.value) or list(v.float_list.value) for k, v in ex.features.feature.items()})
    return out


def raw_records(path):
    data = open(path, "rb").read()
    records, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack("<Q", data[pos:pos + 8])
        records.append(data[pos + 12:pos + 12 + n])
        pos += 16 + n
    return records


def varint(b, i):
    value = shift = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def map_entries(record):
    """The raw map entries of an Example (field 1 of field 1), as (key, entry bytes) in wire order."""
    def fields(b):
        i, out = 0, []
        while i < len(b):
            _, i = varint(b, i)
            n, i = varint(b, i)
            out.append(b[i:i + n])
            i += n
        return out
    entries = []
    for entry in fields(fields(record)[0]):
        key = fields(entry)[0].decode()
        entries.append((key, entry))
    return entries


def reorder(record, order):
    """Our record with its map entries put in `order` (a list of keys); the framing bytes are rebuilt."""
    def ld(tag, payload):
        out, n = bytes([tag]), len(payload)
        while True:
            out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
            n >>= 7
            if not n:
                return out + payload
    entries = dict(map_entries(record))
    features = b"".join(ld(0x0A, entries[k]) for k in order)
    return ld(0x0A, features)


def run_ours(args, out):
    cmd = [MKPRETRAIN, "-q", "-f", "-o", out] + args
    subprocess.run(cmd, check=True)


def run_reference(inputs, out, vocab, lower, seq, preds, prob, short, seed, dupe, whole_word=False):
    argv = ["create_pretraining_data", f"--input_file={','.join(inputs)}", f"--output_file={out}",
            f"--vocab_file={vocab}", f"--do_lower_case={lower}", f"--max_seq_length={seq}",
            f"--max_predictions_per_seq={preds}", f"--masked_lm_prob={prob}", f"--short_seq_prob={short}",
            f"--random_seed={seed}", f"--dupe_factor={dupe}"]
    flags.FLAGS.unparse_flags()
    flags.FLAGS(argv)
    packaged = reference.create_masked_lm_predictions
    if whole_word:
        reference.create_masked_lm_predictions = whole_word_predictions
    try:
        reference.main(None)
    finally:
        reference.create_masked_lm_predictions = packaged


def documents_from_wikiextractor(path, limit_bytes):
    """WikiExtractor output -> paragraphs as 'sentences', a blank line after each document."""
    out, size = [], 0
    with open(path, encoding="utf-8") as f:
        title_next = False
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("<doc "):
                title_next = True
                continue
            if line.startswith("</doc>"):
                out.append("")
                if size > limit_bytes:
                    break
                continue
            if title_next:
                title_next = False
                continue
            if line.strip():
                out.append(line)
                size += len(line)
    return "\n".join(out) + "\n"


def compare(name, ours_path, ref_path):
    ours, ref = parse_records(ours_path), parse_records(ref_path)
    same = sum(a == b for a, b in zip(ours, ref))
    first_diff = next((i for i, (a, b) in enumerate(zip(ours, ref)) if a != b), None)
    print(f"{name}: reference {len(ref)} records, ours {len(ours)}, identical {same}"
          + (f" (first difference at record {first_diff})" if first_diff is not None else ""))
    return len(ref) > 0 and len(ours) == len(ref) and same == len(ref)


def main():
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        # Proof 1: the fixture files.
        ours = f"{tmp}/sample.tfrecord"
        run_ours(["--vocab", UNCASED, "--max-seq-length", "128", "--max-predictions", "20", "--masked-lm-prob",
                  "0.15", "--seed", "12345", "--dupe-factor", "5", SAMPLE], ours)
        ours_raw = raw_records(ours)
        fixture_dir = f"{FIXTURES}/tfrecord/sample_text-pretraining"
        for name in sorted(os.listdir(fixture_dir)):
            path = f"{fixture_dir}/{name}"
            ok &= compare(f"fixture {name}", ours, path)
            theirs = raw_records(path)
            byte_same = sum(reorder(o, [k for k, _ in map_entries(t)]) == t for o, t in zip(ours_raw, theirs))
            print(f"  bytes identical in that file's map order: {byte_same}/{len(theirs)}")
            ok &= byte_same == len(theirs) == 60

        # Proof 2: the reference run here on other inputs and flags.
        wiki = f"{tmp}/wiki.txt"
        with open(wiki, "w", encoding="utf-8") as f:
            f.write(documents_from_wikiextractor(f"{FIXTURES}/wiki/mlperf-extracted/wiki_00", 150_000))
        mrpc = f"{tmp}/mrpc.txt"
        with open(f"{FIXTURES}/glue/MRPC/dev.tsv", encoding="utf-8-sig") as f, open(mrpc, "w", encoding="utf-8") as g:
            rows = [r.rstrip("\n").split("\t") for r in f][1:]
            for i, r in enumerate(rows[:400]):
                g.write(f"{r[3]}\n{r[4]}\n" + ("\n" if i % 7 == 6 else ""))  # no blank line at the very end
        cases = [
            # name, inputs, vocab, lower, seq, preds, prob, short, seed, dupe, whole_word
            ("wiki uncased L=512 P=80", [wiki], UNCASED, True, 512, 80, 0.15, 0.1, 7, 2, False),
            ("wiki cased L=256 seed>2**64", [wiki], CASED, False, 256, 40, 0.2, 0.3, 2**70 + 3, 1, False),
            ("mrpc+sample two files, L=64", [mrpc, SAMPLE], UNCASED, True, 64, 10, 0.15, 0.1, 0, 3, False),
            ("wiki whole-word L=128", [wiki], UNCASED, True, 128, 20, 0.15, 0.1, 4242, 2, True),
            ("mrpc cased whole-word L=96", [mrpc], CASED, False, 96, 14, 0.25, 0.5, 31337, 2, True),
        ]
        for name, inputs, vocab, lower, seq, preds, prob, short, seed, dupe, wwm in cases:
            ref = f"{tmp}/ref.tfrecord"
            mine = f"{tmp}/ours.tfrecord"
            run_reference(inputs, ref, vocab, lower, seq, preds, prob, short, seed, dupe, wwm)
            args = ["--vocab", vocab, "--max-seq-length", str(seq), "--max-predictions", str(preds),
                    "--masked-lm-prob", str(prob), "--short-seq-prob", str(short), "--seed", str(seed),
                    "--dupe-factor", str(dupe), "--threads", "2"]
            if not lower:
                args.append("--cased")
            if wwm:
                args.append("--whole-word-mask")
            run_ours(args + inputs, mine)
            ok &= compare(name, mine, ref)

            if name.startswith("wiki uncased"):
                # The same instances in the NVIDIA HDF5 layout, read with h5py and NVIDIA's loader semantics.
                h5 = f"{tmp}/ours.hdf5"
                run_ours(args + ["--format", "hdf5"] + inputs, h5)
                expected = parse_records(ref)
                with h5py.File(h5, "r") as f:
                    n = f["input_ids"].shape[0]
                    good = 0
                    for i in range(n):
                        e = expected[i]
                        positions = f["masked_lm_positions"][i]
                        index = int(np.argmax(positions == 0)) if (positions == 0).any() else len(positions)
                        labels = np.full(seq, -1)
                        labels[positions[:index]] = f["masked_lm_ids"][i][:index]
                        ref_labels = np.full(seq, -1)
                        w = int(sum(e["masked_lm_weights"]))
                        ref_labels[e["masked_lm_positions"][:w]] = e["masked_lm_ids"][:w]
                        good += bool(list(f["input_ids"][i]) == e["input_ids"]
                                     and list(f["input_mask"][i]) == e["input_mask"]
                                     and list(f["segment_ids"][i]) == e["segment_ids"]
                                     and (labels == ref_labels).all()
                                     and int(f["next_sentence_labels"][i]) == e["next_sentence_labels"][0])
                    dtypes = {k: f[k].dtype.str for k in f}
                print(f"  hdf5 (nvidia layout): {good}/{len(expected)} samples equal the reference's; dtypes {dtypes}")
                ok &= good == len(expected) == n
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
