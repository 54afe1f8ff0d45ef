"""ModernBERT against HF transformers' ModernBertForMaskedLM: the same numbers from the same weights.

HF builds each model from a seed and saves it with save_pretrained; our side loads that directory. Asserted:
  - logits: padded rows (HF's eager and SDPA attention) and packed rows (several samples in one row, our unpadded
    stream; HF runs each sample alone) longer than the local window, in a config with odd numbers of layers and
    heads (transformers 5.x keys), and in a v4.x-style config.json (global_attn_every_n_layers, global/local
    rope_theta) with every bias switched on and the tanh GELU: within 1e-5;
  - the masked-LM loss on masked positions, within 1e-5;
  - the way back: a model we initialise and save loads in transformers with no missing or unexpected keys, its
    config.json read with the same layer types and thetas, and gives the same logits; a loaded HF model saved again
    by us is bit-identical;
  - ckpt-convert: HF's directory (model.safetensors, and pytorch_model.bin) to native and a bert-train checkpoint
    back to hf, which AutoModelForMaskedLM loads as ModernBertForMaskedLM with the same weights; --list names the
    architecture; --to tf is refused in one line;
  - long rows: mkpretrain (FULL-SENTENCES, --masking none), pack and bin4 at 1,024 and 8,192 tokens on a Wikipedia
    extract, rows that fill them; a run at 8,192 tokens (another theta) from a checkpoint trained at 1,024; a run
    stopped and resumed ends with the weights of one that was not, bit for bit;
  - a 10-step trajectory: bert-train (unpadded attention, gradient accumulation 2, clipping, warm-up then poly
    decay, AdamW) against HF's model stepped by torch.optim.AdamW on the same batches, with weight decay except on
    biases and norms, as ModernBERT's recipe applies it: losses within 1e-5 relative, final weights within 1e-5.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, TORCH_TEST_TOOLS, Checks, skip

try:
    import h5py
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import ModernBertConfig, ModernBertForMaskedLM
except ImportError as e:
    skip(e)

PROBE = os.path.join(TORCH_TEST_TOOLS, "model_probe")
BERT_TRAIN = os.path.join(BIN, "bert-train")
CKPT_CONVERT = os.path.join(BIN, "ckpt-convert")
if not (os.access(PROBE, os.X_OK) and os.access(BERT_TRAIN, os.X_OK)):
    skip("no model_probe or bert-train (a build without -DBERTKIT_WITH_TORCH=ON)")

TOL = 1e-5
VOCAB = 99
torch.set_num_threads(2)
# 3 layers (global, local, local), 3 heads of 16, a window of 8 (4 each side): rows of 30 tokens cross it.
ODD = dict(vocab_size=VOCAB, hidden_size=48, intermediate_size=40, num_hidden_layers=3, num_attention_heads=3,
           max_position_embeddings=64, local_attention=8, pad_token_id=0, bos_token_id=None, eos_token_id=None,
           cls_token_id=2, sep_token_id=3)
# v4.x keys, as ModernBERT's released config.json holds them; every bias on.
V4 = dict(model_type="modernbert", architectures=["ModernBertForMaskedLM"], vocab_size=VOCAB, hidden_size=32,
          intermediate_size=24, num_hidden_layers=4, num_attention_heads=2, max_position_embeddings=64,
          global_attn_every_n_layers=2, global_rope_theta=320000.0, local_rope_theta=5000.0, local_attention=6,
          hidden_activation="gelu_pytorch_tanh", classifier_activation="gelu", norm_bias=True, attention_bias=True,
          mlp_bias=True, classifier_bias=True, decoder_bias=True, norm_eps=1e-6, pad_token_id=0, cls_token_id=2,
          sep_token_id=3, bos_token_id=2, eos_token_id=3, initializer_range=0.05)


def perturbed(model, seed):
    """Norm weights and biases away from 1 and 0, so that a missing or misplaced one shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn(p.shape, generator=g) * 0.1)
    return model


def probe(args, tensors, tmp):
    batch, out = os.path.join(tmp, "batch.safetensors"), os.path.join(tmp, "out.safetensors")
    save_file({k: v.contiguous() for k, v in tensors.items()}, batch)
    subprocess.run([PROBE, "forward", *args, batch, out], check=True)
    return load_file(out)


def padded_batch(seed, rows=3, width=30):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, VOCAB, (rows, width), generator=g)
    mask = torch.ones(rows, width, dtype=torch.long)
    mask[1, 21:] = 0
    mask[2, 9:] = 0
    ids[mask == 0] = 0
    positions = torch.tensor([[1, 7, 20, 28], [2, 3, 19, 0], [5, 0, 0, 0]])
    labels = torch.randint(4, VOCAB, positions.shape, generator=g)
    labels[positions == 0] = -1
    return {"input_ids": ids, "attention_mask": mask, "masked_lm_positions": positions, "masked_lm_ids": labels,
            "next_sentence_labels": torch.zeros(rows, dtype=torch.long)}


def compare_logits(check, name, model, model_dir, tmp, seed):
    b = padded_batch(seed)
    ours = probe([model_dir], b, tmp)
    real = b["attention_mask"].bool()
    for impl in ("eager", "sdpa"):
        model.config._attn_implementation = impl
        with torch.no_grad():
            hf = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).logits
        d = (ours["full_mlm_logits"][real] - hf[real]).abs().max().item()
        print(f"{name}: padded rows vs HF {impl}: max |diff| {d:.2e} (max |logit| {hf.abs().max().item():.2f})")
        check(d <= TOL, f"{name}: padded logits differ from HF {impl} by {d:.2e}")
    rows = torch.arange(3).unsqueeze(1).expand_as(b["masked_lm_positions"])
    gathered = hf[rows, b["masked_lm_positions"]].reshape(-1, VOCAB)
    hf_loss = torch.nn.functional.cross_entropy(gathered, b["masked_lm_ids"].reshape(-1), ignore_index=-1).item()
    d = abs(ours["mlm_loss"].item() - hf_loss)
    print(f"{name}: masked-LM loss {hf_loss:.6f}, |diff| {d:.2e}")
    check(d <= TOL, f"{name}: masked-LM loss differs by {d:.2e}")
    check("nsp_logits" not in ours, f"{name}: a next-sentence head where ModernBERT has none")

    # Packed: row 0 holds samples of 12 and 18 tokens, row 1 one of 21, row 2 three (5, 6, 9); HF runs each alone.
    g = torch.Generator().manual_seed(seed + 1)
    lengths = torch.tensor([[12, 18, 0], [21, 0, 0], [5, 6, 9]])
    ids = torch.zeros(3, 30, dtype=torch.long)
    samples = []
    for r in range(3):
        at = 0
        for n in [int(x) for x in lengths[r] if x > 0]:
            ids[r, at:at + n] = torch.randint(4, VOCAB, (n,), generator=g)
            samples.append(ids[r, at:at + n].clone())
            at += n
    ours = probe([model_dir], {"input_ids": ids, "row_lengths": lengths}, tmp)["stream_mlm_logits"]
    with torch.no_grad():
        hf = torch.cat([model(input_ids=s.unsqueeze(0)).logits[0] for s in samples])
    d = (ours - hf).abs().max().item()
    print(f"{name}: packed rows (7 samples in 3 rows) vs HF per sample: max |diff| {d:.2e}")
    check(d <= TOL, f"{name}: packed logits differ by {d:.2e}")


def check_forward(check, tmp):
    torch.manual_seed(5)
    odd = perturbed(ModernBertForMaskedLM(ModernBertConfig(**ODD)).eval(), 6)
    odd_dir = os.path.join(tmp, "odd")
    odd.save_pretrained(odd_dir)
    compare_logits(check, "3 layers x 3 heads (5.x keys)", odd, odd_dir, tmp, 7)

    v4_dir = os.path.join(tmp, "v4")
    os.makedirs(v4_dir)
    with open(os.path.join(v4_dir, "config.json"), "w") as f:
        json.dump(V4, f)
    v4_config = ModernBertConfig.from_pretrained(v4_dir)
    check(v4_config.layer_types == ["full_attention", "sliding_attention"] * 2, f"HF read {v4_config.layer_types}")
    torch.manual_seed(8)
    v4 = perturbed(ModernBertForMaskedLM(v4_config).eval(), 9)
    save_file({k: v.contiguous() for k, v in v4.state_dict().items() if k != "decoder.weight"},
              os.path.join(v4_dir, "model.safetensors"), metadata={"format": "pt"})
    compare_logits(check, "v4.x config.json, biases on", v4, v4_dir, tmp, 10)

    # The way back: our initialisation and our save_pretrained-equivalent, read by transformers.
    ours_dir = os.path.join(tmp, "ours")
    subprocess.run([PROBE, "init", os.path.join(v4_dir, "config.json"), "3", ours_dir], check=True)
    back, info = ModernBertForMaskedLM.from_pretrained(ours_dir, output_loading_info=True)
    missing = [k for k in info["missing_keys"] if k != "decoder.weight"]
    check(not missing and not info["unexpected_keys"],
          f"ours in transformers: missing {missing}, unexpected {info['unexpected_keys']}")
    check(back.config.layer_types == v4_config.layer_types and back.config.rope_parameters == v4_config.rope_parameters,
          f"our config.json read back as {back.config.layer_types}, {back.config.rope_parameters}")
    w = back.model.layers[1].attn.Wqkv.weight
    cutoff = 2.0 * V4["initializer_range"]
    print(f"our initialisation: Wqkv std {w.std().item():.4f}, max |w| {w.abs().max().item():.4f} (cut at {cutoff})")
    check(w.abs().max().item() <= cutoff + 1e-7 and 0.6 * V4["initializer_range"] < w.std().item() < V4["initializer_range"],
          "our initialisation is not HF's truncated normal")
    compare_logits(check, "initialised by bertkit, run by HF", back.eval(), ours_dir, tmp, 11)
    resaved = os.path.join(tmp, "resaved")
    subprocess.run([PROBE, "resave", odd_dir, resaved], check=True)
    a, b = load_file(os.path.join(odd_dir, "model.safetensors")), load_file(os.path.join(resaved, "model.safetensors"))
    check(a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), "a resaved HF model is not bit-identical")


STEPS, MICRO_BATCH, ACCUMULATION, SEQ_LEN, MAX_PRED = 10, 8, 2, 24, 5
LR, WARMUP, DEGREE, MAX_GRAD_NORM = 5e-3, 0.3, 0.5, 1.0
TRAIN = dict(ODD, max_position_embeddings=SEQ_LEN, local_attention=6, initializer_range=0.05)


def write_samples(path, seed):
    """16 single-segment samples in NVIDIA's layout (the first 0 position ends the predictions)."""
    rng = np.random.default_rng(seed)
    n = MICRO_BATCH * ACCUMULATION
    a = {"input_ids": np.zeros((n, SEQ_LEN), "i4"), "input_mask": np.zeros((n, SEQ_LEN), "i1"),
         "segment_ids": np.zeros((n, SEQ_LEN), "i1"), "masked_lm_positions": np.zeros((n, MAX_PRED), "i4"),
         "masked_lm_ids": np.zeros((n, MAX_PRED), "i4"), "next_sentence_labels": np.zeros(n, "i1")}
    for i in range(n):
        length = SEQ_LEN if i == 0 else int(rng.integers(8, SEQ_LEN + 1))
        a["input_ids"][i, :length] = rng.integers(4, VOCAB, length)
        a["input_mask"][i, :length] = 1
        k = int(rng.integers(1, MAX_PRED + 1))
        a["masked_lm_positions"][i, :k] = np.sort(rng.choice(np.arange(1, length - 1), k, replace=False))
        a["masked_lm_ids"][i, :k] = rng.integers(4, VOCAB, k)
    with h5py.File(path, "w") as f:
        for name, data in a.items():
            f.create_dataset(name, data=data, dtype=data.dtype)
    return a


def reference_run(model, a):
    """torch.optim.AdamW on HF's model; one step = both halves of the file, the loss summed over every masked
    position of the step and divided by their count."""
    params = dict(model.named_parameters())
    no_decay = lambda n: n.endswith("bias") or "norm" in n  # ModernBERT's recipe: no decay on biases and norms
    opt = torch.optim.AdamW([{"params": [p for n, p in params.items() if not no_decay(n)], "weight_decay": 0.01},
                             {"params": [p for n, p in params.items() if no_decay(n)], "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-6)
    t64 = lambda k, sl: torch.from_numpy(a[k][sl].astype(np.int64))
    halves = [slice(0, MICRO_BATCH), slice(MICRO_BATCH, 2 * MICRO_BATCH)]
    masked = int(sum(np.cumprod(a["masked_lm_positions"][h] != 0, 1).sum() for h in halves))
    losses = []
    for t in range(1, STEPS + 1):
        model.zero_grad(set_to_none=True)
        total = 0.0
        for h in halves:
            pos, ids = t64("masked_lm_positions", h), t64("masked_lm_ids", h)
            labels = torch.where(torch.cumprod((pos != 0).long(), 1).bool(), ids, torch.full_like(ids, -1))
            logits = model(input_ids=t64("input_ids", h), attention_mask=t64("input_mask", h)).logits
            rows = torch.arange(pos.shape[0]).unsqueeze(1).expand_as(pos)
            loss = torch.nn.functional.cross_entropy(logits[rows, pos].reshape(-1, VOCAB), labels.reshape(-1),
                                                     ignore_index=-1, reduction="sum")
            (loss / masked).backward()
            total += loss.item()
        losses.append(total / masked)
        torch.nn.utils.clip_grad_norm_(list(params.values()), MAX_GRAD_NORM)
        p = t / STEPS
        for group in opt.param_groups:
            group["lr"] = LR * p / WARMUP if p < WARMUP else LR * (1 - p) ** DEGREE
        opt.step()
    return losses


def check_trajectory(check, tmp):
    data = os.path.join(tmp, "step.hdf5")
    a = write_samples(data, 12)
    torch.manual_seed(13)
    model = perturbed(ModernBertForMaskedLM(ModernBertConfig(**TRAIN)), 14).train()
    init_dir = os.path.join(tmp, "train-init")
    model.save_pretrained(init_dir)
    ref = reference_run(model, a)
    out = os.path.join(tmp, "run")
    cmd = [BERT_TRAIN, "--config", os.path.join(init_dir, "config.json"), "--input", data, "--output-dir", out,
           "--init-checkpoint", init_dir, "--train-batch-size", str(MICRO_BATCH * ACCUMULATION),
           "--gradient-accumulation-steps", str(ACCUMULATION), "--max-steps", str(STEPS), "--learning-rate", str(LR),
           "--warmup-proportion", str(WARMUP), "--lr-decay", "poly", "--optimizer", "adamw", "--max-grad-norm",
           str(MAX_GRAD_NORM), "--max-predictions", str(MAX_PRED), "--precision", "fp32", "--no-tensorboard", "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if not check(proc.returncode == 0, f"bert-train failed: {proc.stderr}"):
        return
    with open(os.path.join(out, "log.jsonl")) as f:
        losses = [r["loss"] for r in map(json.loads, f) if "loss" in r]
    with open(os.path.join(out, "checkpoints", "latest")) as f:
        latest = os.path.join(out, "checkpoints", f.read().strip())
    weights = load_file(os.path.join(latest, "model.safetensors"))
    if not check(len(losses) == STEPS, f"bert-train logged {len(losses)} steps"):
        return
    rel = max(abs(x - y) / abs(y) for x, y in zip(losses, ref))
    state = model.state_dict()
    diffs = {k: (v - state[k]).abs().max().item() for k, v in weights.items()}
    worst = max(diffs, key=diffs.get)
    print(f"10 steps, AdamW: losses {ref[0]:.4f} -> {ref[-1]:.4f}, max relative difference {rel:.2e}; "
          f"{len(diffs)} tensors, max |w - ref| {diffs[worst]:.2e} ({worst})")
    check(rel <= TOL, f"a step's loss differs by {rel:.2e} relative")
    check(diffs[worst] <= TOL, f"{worst} differs by {diffs[worst]:.2e}")
    check(set(weights) == set(state) - {"decoder.weight"}, f"checkpoint keys differ: {set(weights) ^ set(state)}")
    check(ref[0] - ref[-1] > 0.1, "the loss barely moved; the test would prove nothing")
    return latest, state


def tool(name, *args, quiet=True):
    return subprocess.run([os.path.join(BIN, name), *(["-q"] if quiet else []), *args], capture_output=True, text=True)


def check_long_rows(check, tmp):
    wiki = os.path.join(FIXTURES, "wiki", "mlperf-extracted", "wiki_00")
    vocab = os.path.join(FIXTURES, "vocab", "bert-base-uncased-vocab.txt")
    if not (os.path.exists(wiki) and os.path.exists(vocab)):
        print("long rows skipped: no Wikipedia extract or vocabulary in the fixtures")
        return
    docs = os.path.join(tmp, "docs.txt")
    with open(wiki, encoding="utf-8") as f, open(docs, "w", encoding="utf-8") as out:
        for line in f:  # WikiExtractor's <doc> blocks: the title line after <doc> left out, a blank line per document
            if line.startswith("<doc "):
                next(f, None)
            elif line.startswith("</doc>"):
                out.write("\n")
            elif line.strip():
                out.write(line)
    data = {}
    for length in (1024, 8192):
        rows = os.path.join(tmp, f"rows{length}.hdf5")
        made = [tool("mkpretrain", "--vocab", vocab, "--max-seq-length", str(length), "--full-sentences", "--masking",
                     "none", "-o", rows, docs),
                tool("pack", "--max-seq-length", str(length), "-o", os.path.join(tmp, f"packed{length}.hdf5"), rows),
                tool("bin4", "--bins", ",".join(str(length * k // 4) for k in range(1, 5)), "-o",
                     os.path.join(tmp, f"bins{length}"), rows)]
        if not check(all(p.returncode == 0 for p in made), f"{length}: {[p.stderr for p in made]}"):
            return
        with h5py.File(rows) as f:
            real = f["input_mask"][:].sum(1)
        with h5py.File(os.path.join(tmp, f"packed{length}.hdf5")) as f:
            packed = int(f["input_mask"][:].sum())
        print(f"rows of {length}: {len(real)} rows, the longest {real.max()} tokens, mean {real.mean():.0f}; pack kept "
              f"{packed} of {int(real.sum())} tokens")
        check(real.max() > 0.95 * length and packed == int(real.sum()), f"{length}: rows do not fill the length")
        data[length] = rows
    vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
    config = dict(model_type="modernbert", hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                  num_attention_heads=2, vocab_size=vocab_size, max_position_embeddings=1024, local_attention=64,
                  pad_token_id=0, cls_token_id=101, sep_token_id=102, bos_token_id=101, eos_token_id=102)
    short_config, long_config = os.path.join(tmp, "short.json"), os.path.join(tmp, "long.json")
    with open(short_config, "w") as f:
        json.dump(config, f)
    with open(long_config, "w") as f:  # ModernBERT's long phase: 8,192 positions, the global theta raised
        json.dump(dict(config, max_position_embeddings=8192, global_rope_theta=320000.0), f)
    common = ["--vocab", vocab, "--no-tensorboard", "--masked-lm-prob", "0.3", "--learning-rate", "1e-3", "--precision",
              "fp32"]
    short = tool("bert-train", "--config", short_config, "--input", data[1024], "--output-dir",
                 os.path.join(tmp, "short"), "--train-batch-size", "4", "--max-steps", "2", *common)
    long = tool("bert-train", "--config", long_config, "--input", os.path.join(tmp, "packed8192.hdf5"), "--output-dir",
                os.path.join(tmp, "long"), "--train-batch-size", "1", "--max-steps", "1",
                "--init-checkpoint", os.path.join(tmp, "short"), *common, quiet=False)
    check(short.returncode == 0 and long.returncode == 0,
          f"a run at 8,192 tokens from one at 1,024: {short.stderr} {long.stderr}")
    start = [line for line in long.stderr.splitlines() if "start: step 0 from" in line]
    print(f"the long phase's banner: {start[0] if start else long.stderr}")
    check(start and "max_position_embeddings 1024 -> 8192" in start[0] and "full_attention.rope_theta 160000.0 -> 320000.0"
          in start[0], f"the long phase's banner does not say what changed: {long.stderr}")
    wider = os.path.join(tmp, "wider.json")  # a change of shape stays refused
    with open(wider, "w") as f:
        json.dump(dict(config, intermediate_size=64), f)
    refused = tool("bert-train", "--config", wider, "--input", data[1024], "--output-dir", os.path.join(tmp, "wider"),
                   "--train-batch-size", "4", "--max-steps", "1", "--init-checkpoint", os.path.join(tmp, "short"), *common)
    check(refused.returncode != 0 and "shape" in refused.stderr,
          f"a config that changes a tensor's shape was not refused: {refused.returncode} {refused.stderr}")
    # Exact resume: 4 steps straight against a run stopped after 2 (--stop-after) and resumed.
    runs = {}
    for name, stops in (("straight", [[]]), ("stopped", [["--stop-after", "2"], ["--resume"]])):
        for extra in stops:
            proc = tool("bert-train", "--config", short_config, "--input", data[1024], "--output-dir",
                        os.path.join(tmp, name), "--train-batch-size", "2", "--max-steps", "4", "--checkpoint-every", "2",
                        *extra, *common)
            check(proc.returncode == 0, f"{name} {extra}: {proc.stderr}")
        with open(os.path.join(tmp, name, "checkpoints", "latest")) as f:
            runs[name] = load_file(os.path.join(tmp, name, "checkpoints", f.read().strip(), "model.safetensors"))
    same = all(torch.equal(runs["straight"][k], runs["stopped"][k]) for k in runs["straight"])
    print(f"resume: 4 steps straight and 2 + 2 resumed give {'the same' if same else 'different'} weights")
    check(same, "a resumed ModernBERT run's weights differ from the straight run's")


def convert(*args):
    return subprocess.run([CKPT_CONVERT, *args], capture_output=True, text=True)


def check_conversions(check, tmp, trained, reference):
    """trained: a bert-train checkpoint; reference: HF's state dict after the same steps."""
    from transformers import AutoModelForMaskedLM
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("".join(t + "\n" for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(5, VOCAB)]))
    listing = convert("--list", trained)
    check(listing.returncode == 0 and "# Architecture: ModernBertForMaskedLM" in listing.stdout,
          f"--list does not name the architecture: {listing.stdout[-200:]} {listing.stderr}")
    hf_dir = os.path.join(tmp, "export")
    done = convert(trained, "--to", "hf", "-o", hf_dir, "--vocab", vocab, "-q")
    if not check(done.returncode == 0, f"--to hf failed: {done.stderr}"):
        return
    model, info = AutoModelForMaskedLM.from_pretrained(hf_dir, output_loading_info=True)
    check(type(model).__name__ == "ModernBertForMaskedLM", f"AutoModelForMaskedLM built {type(model).__name__}")
    check(not any(info.values()), f"loading the export: {info}")
    d = max((v - reference[k]).abs().max().item() for k, v in model.state_dict().items())
    print(f"--to hf of the trained checkpoint: {type(model).__name__}, max |w - HF's trained| {d:.2e}")
    check(d <= TOL, f"the export's weights differ from HF's trained ones by {d:.2e}")
    # HF's own files, safetensors and pytorch_model.bin (transformers 5 saves safetensors only: the .bin is
    # torch.save of the state dict, tied decoder.weight included, as 4.x wrote it), to native: the same tensors.
    os.makedirs(os.path.join(tmp, "bin"))
    model.config.save_pretrained(os.path.join(tmp, "bin"))
    torch.save(model.state_dict(), os.path.join(tmp, "bin", "pytorch_model.bin"))
    for source in (hf_dir, os.path.join(tmp, "bin", "pytorch_model.bin")):
        out = os.path.join(tmp, "native-" + os.path.basename(source))
        done = convert(source, "--to", "native", "-o", out, "--vocab", vocab, "-q")
        if not check(done.returncode == 0, f"{source} --to native failed: {done.stderr}"):
            continue
        back = load_file(os.path.join(out, "model.safetensors"))
        same = back.keys() == load_file(os.path.join(hf_dir, "model.safetensors")).keys() and \
            all(torch.equal(back[k], model.state_dict()[k]) for k in back)
        check(same, f"{source} --to native: not the same tensors")
    refused = convert(trained, "--to", "tf", "-o", os.path.join(tmp, "tf", "model.ckpt"), "--vocab", vocab)
    print(f"--to tf: {refused.stderr.strip()}")
    check(refused.returncode != 0 and "no TF1 form" in refused.stderr and refused.stderr.count("\n") == 1,
          f"--to tf of a ModernBERT model: {refused.returncode} {refused.stderr}")
    check(not os.path.exists(os.path.join(tmp, "tf")), "a refused --to tf left output behind")


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="bertkit-modernbert-") as tmp:
        check_forward(check, tmp)
        check_long_rows(check, tmp)
        trained = check_trajectory(check, tmp)
        if trained:
            check_conversions(check, tmp, *trained)
    sys.exit(check.exit_code("test_modernbert"))


if __name__ == "__main__":
    main()
