"""ckpt-convert --to tf against TensorFlow's own reader: the TF1 checkpoints we write are TensorFlow's.

- The keras-bert-tiny fixture (written by google-research/bert's run_pretraining.py) converted TF -> native -> tf,
  with and without --keep-optimizer: tf.train.list_variables and tf.train.load_checkpoint read it, and every variable
  of the original but global_step (the model's 46, and with --keep-optimizer their 92 adam_m / adam_v) is there with
  the same shape, dtype and value, bit for bit; nothing else is. tf.train.latest_checkpoint(DIR) names it, and
  tf.compat.v1.train.init_from_checkpoint (what google-research/bert's init_checkpoint runs) restores every model
  variable of a graph built with Google's names. bert_config.json holds Google's keys and the fixture's values;
  vocab.txt is the fixture's.
- Fine-tuned heads, as TensorFlow's Saver writes them with run_squad.py's and run_classifier.py's names
  (tests/compat/test_ckpt_convert_heads.py makes them the same way): TF -> native -> tf gives every variable back
  bit for bit, except a question-answering checkpoint's pooler, which BertForQuestionAnswering does not have.
- An HF BertForPreTraining saved by transformers -> tf: each variable equals transformers' parameter under
  google-research/bert's name (spelled out independently here), kernels transposed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from compat_common import BIN, FIXTURES, Checks, skip  # noqa: E402

TOOL = os.path.join(BIN, "ckpt-convert")
TINY_DIR = os.path.join(FIXTURES, "tf_checkpoint", "keras-bert-tiny")
TINY = os.path.join(TINY_DIR, "bert_model.ckpt")
if not os.access(TOOL, os.X_OK) or not os.path.exists(TINY + ".index"):
    skip("ckpt-convert not built or fixtures missing")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

check = Checks()


def convert(*args):
    subprocess.run([TOOL, "-q", *args], check=True)


def variables(prefix):
    """{name: (dtype name, shape, value)} through TensorFlow's reader."""
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    shapes = reader.get_variable_to_shape_map()
    return {n: (dtypes[n].name, list(shapes[n]), reader.get_tensor(n)) for n in shapes}


def bit_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def compare(original, ours, what, skip_name=lambda n: False):
    """Every variable of `original` but the bookkeeping ones and `skip_name`'s is in `ours`, the same bit for bit;
    `ours` holds nothing else."""
    wanted = {n for n in original if n != "global_step" and not skip_name(n)}
    check(set(ours) == wanted, f"{what}: the variables are the original's ({len(wanted)}; extra "
          f"{sorted(set(ours) - wanted)[:3]}, missing {sorted(wanted - set(ours))[:3]})")
    same = [n for n in wanted & set(ours)
            if original[n][0] == ours[n][0] and original[n][1] == ours[n][1] and bit_equal(original[n][2], ours[n][2])]
    check(len(same) == len(wanted), f"{what}: {len(same)} of {len(wanted)} variables have the original's dtype, "
          "shape and value, bit for bit")


def init_from_checkpoint_restores(prefix, expected):
    """google-research/bert's init_checkpoint path: variables made with Google's names in a fresh graph, assigned from
    the checkpoint by tf.compat.v1.train.init_from_checkpoint; True when every one gets the checkpoint's value."""
    graph = tf.Graph()
    with graph.as_default():
        made = {n: tf.compat.v1.get_variable(n, shape=v.shape, dtype=tf.float32,
                                              initializer=tf.compat.v1.zeros_initializer())
                for n, v in expected.items()}
        tf.compat.v1.train.init_from_checkpoint(prefix, {n: n for n in made})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            got = session.run(made)
    return all(bit_equal(got[n], expected[n]) for n in expected)


def main():
    tmp = tempfile.mkdtemp(prefix="ckpt-convert-tf-")
    try:
        original = variables(TINY)
        check(len(original) == 139, f"the fixture holds 139 variables ({len(original)})")

        # --- TF -> native -> tf, with the optimizer's moments -----------------------------------------------------
        native = os.path.join(tmp, "native")
        out_dir = os.path.join(tmp, "tf")
        prefix = os.path.join(out_dir, "bert_model.ckpt")
        convert("--to", "native", "--keep-optimizer", "-o", native, TINY)
        convert("--to", "tf", "--keep-optimizer", "-o", prefix, native)
        listed = tf.train.list_variables(prefix)
        check(len(listed) == 138 and [n for n, _ in listed] == sorted(n for n, _ in listed),
              f"tf.train.list_variables reads it: {len(listed)} variables, sorted")
        ours = variables(prefix)
        compare(original, ours, "TF -> native -> tf --keep-optimizer")
        check(tf.train.latest_checkpoint(out_dir) == prefix,
              f"tf.train.latest_checkpoint(DIR) = {tf.train.latest_checkpoint(out_dir)}")
        state = tf.train.get_checkpoint_state(out_dir)
        check(state is not None and os.path.basename(state.model_checkpoint_path) == "bert_model.ckpt",
              "the checkpoint file parses as TensorFlow's CheckpointState")
        model = {n: v[2] for n, v in original.items() if n != "global_step" and not n.endswith(("/adam_m", "/adam_v"))}
        check(len(model) == 46 and init_from_checkpoint_restores(prefix, model),
              "tf.compat.v1.train.init_from_checkpoint restores all 46 model variables with their values")
        with open(os.path.join(TINY_DIR, "bert_config.json")) as f:
            google = json.load(f)
        with open(os.path.join(out_dir, "bert_config.json")) as f:
            written = json.load(f)
        # The keys google-research/bert's modeling.BertConfig takes (the fixture's file has more, for other tools).
        keys = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
                "type_vocab_size", "initializer_range")
        check(all(written.get(k) == google[k] for k in keys),
              "bert_config.json beside it has modeling.BertConfig's keys with the fixture's values")
        with open(os.path.join(TINY_DIR, "vocab.txt"), "rb") as a, open(os.path.join(out_dir, "vocab.txt"), "rb") as b:
            check(a.read() == b.read(), "vocab.txt beside it is the fixture's")
        # Our reader agrees with TensorFlow's listing of our file.
        lines = subprocess.run([TOOL, "--list", prefix], check=True, capture_output=True, text=True).stdout
        ours_listed = [(line.split(" (")[0], json.loads(line.split(") ")[1])) for line in lines.splitlines() if " (" in line]
        check(ours_listed == [(n, s) for n, s in listed], "ckpt-convert --list = tf.train.list_variables on our output")

        # --- TF -> tf directly, the model only; -f over an existing checkpoint ------------------------------------
        r = subprocess.run([TOOL, "-q", "--to", "tf", "-o", prefix, TINY], capture_output=True, text=True)
        check(r.returncode == 1 and "already exists" in r.stderr, f"an existing checkpoint is refused: {r.stderr.strip()}")
        check(variables(prefix).keys() == ours.keys(), "the refused run left the checkpoint as it was")
        convert("-f", "--to", "tf", "-o", out_dir, TINY)  # a directory stands for DIR/bert_model.ckpt
        compare(original, variables(prefix), "TF -> tf (model only) over the old one with -f",
                skip_name=lambda n: n.endswith(("/adam_m", "/adam_v")))
        check(not [f for f in os.listdir(out_dir) if "partial" in f or f.endswith(".old")],
              f"nothing but the checkpoint's files left in {out_dir}: {sorted(os.listdir(out_dir))}")

        # --- fine-tuned heads --------------------------------------------------------------------------------------
        heads = [("squad", {"cls/squad/output_weights": 2, "cls/squad/output_bias": None}),
                 ("mnli", {"output_weights": 3, "output_bias": None})]
        for task, head in heads:
            made = os.path.join(tmp, task, "model.ckpt")
            os.makedirs(os.path.dirname(made))
            write_head_checkpoint(made, head)
            task_native, task_tf = os.path.join(tmp, task + "-native"), os.path.join(tmp, task + "-tf", "model.ckpt")
            convert("--to", "native", "-o", task_native, made)
            convert("--to", "tf", "-o", task_tf, task_native)
            compare(variables(made), variables(task_tf), f"{task}: TF -> native -> tf",
                    skip_name=(lambda n: n.startswith("bert/pooler/")) if task == "squad" else (lambda n: False))
            check(tf.train.latest_checkpoint(os.path.dirname(task_tf)) == task_tf, f"{task}: latest_checkpoint finds it")

        # --- from transformers' names ------------------------------------------------------------------------------
        hf_to_tf(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return check.exit_code("ckpt-convert --to tf")


def write_head_checkpoint(prefix, head):
    """The fixture's encoder (no pretraining heads, no optimizer slots) plus a fine-tuned head, saved by TensorFlow's
    Saver, with bert_config.json and vocab.txt beside it."""
    reader = tf.train.load_checkpoint(TINY)
    values = {n: reader.get_tensor(n) for n, _ in tf.train.list_variables(TINY)
              if n.startswith("bert/") and not n.endswith(("adam_m", "adam_v"))}
    hidden = values["bert/pooler/dense/bias"].shape[0]
    labels = next(v for v in head.values() if v)
    rng = np.random.default_rng(5)
    for name, rows in head.items():
        shape = (rows, hidden) if rows else (labels,)
        values[name] = (0.3 * rng.standard_normal(shape)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        made = [tf.compat.v1.get_variable(n, initializer=tf.constant(v)) for n, v in values.items()]
        saver = tf.compat.v1.train.Saver(made)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix, write_meta_graph=False)
    for name in ("bert_config.json", "vocab.txt"):
        shutil.copy(os.path.join(TINY_DIR, name), os.path.dirname(prefix))


def google_name(hf_name):
    """google-research/bert's variable for a transformers BertForPreTraining parameter, and whether it is stored
    transposed (dense kernels are [in, out]; Linear weights [out, in])."""
    fixed = {"cls.predictions.bias": "cls/predictions/output_bias",
             "cls.seq_relationship.weight": "cls/seq_relationship/output_weights",
             "cls.seq_relationship.bias": "cls/seq_relationship/output_bias"}
    if hf_name in fixed:
        return fixed[hf_name], False
    parts = hf_name.replace(".layer.", ".layer_").split(".")
    *path, owner, last = parts
    if owner == "LayerNorm":
        return "/".join(path + [owner, "gamma" if last == "weight" else "beta"]), False
    if owner.endswith("_embeddings"):
        return "/".join(path + [owner]), False
    return "/".join(path + [owner, "kernel" if last == "weight" else "bias"]), last == "weight"


def hf_to_tf(tmp):
    import torch
    from transformers import BertConfig, BertForPreTraining
    torch.manual_seed(4)
    config = BertConfig(vocab_size=24, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=12, max_position_embeddings=16)
    model = BertForPreTraining(config)
    src = os.path.join(tmp, "hf-src")
    model.save_pretrained(src, safe_serialization=True)
    with open(os.path.join(src, "vocab.txt"), "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(19)]) + "\n")
    prefix = os.path.join(tmp, "hf-tf", "bert_model.ckpt")
    convert("--to", "tf", "-o", prefix, src)
    got = variables(prefix)
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()
             if not k.startswith("cls.predictions.decoder.") and k != "bert.embeddings.position_ids"}
    expected = {}
    for k, v in state.items():
        name, transpose = google_name(k)
        expected[name] = np.ascontiguousarray(v.T) if transpose else v
    check(set(got) == set(expected), f"transformers -> tf: Google's {len(expected)} variable names "
          f"(extra {sorted(set(got) - set(expected))[:3]}, missing {sorted(set(expected) - set(got))[:3]})")
    same = [n for n in expected if n in got and got[n][0] == "float32" and bit_equal(got[n][2], expected[n])]
    check(len(same) == len(expected), f"transformers -> tf: {len(same)} of {len(expected)} variables equal "
          "transformers' parameters (kernels transposed), bit for bit")
    with open(os.path.join(os.path.dirname(prefix), "bert_config.json")) as f:
        written = json.load(f)
    check(written["vocab_size"] == 24 and written["hidden_size"] == 8 and "model_type" not in written,
          "transformers -> tf: bert_config.json in Google's keys")


if __name__ == "__main__":
    sys.exit(main())
