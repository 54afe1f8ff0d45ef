"""ckpt-convert with fine-tuned heads, against TensorFlow and HF transformers.

TF1 side: checkpoints written here by TensorFlow's own Saver (tf.compat.v1) with the variable names of
google-research/bert's fine-tuning scripts: the encoder of the keras-bert-tiny fixture plus run_squad.py's
cls/squad/output_weights [2, H] and output_bias, or run_classifier.py's output_weights [3, H] and output_bias (both
[labels, H], multiplied with transpose_b, so not transposed). ckpt-convert --to hf must give a directory that
transformers' BertForQuestionAnswering / BertForSequenceClassification load strictly (no missing, unexpected or
mismatched key), with the heads' values equal to TensorFlow's; --to native must give a checkpoint bert-finetune
loads for the task (tests/torch_tools/model_probe forward-task), whose logits equal transformers' on the same
batch to 1e-5. HF side: a BertForSequenceClassification saved by transformers converts to native and back to hf
with every tensor unchanged.
"""
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from compat_common import BIN, FIXTURES, TORCH_TEST_TOOLS, Checks, skip  # noqa: E402

TOOL = os.path.join(BIN, "ckpt-convert")
PROBE = os.path.join(TORCH_TEST_TOOLS, "model_probe")
TINY = os.path.join(FIXTURES, "tf_checkpoint", "keras-bert-tiny", "bert_model.ckpt")
if not (os.access(TOOL, os.X_OK) and os.access(PROBE, os.X_OK) and os.path.exists(TINY + ".index")):
    skip("ckpt-convert, model_probe or the fixtures missing")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from transformers import BertConfig, BertForQuestionAnswering, BertForSequenceClassification  # noqa: E402


def write_tf_checkpoint(prefix, head):
    """The fixture's encoder variables (no pretraining heads, no optimizer slots) plus a fine-tuned head."""
    reader = tf.train.load_checkpoint(TINY)
    values = {n: reader.get_tensor(n) for n, _ in tf.train.list_variables(TINY)
              if n.startswith("bert/") and not n.endswith(("adam_m", "adam_v"))}
    hidden = values["bert/pooler/dense/bias"].shape[0]
    rng = np.random.default_rng(5)
    values.update({k: (0.3 * rng.standard_normal(shape)).astype(np.float32) for k, shape in head(hidden).items()})
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf.compat.v1.get_variable(name, initializer=tf.constant(value)) for name, value in values.items()]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix, write_meta_graph=False)
    with open(os.path.join(os.path.dirname(TINY), "bert_config.json")) as f:
        config = f.read()
    with open(os.path.join(os.path.dirname(prefix), "bert_config.json"), "w") as f:
        f.write(config)
    shutil.copy(os.path.join(os.path.dirname(TINY), "vocab.txt"), os.path.dirname(prefix))
    return values


def batch(vocab, seq=12, size=3):
    g = torch.Generator().manual_seed(9)
    ids = torch.randint(1, vocab, (size, seq), generator=g)
    mask = torch.ones(size, seq, dtype=torch.long)
    mask[1, seq - 4:] = 0
    return {"input_ids": ids * mask, "segment_ids": (torch.arange(seq) >= seq // 2).long().expand(size, seq) * mask,
            "attention_mask": mask}


def ours(native, task, b, tmp):
    bpath, opath = os.path.join(tmp, "batch.safetensors"), os.path.join(tmp, "out.safetensors")
    save_file({k: v.contiguous() for k, v in b.items()}, bpath)
    subprocess.run([PROBE, "forward-task", native, task, bpath, opath], check=True)
    return load_file(opath)


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="bertkit-heads-") as tmp:
        cases = [("squad", BertForQuestionAnswering, lambda h: {"cls/squad/output_weights": (2, h), "cls/squad/output_bias": (2,)}),
                 ("mnli", BertForSequenceClassification, lambda h: {"output_weights": (3, h), "output_bias": (3,)})]
        for task, cls, head in cases:
            os.makedirs(os.path.join(tmp, task))
            prefix = os.path.join(tmp, task, "model.ckpt")
            values = write_tf_checkpoint(prefix, head)
            hf, native = os.path.join(tmp, task + "-hf"), os.path.join(tmp, task + "-native")
            subprocess.run([TOOL, "-q", "--to", "hf", "-o", hf, prefix], check=True)
            subprocess.run([TOOL, "-q", "--to", "native", "-o", native, prefix], check=True)
            model, info = cls.from_pretrained(hf, output_loading_info=True)
            model.eval()
            check(not any(info.values()), f"{task}: {cls.__name__} loads --to hf strictly: {info}")
            state = model.state_dict()
            name = "qa_outputs" if task == "squad" else "classifier"
            tf_w = values["cls/squad/output_weights" if task == "squad" else "output_weights"]
            check(np.array_equal(state[f"{name}.weight"].numpy(), tf_w), f"{task}: {name}.weight = TensorFlow's, not transposed")
            b = batch(model.config.vocab_size)
            with torch.no_grad():
                out = model(input_ids=b["input_ids"], token_type_ids=b["segment_ids"], attention_mask=b["attention_mask"])
            mine = ours(native, task, b, tmp)
            if task == "squad":
                d = max((mine["start_logits"] - out.start_logits).abs().max().item(),
                        (mine["end_logits"] - out.end_logits).abs().max().item())
            else:
                d = (mine["logits"] - out.logits).abs().max().item()
            print(f"{task}: TF1 fine-tuned checkpoint -> hf and native; transformers {cls.__name__} strict; "
                  f"max |logit difference| with bert-finetune's model {d:.2e}")
            check(d <= 1e-5, f"{task}: logits differ by {d:.2e}")

        # HF -> native -> hf keeps every tensor.
        torch.manual_seed(3)
        hf_model = BertForSequenceClassification(BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                            num_attention_heads=2, intermediate_size=64, num_labels=2))
        src = os.path.join(tmp, "hf-src")
        hf_model.save_pretrained(src, safe_serialization=True)
        with open(os.path.join(src, "vocab.txt"), "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(94)]) + "\n")
        native, back = os.path.join(tmp, "hf-native"), os.path.join(tmp, "hf-back")
        subprocess.run([TOOL, "-q", "--to", "native", "-o", native, src], check=True)
        subprocess.run([TOOL, "-q", "--to", "hf", "-o", back, native], check=True)
        a, z = load_file(os.path.join(src, "model.safetensors")), load_file(os.path.join(back, "model.safetensors"))
        check(a.keys() == z.keys() and all(torch.equal(a[k], z[k]) for k in a),
              f"HF BertForSequenceClassification -> native -> hf: {len(z)} tensors unchanged")
    return check.exit_code("ckpt-convert heads")


if __name__ == "__main__":
    sys.exit(main())
