"""tfrecord2hdf5 against TensorFlow's own parser and h5py.

1. The sample_text fixture (records written by google-research/bert) converted to the NVIDIA layout: h5py reads
   exactly the values TensorFlow parses from the TFRecord, with NVIDIA's loader semantics (the first 0 in
   masked_lm_positions ends the predictions), and the dtypes NVIDIA's writer uses.
2. The same to MLPerf's variable-length layout: the vlen rows are the unpadded values.
3. The MRPC classifier records (run_classifier.py features) with the generic mapping: one column per feature,
   every value equal to TensorFlow's.
"""
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, require_fixtures, skip

require_fixtures()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import h5py
    import numpy as np
    import tensorflow as tf
except Exception as e:  # noqa: BLE001
    skip(f"peer missing: {e}")


def tf_records(path):
    out = []
    for raw in tf.data.TFRecordDataset(path):
        ex = tf.train.Example.FromString(raw.numpy())
        out.append({k: np.array(list(v.int64_list.value) or list(v.float_list.value))
                    for k, v in ex.features.feature.items()})
    return out


def convert(args):
    subprocess.run([os.path.join(BIN, "tfrecord2hdf5"), "-q", "-f"] + args, check=True)


def main():
    ok = True
    sample = f"{FIXTURES}/tfrecord/sample_text-pretraining/Heytgala-BERT-Model.tf_examples.tfrecord"
    mrpc = f"{FIXTURES}/tfrecord/mrpc-run_classifier/train.tf_record"
    with tempfile.TemporaryDirectory() as tmp:
        expected = tf_records(sample)
        convert(["-o", f"{tmp}/n.hdf5", sample])
        with h5py.File(f"{tmp}/n.hdf5", "r") as f:
            dtypes = {k: f[k].dtype.str for k in f}
            want = {"input_ids": "<i4", "input_mask": "|i1", "segment_ids": "|i1", "masked_lm_positions": "<i4",
                    "masked_lm_ids": "<i4", "next_sentence_labels": "|i1"}
            same = 0
            for i, e in enumerate(expected):
                positions = f["masked_lm_positions"][i]
                index = int(np.argmax(positions == 0)) if (positions == 0).any() else len(positions)
                real = int(e["masked_lm_weights"].sum())
                same += bool((f["input_ids"][i] == e["input_ids"]).all() and (f["input_mask"][i] == e["input_mask"]).all()
                             and (f["segment_ids"][i] == e["segment_ids"]).all()
                             and (f["masked_lm_positions"][i] == e["masked_lm_positions"]).all()
                             and (f["masked_lm_ids"][i] == e["masked_lm_ids"]).all() and index == real
                             and f["next_sentence_labels"][i] == e["next_sentence_labels"][0])
            print(f"nvidia layout: {same}/{len(expected)} records equal TensorFlow's values; dtypes {dtypes}")
            ok &= same == len(expected) == f["input_ids"].shape[0] and dtypes == want

        convert(["--layout", "varlength", "-o", f"{tmp}/v.hdf5", sample])
        with h5py.File(f"{tmp}/v.hdf5", "r") as f:
            same = 0
            for i, e in enumerate(expected):
                n = int(e["input_mask"].sum())
                p = int(e["masked_lm_weights"].sum())
                same += bool(list(f["input_ids"][i]) == list(e["input_ids"][:n])
                             and list(f["segment_ids"][i]) == list(e["segment_ids"][:n])
                             and list(f["masked_lm_positions"][i]) == list(e["masked_lm_positions"][:p])
                             and list(f["masked_lm_ids"][i]) == list(e["masked_lm_ids"][:p])
                             and f["next_sentence_labels"][i] == e["next_sentence_labels"][0])
            print(f"varlength layout: {same}/{len(expected)} records equal TensorFlow's unpadded values; "
                  f"input_ids dtype {h5py.check_vlen_dtype(f['input_ids'].dtype)}")
            ok &= same == len(expected) == f["input_ids"].shape[0]

        expected = tf_records(mrpc)
        convert(["-o", f"{tmp}/m.hdf5", mrpc])
        with h5py.File(f"{tmp}/m.hdf5", "r") as f:
            names = sorted(f.keys())
            same = 0
            for name in names:
                column = f[name][()]
                theirs = np.stack([e[name] for e in expected]).reshape(column.shape)
                same += bool((column == theirs).all())
            print(f"generic mapping (MRPC): {len(expected)} records, columns {names}, {same}/{len(names)} equal")
            ok &= names == sorted(expected[0].keys()) and same == len(names)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
