"""Our BertForPreTraining against HF transformers' on the same weights: MLM and NSP logits agree to 1e-5 (fp32, CPU,
eval mode).

HF builds each model from a seed and saves it with save_pretrained(safe_serialization=True); our side loads that
directory (tests/torch_tools/model_probe) and runs the batches. Cases: BERT's 30522 vocabulary on real instances
(mkpretrain over the google-research/bert sample text, padded batches), a vocabulary of 99 (not a multiple of 8)
with the tanh GELU, and relu. The other way round too: a model initialised and saved by us (save_model_dir) loads
in transformers with no missing or unexpected keys and gives the same logits; a resaved HF model is bit-identical.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, TORCH_TEST_TOOLS, skip

try:
    import h5py
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import BertConfig, BertForPreTraining
except ImportError as e:
    skip(e)

PROBE = os.path.join(TORCH_TEST_TOOLS, "model_probe")
MKPRETRAIN = os.path.join(BIN, "mkpretrain")
if not os.access(PROBE, os.X_OK):
    skip(f"no model_probe at '{PROBE}' (a build without -DBERTKIT_WITH_TORCH=ON)")
TEXT = os.path.join(FIXTURES, "pretraining_text", "sample_text.txt")
VOCAB = os.path.join(FIXTURES, "vocab", "bert-base-uncased-vocab.txt")
if not (os.path.exists(TEXT) and os.path.exists(VOCAB) and os.access(MKPRETRAIN, os.X_OK)):
    skip("fixtures or mkpretrain missing")

TOL = 1e-5
torch.set_num_threads(2)
failures = []


def hf_model(seed, **kw):
    cfg = BertConfig(**kw)
    torch.manual_seed(seed)
    model = BertForPreTraining(cfg).eval()
    return model


def run_probe(model_dir, batch, tmp):
    batch_path = os.path.join(tmp, "batch.safetensors")
    out_path = os.path.join(tmp, "out.safetensors")
    save_file({k: v.contiguous() for k, v in batch.items()}, batch_path)
    subprocess.run([PROBE, "forward", model_dir, batch_path, out_path], check=True)
    return load_file(out_path)


def hf_forward(model, batch):
    with torch.no_grad():
        out = model(input_ids=batch["input_ids"], token_type_ids=batch["segment_ids"],
                    attention_mask=batch["attention_mask"])
    return out.prediction_logits, out.seq_relationship_logits


def compare(name, model, model_dir, batch, tmp):
    ours = run_probe(model_dir, batch, tmp)
    hf_mlm, hf_nsp = hf_forward(model, batch)
    pos = batch["masked_lm_positions"]
    rows = torch.arange(pos.shape[0]).unsqueeze(1).expand_as(pos)
    hf_gathered = hf_mlm[rows, pos].reshape(-1, hf_mlm.shape[-1])
    real = batch["attention_mask"].bool()
    d_gathered = (ours["mlm_logits"] - hf_gathered).abs().max().item()
    d_full = (ours["full_mlm_logits"][real] - hf_mlm[real]).abs().max().item()
    d_nsp = max((ours["nsp_logits"] - hf_nsp).abs().max().item(),
                (ours["gathered_nsp_logits"] - hf_nsp).abs().max().item())
    ids = batch["masked_lm_ids"].reshape(-1)
    hf_mlm_loss = torch.nn.functional.cross_entropy(hf_gathered, ids, ignore_index=-1).item()
    hf_nsp_loss = torch.nn.functional.cross_entropy(hf_nsp, batch["next_sentence_labels"]).item()
    valid = ids >= 0
    hf_correct = int(((hf_gathered.argmax(-1) == ids) & valid).sum())
    d_loss = max(abs(ours["mlm_loss"].item() - hf_mlm_loss), abs(ours["nsp_loss"].item() - hf_nsp_loss))
    print(f"{name}: max |logit| {hf_gathered.abs().max().item():.3g}, logits shape ours {tuple(ours['mlm_logits'].shape)} HF {tuple(hf_gathered.shape)}; max |diff| "
          f"MLM at masked positions {d_gathered:.3g}, MLM at all real positions {d_full:.3g}, NSP {d_nsp:.3g}, "
          f"losses {d_loss:.3g}; correct {int(ours['mlm_correct'])}/{int(ours['mlm_total'])} (HF {hf_correct}/"
          f"{int(valid.sum())})")
    if ours["mlm_logits"].shape != hf_gathered.shape:
        failures.append(f"{name}: MLM logits shape {tuple(ours['mlm_logits'].shape)}")
        return
    for what, d in (("MLM", d_gathered), ("MLM full", d_full), ("NSP", d_nsp), ("loss", d_loss)):
        if not d <= TOL:
            failures.append(f"{name}: {what} max abs diff {d:.3g} > {TOL}")
    if int(ours["mlm_correct"]) != hf_correct or int(ours["mlm_total"]) != int(valid.sum()):
        failures.append(f"{name}: MLM correct/total differ from HF's")


def real_batches(tmp, batch_size, count):
    """Instances from mkpretrain (NVIDIA layout), cut into padded batches the way tasks/pretraining/batch.h describes them."""
    h5 = os.path.join(tmp, "sample.hdf5")
    subprocess.run([MKPRETRAIN, "--vocab", VOCAB, "--max-seq-length", "128", "--max-predictions", "20",
                    "--dupe-factor", "1", "--seed", "7", "-q", "-o", h5, TEXT], check=True)
    with h5py.File(h5, "r") as f:
        a = {k: np.asarray(f[k]) for k in f.keys()}
    batches = []
    for start in range(0, batch_size * count, batch_size):
        sl = slice(start, start + batch_size)
        mask = torch.from_numpy(a["input_mask"][sl].astype(np.int64))
        t = int(mask.sum(1).max())
        pos = torch.from_numpy(a["masked_lm_positions"][sl].astype(np.int64))
        ids = torch.from_numpy(a["masked_lm_ids"][sl].astype(np.int64))
        # NVIDIA layout: the first 0 position ends the predictions; unused slots get id -1.
        used = torch.cumprod((pos != 0).long(), 1).bool()
        batches.append({
            "input_ids": torch.from_numpy(a["input_ids"][sl].astype(np.int64))[:, :t],
            "segment_ids": torch.from_numpy(a["segment_ids"][sl].astype(np.int64))[:, :t],
            "attention_mask": mask[:, :t],
            "masked_lm_positions": pos * used,
            "masked_lm_ids": torch.where(used, ids, torch.full_like(ids, -1)),
            "next_sentence_labels": torch.from_numpy(a["next_sentence_labels"][sl].astype(np.int64)),
        })
    return batches


def random_batch(seed, vocab, b, t, p, type_vocab=2):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(p + 2, t + 1, (b,), generator=g)
    lengths[0] = t
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).long()
    ids = torch.randint(1, vocab, (b, t), generator=g) * mask
    seg = (torch.arange(t).unsqueeze(0) >= (lengths // 2).unsqueeze(1)).long() * mask % type_vocab
    pos = torch.stack([torch.randperm(int(n) - 1, generator=g)[:p] + 1 for n in lengths]).sort(1).values
    mids = torch.randint(0, vocab, (b, p), generator=g)
    mids[1, p - 1] = -1
    pos[1, p - 1] = 0
    return {"input_ids": ids, "segment_ids": seg, "attention_mask": mask, "masked_lm_positions": pos,
            "masked_lm_ids": mids, "next_sentence_labels": torch.randint(0, 2, (b,), generator=g)}


def main():
    with tempfile.TemporaryDirectory(prefix="bertkit-hf-logits-") as tmp:
        # 1. BERT's vocabulary, real instances with padding.
        model = hf_model(1, vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=256, max_position_embeddings=128)
        d1 = os.path.join(tmp, "hf30522")
        model.save_pretrained(d1, safe_serialization=True)
        for i, batch in enumerate(real_batches(tmp, 8, 2)):
            compare(f"vocab 30522, real batch {i} {tuple(batch['input_ids'].shape)}", model, d1, batch, tmp)

        # 2. A vocabulary of 99 (padded to 104 inside), tanh GELU, another eps, 3 token types.
        model = hf_model(2, vocab_size=99, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                         intermediate_size=48, max_position_embeddings=40, type_vocab_size=3,
                         hidden_act="gelu_new", layer_norm_eps=1e-7, initializer_range=0.2)
        d2 = os.path.join(tmp, "hf99")
        model.save_pretrained(d2, safe_serialization=True)
        compare("vocab 99, gelu_new, padded batch", model, d2, random_batch(3, 99, 5, 40, 6, 3), tmp)

        # 3. relu.
        model = hf_model(4, vocab_size=61, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=24, max_position_embeddings=20, hidden_act="relu", initializer_range=0.5)
        d3 = os.path.join(tmp, "hf61")
        model.save_pretrained(d3, safe_serialization=True)
        compare("vocab 61, relu", model, d3, random_batch(5, 61, 3, 20, 4), tmp)

        # 4. Our writer -> transformers: no missing/unexpected keys, same logits.
        cfg_path = os.path.join(tmp, "ours.json")
        with open(cfg_path, "w") as f:
            json.dump({"vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "intermediate_size": 64, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
                       "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 32, "type_vocab_size": 2,
                       "initializer_range": 0.1}, f)
        d4 = os.path.join(tmp, "ours")
        subprocess.run([PROBE, "init", cfg_path, "5", d4], check=True)
        loaded, info = BertForPreTraining.from_pretrained(d4, output_loading_info=True)
        loaded.eval()
        bad = {k: v for k, v in info.items() if v}
        print(f"our checkpoint in transformers: loading info {info}")
        if bad:
            failures.append(f"transformers loading our checkpoint reports {bad}")
        compare("our checkpoint in transformers", loaded, d4, random_batch(6, 99, 4, 32, 5), tmp)

        # 5. HF -> ours -> file: every tensor bit-identical to what HF saved.
        d5 = os.path.join(tmp, "resaved")
        subprocess.run([PROBE, "resave", d2, d5], check=True)
        a, b = load_file(os.path.join(d2, "model.safetensors")), load_file(os.path.join(d5, "model.safetensors"))
        same = a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        print(f"resaved HF checkpoint: {len(b)} tensors, identical: {same}")
        if not same:
            failures.append(f"resaved tensors differ: keys only in HF {sorted(a.keys() - b.keys())}, "
                            f"only in ours {sorted(b.keys() - a.keys())}")

    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
