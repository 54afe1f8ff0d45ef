"""bert-eval against HF transformers on the same weights and data.

An HF BertForPreTraining (L=2, H=64, A=2, BERT's uncased vocabulary) is initialised from a seed and trained for a
few steps in this test so that its predictions mean something, then saved with save_pretrained. Pretraining data:
mkpretrain over google-research/bert's sample text (NVIDIA and MLPerf varlength HDF5 layouts) and, when
tfrecord2hdf5 is built, google's own create_pretraining_data.py output from the fixtures. HF's metrics are computed
here from the HDF5 files as NVIDIA's loader reads them; bert-eval's JSON must agree to 1e-4. --fill-mask (BERT and ModernBERT) must rank
the same tokens as HF's model with HF's tokenizer, with the same probabilities.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, skip

try:
    import h5py
    import numpy as np
    import torch
    from transformers import BertConfig, BertForPreTraining, ModernBertConfig, ModernBertForMaskedLM, BertTokenizer
except ImportError as e:
    skip(e)

BERT_EVAL = os.path.join(BIN, "bert-eval")
MKPRETRAIN = os.path.join(BIN, "mkpretrain")
TFRECORD2HDF5 = os.path.join(BIN, "tfrecord2hdf5")
TEXT = os.path.join(FIXTURES, "pretraining_text", "sample_text.txt")
VOCAB = os.path.join(FIXTURES, "vocab", "bert-base-uncased-vocab.txt")
GOOGLE_TFRECORDS = sorted(glob.glob(os.path.join(FIXTURES, "tfrecord", "sample_text-pretraining", "*.tfrecord")))
if not os.access(BERT_EVAL, os.X_OK):
    skip(f"no bert-eval at '{BERT_EVAL}' (a build without -DBERTKIT_WITH_TORCH=ON)")
if not (os.path.exists(TEXT) and os.path.exists(VOCAB) and os.access(MKPRETRAIN, os.X_OK)):
    skip("fixtures or mkpretrain missing")

TOL = 1e-4
torch.set_num_threads(2)
failures = []


def load_hdf5(path):
    """Samples as NVIDIA's loader sees them (nvidia layout) or as MLPerf's (varlength): lists of arrays."""
    with h5py.File(path, "r") as f:
        ids = f["input_ids"]
        if ids.dtype.kind == "O" or h5py.check_vlen_dtype(ids.dtype) is not None:
            return [dict(input_ids=np.asarray(f["input_ids"][i], np.int64),
                         segment_ids=np.asarray(f["segment_ids"][i], np.int64),
                         positions=np.asarray(f["masked_lm_positions"][i], np.int64),
                         masked_ids=np.asarray(f["masked_lm_ids"][i], np.int64),
                         nsp=int(f["next_sentence_labels"][i])) for i in range(len(ids))]
        a = {k: np.asarray(f[k]) for k in f.keys()}
    out = []
    for i in range(len(a["input_ids"])):
        n = int(a["input_mask"][i].sum())
        pos = a["masked_lm_positions"][i].astype(np.int64)
        k = int(np.argmax(pos == 0)) if (pos == 0).any() else len(pos)  # the first 0 ends the predictions
        out.append(dict(input_ids=a["input_ids"][i, :n].astype(np.int64), segment_ids=a["segment_ids"][i, :n].astype(np.int64),
                        positions=pos[:k], masked_ids=a["masked_lm_ids"][i, :k].astype(np.int64),
                        nsp=int(a["next_sentence_labels"][i])))
    return out


def to_batch(samples):
    b, t = len(samples), max(len(s["input_ids"]) for s in samples)
    p = max(len(s["positions"]) for s in samples)
    ids, seg, mask = (torch.zeros(b, t, dtype=torch.long) for _ in range(3))
    pos, mids = torch.zeros(b, p, dtype=torch.long), torch.full((b, p), -1, dtype=torch.long)
    for i, s in enumerate(samples):
        n, k = len(s["input_ids"]), len(s["positions"])
        ids[i, :n], seg[i, :n], mask[i, :n] = torch.from_numpy(s["input_ids"]), torch.from_numpy(s["segment_ids"]), 1
        pos[i, :k], mids[i, :k] = torch.from_numpy(s["positions"]), torch.from_numpy(s["masked_ids"])
    nsp = torch.tensor([s["nsp"] for s in samples])
    return ids, seg, mask, pos, mids, nsp


def hf_scores(model, ids, seg, mask, pos):
    out = model(input_ids=ids, token_type_ids=seg, attention_mask=mask)
    rows = torch.arange(pos.shape[0]).unsqueeze(1).expand_as(pos)
    return out.prediction_logits[rows, pos].reshape(-1, out.prediction_logits.shape[-1]), out.seq_relationship_logits


def hf_metrics(model, samples):
    correct = total = nsp_correct = 0
    mlm_sum = nsp_sum = 0.0
    with torch.no_grad():
        for start in range(0, len(samples), 16):
            ids, seg, mask, pos, mids, nsp = to_batch(samples[start:start + 16])
            mlm, nsp_logits = hf_scores(model, ids, seg, mask, pos)
            labels = mids.reshape(-1)
            valid = labels >= 0
            correct += int(((mlm.argmax(-1) == labels) & valid).sum())
            total += int(valid.sum())
            mlm_sum += float(torch.nn.functional.cross_entropy(mlm, labels, ignore_index=-1, reduction="sum"))
            nsp_correct += int((nsp_logits.argmax(-1) == nsp).sum())
            nsp_sum += float(torch.nn.functional.cross_entropy(nsp_logits, nsp, reduction="sum"))
    n = len(samples)
    return {"samples": n, "mlm_accuracy": correct / total, "nsp_accuracy": nsp_correct / n, "mlm_loss": mlm_sum / total,
            "nsp_loss": nsp_sum / n, "masked_predictions": total}


def train_a_little(model, samples, steps=60):
    """A few Adam steps so that the model predicts frequent tokens (the metrics are then not all zero)."""
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        idx = torch.randint(0, len(samples), (16,), generator=g).tolist()
        ids, seg, mask, pos, mids, nsp = to_batch([samples[i] for i in idx])
        mlm, nsp_logits = hf_scores(model, ids, seg, mask, pos)
        loss = torch.nn.functional.cross_entropy(mlm, mids.reshape(-1), ignore_index=-1) + \
            torch.nn.functional.cross_entropy(nsp_logits, nsp)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def bert_eval(*args):
    r = subprocess.run([BERT_EVAL, "-q", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"bert-eval {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines()]


def compare_metrics(name, ours, hf):
    diffs = {k: abs(ours[k] - hf[k]) for k in ("mlm_accuracy", "nsp_accuracy", "mlm_loss", "nsp_loss")}
    print(f"{name}: {hf['samples']} samples, {hf['masked_predictions']} masked; bert-eval mlm_accuracy "
          f"{ours['mlm_accuracy']:.6f} nsp_accuracy {ours['nsp_accuracy']:.6f} mlm_loss {ours['mlm_loss']:.6f} "
          f"nsp_loss {ours['nsp_loss']:.6f}; HF {hf['mlm_accuracy']:.6f} {hf['nsp_accuracy']:.6f} "
          f"{hf['mlm_loss']:.6f} {hf['nsp_loss']:.6f}; max |diff| {max(diffs.values()):.3g}")
    if ours["samples"] != hf["samples"] or ours["masked_predictions"] != hf["masked_predictions"]:
        failures.append(f"{name}: counts differ: ours {ours['samples']}/{ours['masked_predictions']}, "
                        f"HF {hf['samples']}/{hf['masked_predictions']}")
    for k, d in diffs.items():
        if not d <= TOL:
            failures.append(f"{name}: {k} differs by {d:.3g}")


def bert_logits(model, ids):
    return model(input_ids=ids, token_type_ids=torch.zeros_like(ids), attention_mask=torch.ones_like(ids)).prediction_logits[0]


def modernbert_logits(model, ids):
    return model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]


def compare_fill_mask(model, tokenizer, model_dir, texts, k=5, logits_of=bert_logits):
    ours = bert_eval("--checkpoint", model_dir, "--vocab", VOCAB, "--top-k", str(k),
                     *[a for t in texts for a in ("--fill-mask", t)])
    for text, mine in zip(texts, ours):
        enc = tokenizer(text, return_tensors="pt")
        ids = enc["input_ids"]
        hf_tokens = tokenizer.convert_ids_to_tokens(ids[0].tolist())
        if mine["tokens"] != hf_tokens:
            failures.append(f"fill-mask tokens differ for {text!r}: ours {mine['tokens']}, HF {hf_tokens}")
            continue
        with torch.no_grad():
            logits = logits_of(model, ids)
        positions = (ids[0] == tokenizer.mask_token_id).nonzero().reshape(-1).tolist()
        if [m["position"] for m in mine["masks"]] != positions:
            failures.append(f"fill-mask positions differ for {text!r}")
            continue
        shown = []
        for m, p in zip(mine["masks"], positions):
            probs = torch.softmax(logits[p], -1)
            top = probs.topk(k)
            hf_ids, hf_p = top.indices.tolist(), top.values.tolist()
            our_ids = [x["id"] for x in m["predictions"]]
            our_p = [x["probability"] for x in m["predictions"]]
            shown.append(" ".join(f"{x['token']}:{x['probability']:.4f}" for x in m["predictions"]))
            # Same ranking, except where HF's own probabilities tie within float noise.
            for r in range(k):
                if our_ids[r] != hf_ids[r] and abs(hf_p[r] - float(probs[our_ids[r]])) > 1e-6:
                    failures.append(f"fill-mask {text!r} position {p} rank {r}: ours {our_ids}, HF {hf_ids}")
                    break
            d = max(abs(a - b) for a, b in zip(our_p, hf_p))
            if d > 1e-5:
                failures.append(f"fill-mask {text!r}: probabilities differ by {d:.3g}")
        print(f"fill-mask {text!r}: {' | '.join(shown)}")


def main():
    with tempfile.TemporaryDirectory(prefix="bertkit-eval-") as tmp:
        inputs = {}
        for layout in ("nvidia", "varlength"):
            path = os.path.join(tmp, f"sample-{layout}.hdf5")
            subprocess.run([MKPRETRAIN, "--vocab", VOCAB, "--max-seq-length", "128", "--max-predictions", "20",
                            "--dupe-factor", "3", "--seed", "11", "--layout", layout, "-q", "-o", path, TEXT],
                           check=True)
            inputs[f"mkpretrain {layout}"] = path
        if GOOGLE_TFRECORDS and os.access(TFRECORD2HDF5, os.X_OK):
            path = os.path.join(tmp, "google.hdf5")
            subprocess.run([TFRECORD2HDF5, "-q", "-o", path, GOOGLE_TFRECORDS[0]], check=True)
            inputs["google create_pretraining_data.py"] = path

        config = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=256, max_position_embeddings=128)
        torch.manual_seed(20)
        model = BertForPreTraining(config)
        train_a_little(model, load_hdf5(inputs["mkpretrain nvidia"]))
        model_dir = os.path.join(tmp, "model")
        model.save_pretrained(model_dir, safe_serialization=True)

        for name, path in inputs.items():
            samples = load_hdf5(path)
            (ours,) = bert_eval("--checkpoint", model_dir, "--input", path, "--batch-size", "7", "--precision", "fp32")
            compare_metrics(name, ours, hf_metrics(model, samples))
        name, path = next(iter(inputs.items()))
        (ours,) = bert_eval("--checkpoint", model_dir, "--max-samples", "10", "--batch-size", "4",
                            "--max-predictions", "20", "--precision", "fp32", path)
        compare_metrics(f"{name}, first 10 samples", ours, hf_metrics(model, load_hdf5(path)[:10]))

        tok_dir = os.path.join(tmp, "tokenizer")
        os.makedirs(tok_dir)
        shutil.copy(VOCAB, os.path.join(tok_dir, "vocab.txt"))
        tokenizer = BertTokenizer.from_pretrained(tok_dir, do_lower_case=True)
        compare_fill_mask(model, tokenizer, model_dir, [
            "The man went to the [MASK].",
            "[MASK] is a town in the north of England, and it was [MASK] in 1066.",
            "Café au lait costs £3[MASK]",
        ])
        # ModernBERT (a window of 8 tokens on two layers of three, sentences longer than it), HF's fresh weights with
        # a wide initialisation so that its probabilities are not near-uniform.
        modern = ModernBertForMaskedLM(ModernBertConfig(
            vocab_size=30522, hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=2,
            max_position_embeddings=128, local_attention=8, initializer_range=0.3, pad_token_id=0,
            cls_token_id=101, sep_token_id=102, bos_token_id=101, eos_token_id=102)).eval()
        modern_dir = os.path.join(tmp, "modernbert")
        modern.save_pretrained(modern_dir)
        compare_fill_mask(modern, tokenizer, modern_dir, [
            "The man went to the [MASK] and bought a loaf of bread for his family before dinner.",
            "[MASK] is a town in the north of England, and it was [MASK] in 1066.",
        ], logits_of=modernbert_logits)

    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
