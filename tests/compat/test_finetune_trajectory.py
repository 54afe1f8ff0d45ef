"""bert-finetune train against HF transformers: the same initial weights (an HF model saved with save_pretrained,
head included), dropout 0, the same batches, 20 optimizer steps of AdamW. Ours: the real tool on features written
here with TensorFlow in Google's layouts (run_classifier.py's and run_squad.py's feature names). HF:
BertForSequenceClassification / BertForQuestionAnswering, their own loss (labels / start_positions+end_positions),
torch.nn.utils.clip_grad_norm_(1.0), torch.optim.AdamW with weight decay except on biases and LayerNorm, and the
learning rate of step t (from 1) written here from the schedule bert-finetune documents: linear warm-up over the
first 10% of the steps, then linear decay to 0 (lr * (1 - p) / (1 - 0.1), p = t / 20). Asserted: every step's loss
within 1e-5 relative, every final weight within 1e-5, except qa_outputs.bias: the start/end softmax over positions
is shift-invariant, so that bias's gradient is zero in exact arithmetic, and Adam's normalisation turns the rounding
noise both sides leave in it into steps of up to lr; it is held to 1e-3.

The same for ModernBERT: ModernBertForSequenceClassification (mean pooling) and ModernBertForQuestionAnswering
(whose span layer is named classifier: its bias is held as qa_outputs.bias is), no token types, weight decay except
on biases and norms.

Every step takes all 16 features (batch 16, one micro-batch), so the order bert-finetune draws does not matter.
A classification case also has a head missing from the checkpoint: a bare BertModel saved by transformers (no
"bert." prefix, no classifier) must load, with the head initialised, and train; it is checked to run and log.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, Checks, skip

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
    import torch
    from safetensors.torch import load_file
    from transformers import (BertConfig, BertForQuestionAnswering, BertForSequenceClassification, BertModel,
                              ModernBertConfig, ModernBertForQuestionAnswering, ModernBertForSequenceClassification)
except ImportError as e:
    skip(e)

from lamb_reference import takes_decay

FINETUNE = os.path.join(BIN, "bert-finetune")
if not os.access(FINETUNE + "-torch", os.X_OK):
    skip(f"no bert-finetune-torch beside '{FINETUNE}' (a build without -DBERTKIT_WITH_TORCH=ON)")

STEPS, BATCH, SEQ, VOCAB = 20, 16, 32, 101
LR, WARMUP = 2e-3, 0.1
CONFIG = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=64,
              initializer_range=0.05)
# 3 layers (global, local, local) with a window of 8 over rows of up to 32 tokens.
MODERN = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=48,
              max_position_embeddings=64, local_attention=8, pad_token_id=0, bos_token_id=None, eos_token_id=None,
              cls_token_id=2, sep_token_id=3, initializer_range=0.05)
torch.set_num_threads(2)


def make_features(seed, squad):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(BATCH):
        length = SEQ if i == 0 else int(rng.integers(8, SEQ + 1))
        ids = np.zeros(SEQ, np.int64)
        ids[:length] = rng.integers(5, VOCAB, length)
        mask = (np.arange(SEQ) < length).astype(np.int64)
        seg = ((np.arange(SEQ) >= length // 2) & (mask == 1)).astype(np.int64)
        row = {"input_ids": ids, "input_mask": mask, "segment_ids": seg}
        if squad:
            start = int(rng.integers(length // 2, length - 1))
            row.update(unique_ids=1000000000 + i, start_positions=start,
                       end_positions=min(length - 2, start + int(rng.integers(0, 3))))
        else:
            row.update(label_ids=int(rng.integers(0, 2)), is_real_example=1)
        rows.append(row)
    return rows


def write_features(path, rows):
    """As run_squad.py's FeatureWriter / run_classifier.py's file_based_convert_examples_to_features write them."""
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(np.atleast_1d(values).astype(np.int64))))
    with tf.io.TFRecordWriter(path) as w:
        for row in rows:
            w.write(tf.train.Example(features=tf.train.Features(feature={k: ints(v) for k, v in row.items()}))
                    .SerializeToString())


def schedule(t):
    p = t / STEPS
    return LR * p / WARMUP if p < WARMUP else LR * max(0.0, (1 - p) / (1 - WARMUP))


def hf_run(model, rows, squad, modern=False):
    batch = {k: torch.tensor(np.stack([r[k] for r in rows])) for k in ("input_ids", "input_mask", "segment_ids")}
    kwargs = dict(input_ids=batch["input_ids"], attention_mask=batch["input_mask"])
    if not modern:  # ModernBERT has no token types
        kwargs.update(token_type_ids=batch["segment_ids"])
    if squad:
        kwargs.update(start_positions=torch.tensor([r["start_positions"] for r in rows]),
                      end_positions=torch.tensor([r["end_positions"] for r in rows]))
    else:
        kwargs.update(labels=torch.tensor([r["label_ids"] for r in rows]))
    params = dict(model.named_parameters())
    decays = (lambda n: not (n.endswith("bias") or "norm" in n)) if modern else takes_decay
    groups = [{"params": [p for n, p in params.items() if decays(n)], "weight_decay": 0.01},
              {"params": [p for n, p in params.items() if not decays(n)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.999), eps=1e-6)
    losses = []
    model.train()
    for t in range(1, STEPS + 1):
        opt.zero_grad(set_to_none=True)
        loss = model(**kwargs).loss
        loss.backward()
        losses.append(loss.item())
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        for group in opt.param_groups:
            group["lr"] = schedule(t)
        opt.step()
    return losses


def run_ours(tmp, name, task, features, init_dir, steps=STEPS, extra=()):
    out = os.path.join(tmp, name)
    cmd = [FINETUNE, "train", "--precision", "fp32", "--task", task, "--init-checkpoint", init_dir, "--train-file",
           features, "--output-dir", out, "--train-batch-size", str(BATCH), "--max-steps", str(steps),
           "--learning-rate", str(LR), "--warmup-proportion", str(WARMUP), "--no-tensorboard", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bert-finetune failed ({proc.returncode}): {proc.stderr}")
    with open(os.path.join(out, "log.jsonl")) as f:
        losses = [json.loads(line)["loss"] for line in f if '"loss"' in line]
    with open(os.path.join(out, "checkpoints", "latest")) as f:
        ckpt = os.path.join(out, "checkpoints", f.read().strip())
    return losses, load_file(os.path.join(ckpt, "model.safetensors")), proc.stderr, ckpt


def check_hf_export(check, tmp, name, trained, cls, weights, squad):
    from transformers import AutoModelForQuestionAnswering, AutoModelForSequenceClassification
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("".join(t + "\n" for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(5, VOCAB)]))
    out = os.path.join(tmp, f"{name}-hf")
    proc = subprocess.run([os.path.join(BIN, "ckpt-convert"), "--to", "hf", "-o", out, "--vocab", vocab, trained],
                          capture_output=True, text=True)
    if not check(proc.returncode == 0, f"{name}: ckpt-convert --to hf failed: {proc.stderr}"):
        return
    auto = AutoModelForQuestionAnswering if squad else AutoModelForSequenceClassification
    model, info = auto.from_pretrained(out, output_loading_info=True)
    d = max((v - weights[k]).abs().max().item() for k, v in model.state_dict().items())
    print(f"{name}: --to hf, {auto.__name__} built {type(model).__name__}, max |w - ours| {d:.1e}; {proc.stderr.strip()}")
    check(type(model) is cls and not any(info.values()) and d == 0,
          f"{name}: the export loads as {type(model).__name__} ({info}), weights differ by {d}")
    # --to pt: the task class's own state dict (no decoder of the masked-LM model), loaded strictly.
    pt = os.path.join(tmp, f"{name}.pt")
    proc = subprocess.run([os.path.join(BIN, "ckpt-convert"), "-q", "--to", "pt", "-o", pt, trained], capture_output=True,
                          text=True)
    missing, unexpected = model.load_state_dict(torch.load(pt)["model"], strict=False) if proc.returncode == 0 else ([], [])
    check(proc.returncode == 0 and not missing and not unexpected,
          f"{name}: --to pt: {proc.stderr} missing {missing}, unexpected {unexpected}")
    # --to native then --list: the task class is still known (both name their output layer classifier).
    native = os.path.join(tmp, f"{name}-native")
    proc = subprocess.run([os.path.join(BIN, "ckpt-convert"), "-q", "--to", "native", "-o", native, "--vocab", vocab,
                           trained], capture_output=True, text=True)
    listing = subprocess.run([os.path.join(BIN, "ckpt-convert"), "--list", native], capture_output=True, text=True)
    check(f"# Architecture: {cls.__name__}," in listing.stdout, f"{name}: --to native then --list: {listing.stdout[-150:]}")
    # A checkpoint of the other task class is refused, though its tensors have the same names and shapes.
    other = "mrpc" if squad else "squad"
    proc = subprocess.run([FINETUNE, "train", "--task", other, "--init-checkpoint", out, "--train-file",
                           os.path.join(tmp, f"{other}.tfrecord"), "--output-dir", os.path.join(tmp, f"{name}-other"),
                           "--train-batch-size", str(BATCH), "-q"], capture_output=True, text=True)
    check(proc.returncode == 1 and "a checkpoint fine-tuned for" in proc.stderr,
          f"{name}: training {other} from it: exit {proc.returncode}, {proc.stderr!r}")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="bertkit-finetune-") as tmp:
        cases = (("mrpc", False, BertForSequenceClassification, BertConfig(**CONFIG, num_labels=2)),
                 ("squad", True, BertForQuestionAnswering, BertConfig(**CONFIG, num_labels=2)),
                 ("mrpc", False, ModernBertForSequenceClassification,
                  ModernBertConfig(**MODERN, num_labels=2, classifier_pooling="mean")),
                 ("squad", True, ModernBertForQuestionAnswering, ModernBertConfig(**MODERN, num_labels=2)))
        for task, squad, cls, config in cases:
            modern = cls.__name__.startswith("Modern")
            name = ("modern-" if modern else "") + task
            rows = make_features(7 if squad else 5, squad)
            features = os.path.join(tmp, f"{task}.tfrecord")
            write_features(features, rows)
            torch.manual_seed(11)
            model = cls(config)
            init_dir = os.path.join(tmp, f"init-{name}")
            model.save_pretrained(init_dir, safe_serialization=True)
            initial = {n: p.detach().clone() for n, p in model.named_parameters()}
            ref_losses = hf_run(model, rows, squad, modern)
            # 32-token SQuAD features: a question of at most 8 pieces (task.json records the windows for predict).
            windows = ("--max-query-length", "8") if squad else ()
            losses, weights, _, trained = run_ours(tmp, name, task, features, init_dir, extra=windows)
            label = f"{cls.__name__} ({task})"
            if not check(len(losses) == STEPS, f"{label}: {len(losses)} steps logged, expected {STEPS}"):
                continue
            loss_rel = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
            state = model.state_dict()
            span_bias = ("classifier.bias" if modern else "qa_outputs.bias") if squad else None
            diffs = {k: (v - state[k]).abs().max().item() for k, v in weights.items() if k != span_bias}
            if span_bias:
                noise = (weights[span_bias] - state[span_bias]).abs().max().item()
                check(noise <= 1e-3, f"{label}: {span_bias} differs by {noise:.2e}, beyond rounding noise")
            worst = max(diffs, key=diffs.get)
            moved = max((state[n] - initial[n]).abs().max().item() for n in initial)
            print(f"{label}: losses {ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}, max relative loss difference "
                  f"{loss_rel:.2e}; {len(diffs)} tensors, max |w - HF| {diffs[worst]:.2e} ({worst}); weights moved up "
                  f"to {moved:.3f}")
            check(loss_rel <= 1e-5, f"{label}: a step's loss differs by {loss_rel:.2e} relative")
            check(diffs[worst] <= 1e-5, f"{label}: {worst} differs by {diffs[worst]:.2e}")
            check(set(weights) == set(state), f"{label}: keys differ: {sorted(set(weights) ^ set(state))}")
            check(moved > 1e-2, f"{label}: the weights barely moved ({moved:.1e})")
            if modern:  # ckpt-convert --to hf: transformers' Auto class builds the same ModernBERT class, same weights
                check_hf_export(check, tmp, name, trained, cls, weights, squad)

        # Classification runs unpadded by default; rows cut to the batch's longest with a mask train the same weights.
        unpadded_losses, unpadded, _, _ = run_ours(tmp, "mrpc-unpadded", "mrpc", os.path.join(tmp, "mrpc.tfrecord"),
                                                   os.path.join(tmp, "init-mrpc"), extra=("--attention", "unpadded"))
        padded_losses, padded, _, _ = run_ours(tmp, "mrpc-padded", "mrpc", os.path.join(tmp, "mrpc.tfrecord"),
                                               os.path.join(tmp, "init-mrpc"), extra=("--attention", "padded"))
        gap = max((unpadded[k] - padded[k]).abs().max().item() for k in unpadded)
        print(f"mrpc: --attention unpadded vs padded, max weight difference {gap:.2e}")
        check(len(padded_losses) == STEPS and gap <= 1e-5, f"mrpc: unpadded and padded weights differ by {gap:.2e}")

        # A bare BertModel (no "bert." prefix, no pooler-less head): the classifier is initialised, the run trains.
        torch.manual_seed(12)
        bare = os.path.join(tmp, "bare")
        BertModel(BertConfig(**CONFIG)).save_pretrained(bare, safe_serialization=True)
        losses, weights, err, ckpt = run_ours(tmp, "from-bare", "mrpc", os.path.join(tmp, "mrpc.tfrecord"), bare, 3)
        check(len(losses) == 3 and "classifier.weight" in weights, "bare BertModel: 3 steps and a classifier")
        check("initialised" in err, f"bare BertModel: the log says the head was initialised: {err!r}")
        with open(os.path.join(ckpt, "task.json")) as f:
            check(json.load(f)["task"] == "mrpc", "the fine-tuned checkpoint records its task")
        # A checkpoint of another task is refused.
        proc = subprocess.run([FINETUNE, "train", "--task", "sst-2", "--init-checkpoint", ckpt, "--train-file",
                               os.path.join(tmp, "mrpc.tfrecord"), "--output-dir", os.path.join(tmp, "x"), "--train-batch-size", str(BATCH), "-q"],
                              capture_output=True, text=True)
        check(proc.returncode == 1 and "fine-tuned for mrpc" in proc.stderr,
              f"a checkpoint of another task: exit {proc.returncode}, {proc.stderr!r}")
        # bench: one JSON line per batch size on the fine-tuned checkpoint; a model without the head is refused.
        proc = subprocess.run([FINETUNE, "bench", "--precision", "fp32", "--checkpoint", ckpt, "--task", "mrpc",
                               "--batch-sizes", "1,3", "--iterations", "2", "--warmup", "1"], capture_output=True,
                              text=True)
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        check(proc.returncode == 0 and [x["batch_size"] for x in lines] == [1, 3] and
              all(x["seq_length"] == SEQ and x["sequences_per_second"] > 0 and
                  x["latency_ms"]["p50"] <= x["latency_ms"]["p99"] for x in lines),
              f"bench: {proc.returncode} {proc.stdout!r} {proc.stderr!r}")
        proc = subprocess.run([FINETUNE, "bench", "--checkpoint", bare, "--task", "mrpc"], capture_output=True, text=True)
        check(proc.returncode == 1 and "no classifier.weight" in proc.stderr, f"bench without a head: {proc.stderr!r}")
    return check.exit_code("finetune trajectory")


if __name__ == "__main__":
    sys.exit(main())
