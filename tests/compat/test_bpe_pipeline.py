"""A RoBERTa-style run end to end on the demo corpus, then the same run with a ModernBERT config, through every
tool that takes a byte-level BPE tokenizer:

  wiki-clean + sent-seg (demo/enwiki-demo.xml) -> bpe train -> mkpretrain --tokenizer --full-sentences --masking none
  -> bert-train --tokenizer --no-nsp (dynamic masks from the tokenizer's <mask>) -> ckpt-convert --to hf

and transformers' pipeline("fill-mask") with the exported model and tokenizer (AutoTokenizer reads the copied
tokenizer.json) gives bert-eval --fill-mask's tokens and probabilities. Also checked: the data's vocabulary stamp
is the tokenizer's (a WordPiece --vocab is refused by bert-train), checkpoints carry tokenizer.json, and the
rows are <s> ... </s> with </s> between documents.

Then bert-finetune on the BERT run, its tokenizer.json found beside the checkpoint: SQuAD (features --tokenizer on
the first XQuAD article, train with the same file as --eval-file, predict) gives answers that are each a stretch of
their context, scored by the official script; MRPC (features --tokenizer, train, predict on a file and on --text /
--text-b) gives a label per row. tests/compat/test_bpe_finetune_features.py holds the features' comparison with HF.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, skip

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
if not os.path.exists(os.path.join(BIN, "bert-train")):
    skip("bert-train not built (needs LibTorch)")
try:
    import h5py
    from transformers import AutoTokenizer, pipeline
except ImportError as e:
    skip(f"no h5py or transformers: {e}")

TEXTS = ["The river flows <mask> the sea.", "It was built in the <mask> century by the king."]


def tool(*args, **kw):
    return subprocess.run([os.path.join(BIN, args[0]), *args[1:]], check=True, capture_output=True, text=True, **kw)


def corpus(tmp):
    articles, sentences = os.path.join(tmp, "articles.txt"), os.path.join(tmp, "sentences.txt")
    tool("wiki-clean", "-q", "-o", articles, os.path.join(SRC, "demo", "enwiki-demo.xml"))
    tool("sent-seg", "-q", "-o", sentences, articles)
    return sentences


def model_config(tmp, kind, tokenizer):
    vocab = json.load(open(tokenizer))
    size = len(vocab["model"]["vocab"])
    ids = {t["content"]: t["id"] for t in vocab["added_tokens"]}
    if kind == "bert":
        c = json.load(open(os.path.join(SRC, "tests", "fixtures", "tiny_bert_config.json")))
    else:
        c = json.load(open(os.path.join(SRC, "tests", "fixtures", "tiny_modernbert_config.json")))
        c.update(pad_token_id=ids["<pad>"], cls_token_id=ids["<s>"], bos_token_id=ids["<s>"], sep_token_id=ids["</s>"],
                 eos_token_id=ids["</s>"])
    c["vocab_size"] = size
    path = os.path.join(tmp, f"{kind}_config.json")
    json.dump(c, open(path, "w"))
    return path


def compare_fill_mask(check, run, hf_dir, name):
    fill = pipeline("fill-mask", model=hf_dir, tokenizer=AutoTokenizer.from_pretrained(hf_dir))
    for text in TEXTS:
        ours = json.loads(tool("bert-eval", "-q", "--checkpoint", run, "--fill-mask", text, "--top-k", "5").stdout)
        theirs = fill(text, top_k=5)
        mine = [(p["id"], p["probability"]) for p in ours["masks"][0]["predictions"]]
        hf = [(r["token"], r["score"]) for r in theirs]
        same_ids = [i for i, _ in mine] == [i for i, _ in hf]
        close = all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for (_, a), (_, b) in zip(mine, hf))
        if not (same_ids and close):
            print(f"  {name} {text!r}\n    ours {mine}\n    HF   {hf}")
        check(same_ids and close, f"{name}: fill-mask {text!r}: the same top 5 ids and probabilities as transformers' pipeline")


def finetune(check, tmp, tokenizer, run):
    """bert-finetune train and predict on `run` (a bert-train run whose checkpoints carry tokenizer.json)."""
    xquad = json.load(open(os.path.join(FIXTURES, "squad", "xquad.en.json"), encoding="utf-8"))
    xquad["data"] = xquad["data"][:1]
    squad = os.path.join(tmp, "squad.json")
    json.dump(xquad, open(squad, "w", encoding="utf-8"))
    features = os.path.join(tmp, "squad.tfrecord")
    tool("bert-finetune", "features", "-q", "--task", "squad", "--train", "--tokenizer", tokenizer,
         "--max-seq-length", "96", "--doc-stride", "48", "-o", features, squad)
    ft, pred = os.path.join(tmp, "ft-squad"), os.path.join(tmp, "pred-squad")
    tool("bert-finetune", "train", "--precision", "fp32", "-q", "--task", "squad", "--init-checkpoint", run,
         "--train-file", features, "--eval-file", squad, "--doc-stride", "48", "--epochs", "1", "--train-batch-size",
         "16", "--device", "cpu", "--output-dir", ft)
    best = os.path.join(ft, "best")
    check(os.path.exists(os.path.join(best, "tokenizer.json")), "squad: the fine-tuned checkpoint carries tokenizer.json")
    scores = json.loads(tool("bert-finetune", "predict", "--precision", "fp32", "--task", "squad", "--checkpoint", best,
                             "--predict-file", squad, "-o", pred).stdout)
    check("exact_match" in scores and "f1" in scores, f"squad predict: the official scores ({scores})")
    answers = json.load(open(os.path.join(pred, "predictions.json"), encoding="utf-8"))
    contexts = {q["id"]: p["context"] for p in xquad["data"][0]["paragraphs"] for q in p["qas"]}
    check(len(answers) == len(contexts), f"squad predict: an answer per question ({len(answers)} of {len(contexts)})")
    check(all(a and a in contexts[q] for q, a in answers.items()),
          "squad predict: every answer is a stretch of its context, taken by the pieces' characters")

    rows = open(os.path.join(FIXTURES, "glue", "MRPC", "train.tsv"), encoding="utf-8").read().split("\n")
    mrpc_train, mrpc_dev = os.path.join(tmp, "train.tsv"), os.path.join(tmp, "dev.tsv")
    open(mrpc_train, "w", encoding="utf-8").write("\n".join(rows[:65]) + "\n")
    open(mrpc_dev, "w", encoding="utf-8").write("\n".join(rows[:1] + rows[65:97]) + "\n")
    features = os.path.join(tmp, "mrpc.tfrecord")
    tool("bert-finetune", "features", "-q", "--task", "mrpc", "--train", "--tokenizer", tokenizer,
         "--max-seq-length", "64", "-o", features, mrpc_train)
    ft, pred = os.path.join(tmp, "ft-mrpc"), os.path.join(tmp, "pred-mrpc")
    tool("bert-finetune", "train", "--precision", "fp32", "-q", "--task", "mrpc", "--init-checkpoint", run,
         "--train-file", features, "--epochs", "1", "--train-batch-size", "16", "--device", "cpu", "--output-dir", ft)
    tool("bert-finetune", "predict", "--precision", "fp32", "-q", "--task", "mrpc", "--checkpoint", ft,
         "--predict-file", mrpc_dev, "-o", pred)
    labels = open(os.path.join(pred, "MRPC.tsv")).read().split("\n")[1:-1]
    check(len(labels) == 32 and all(l.split("\t")[1] in ("0", "1") for l in labels),
          f"mrpc predict: a label for each of the 32 rows ({len(labels)})")
    line = json.loads(tool("bert-finetune", "predict", "--precision", "fp32", "-q", "--task", "mrpc", "--checkpoint",
                           ft, "--text", "The river flows.", "--text-b", "A river flows.").stdout)
    check(line.get("label") in ("0", "1"), f"mrpc predict --text --text-b: {line}")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        sentences = corpus(tmp)
        tokenizer = os.path.join(tmp, "tokenizer.json")
        tool("bpe", "train", "-q", "--vocab-size", "1200", "-o", tokenizer, sentences)
        data = os.path.join(tmp, "rows.hdf5")
        tool("mkpretrain", "-q", "--tokenizer", tokenizer, "--full-sentences", "--masking", "none",
             "--max-seq-length", "64", "-o", data, sentences)
        with h5py.File(data) as f:
            ids, lengths = f["input_ids"][:], f["input_mask"][:].sum(axis=1)
            check(f.attrs["bertkit_vocab"].endswith(":bpe"), f"the data's stamp is a BPE tokenizer's: {f.attrs['bertkit_vocab']}")
        vocab = json.load(open(tokenizer))["model"]["vocab"]
        check(all(row[0] == vocab["<s>"] for row in ids), "every row starts with <s>")
        check(all(row[n - 1] == vocab["</s>"] for row, n in zip(ids, lengths)), "every row ends with </s>")
        for kind in ("bert", "modernbert"):
            run, hf_dir = os.path.join(tmp, f"run-{kind}"), os.path.join(tmp, f"hf-{kind}")
            tool("bert-train", "-q", "--config", model_config(tmp, kind, tokenizer), "--tokenizer", tokenizer,
                 "--input", data, "--no-nsp", "--train-batch-size", "16", "--max-steps", "20",
                 "--learning-rate", "3e-3", "--warmup-proportion", "0.1", "--seed", "3", "--output-dir", run,
                 "--precision", "fp32")
            latest = os.path.join(run, "checkpoints", open(os.path.join(run, "checkpoints", "latest")).read().strip())
            check(os.path.exists(os.path.join(latest, "tokenizer.json")), f"{kind}: the checkpoint carries tokenizer.json")
            tool("ckpt-convert", "-q", "--to", "hf", "-o", hf_dir, run)
            check(json.load(open(os.path.join(hf_dir, "tokenizer.json"))) == json.load(open(tokenizer)),
                  f"{kind}: the HF export's tokenizer.json is the one trained")
            compare_fill_mask(check, run, hf_dir, kind)
            if kind == "bert":
                finetune(check, tmp, tokenizer, run)
        # A WordPiece vocabulary is not the data's.
        wp = os.path.join(tmp, "vocab.txt")
        tool("wordpiece", "train", "-q", "--vocab-size", "1200", "-o", wp, sentences)
        r = subprocess.run([os.path.join(BIN, "bert-train"), "-q", "--config", model_config(tmp, "bert", tokenizer),
                            "--vocab", wp, "--input", data, "--no-nsp", "--max-steps", "1", "--train-batch-size", "4",
                            "--output-dir",
                            os.path.join(tmp, "wrong")], capture_output=True, text=True)
        check(r.returncode == 1 and "different vocabularies" in r.stderr,
              f"bert-train refuses a WordPiece --vocab for BPE data: {r.stderr.strip()[-200:]}")
    return check.exit_code("compat.bpe_pipeline")


if __name__ == "__main__":
    sys.exit(main())
