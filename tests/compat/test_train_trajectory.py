"""bert-train's composed optimizer step against a reference run: K = 10 steps of the real tool on a tiny BERT
(fp32, dropout 0, gradient accumulation 2, clipping on, linear warm-up then poly decay) against HF transformers'
BertForPreTraining on the same batches from the same HDF5 file, stepped by torch.optim.AdamW, by torch-optimi's
StableAdamW (with its decoupled and its fully decoupled weight decay), and by the project's independent LAMB
reference, lamb_reference.py. Asserted: the loss of every step within 1e-5 relative, and every
final weight within 1e-5 absolute.

What the reference does is written here from the algorithms, not from our code:
  - loss: per step, the masked-LM cross entropy summed over every real masked position of the step's micro-batches
    divided by their count, plus the next-sentence cross entropy summed over its sequences divided by theirs (the
    mean over the global batch, as NVIDIA's and Google's scripts compute it for one step); gradients are summed
    over the micro-batches before the update;
  - AdamW: torch.nn.utils.clip_grad_norm_ to MAX_GRAD_NORM on the summed gradients, then torch.optim.AdamW with weight decay
    except on biases and LayerNorm parameters;
  - StableAdamW: optimi.StableAdamW (its for-loop form) with the same groups, betas (0.9, 0.98), no gradient
    clipping (bert-train's default for it), decouple_lr as --fully-decoupled-weight-decay asks;
  - learning rate of step t (t from 1): NVIDIA's PolyWarmUpScheduler, p = t / K: lr p / w while p < w, else
    lr (1 - p)^0.5.
Data order: the file holds exactly one optimizer step of samples (16 = 2 micro-batches of 8), so every step sees
every sample once whatever order bert-train's sampler picks; how the 16 are split over the two micro-batches does
not change the step (the loss is normalised by the step's counts, and padding is masked), so the reference cuts
the file in two halves. A per-micro-batch normalisation or a clipping per micro-batch would change it.
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

from compat_common import BIN, Checks, skip

try:
    import h5py
    import numpy as np
    import torch
    from safetensors.torch import load_file
    from transformers import BertConfig, BertForPreTraining
except ImportError as e:
    skip(e)

from lamb_reference import Lamb, takes_decay

try:
    from optimi import StableAdamW
except ImportError as e:
    skip(e)
warnings.filterwarnings("ignore", message="You are using weight_decay")  # optimi on decouple_lr with 0.01: meant here

BERT_TRAIN = os.path.join(BIN, "bert-train")
if not os.access(BERT_TRAIN, os.X_OK):
    skip(f"no bert-train at '{BERT_TRAIN}' (a build without -DBERTKIT_WITH_TORCH=ON)")

STEPS = 10
MICRO_BATCH, ACCUMULATION = 8, 2
SEQ_LEN, MAX_PRED = 24, 5
VOCAB = 97
LR, WARMUP, DEGREE = 5e-3, 0.3, 0.5
LOSS_RTOL, WEIGHT_ATOL = 1e-5, 1e-5
MAX_GRAD_NORM = 1.4  # inside the range of the gradient norms of these steps: clipping acts in some steps only
CONFIG = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
              hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
              max_position_embeddings=SEQ_LEN, type_vocab_size=2, initializer_range=0.05)
torch.set_num_threads(2)
torch.use_deterministic_algorithms(True)


def write_samples(path, seed):
    """16 samples of varied length and number of masked positions, in NVIDIA's layout (first 0 position ends the
    predictions)."""
    rng = np.random.default_rng(seed)
    n = MICRO_BATCH * ACCUMULATION
    a = {"input_ids": np.zeros((n, SEQ_LEN), "i4"), "input_mask": np.zeros((n, SEQ_LEN), "i1"),
         "segment_ids": np.zeros((n, SEQ_LEN), "i1"), "masked_lm_positions": np.zeros((n, MAX_PRED), "i4"),
         "masked_lm_ids": np.zeros((n, MAX_PRED), "i4"), "next_sentence_labels": np.zeros(n, "i1")}
    for i in range(n):
        length = SEQ_LEN if i == 0 else int(rng.integers(8, SEQ_LEN + 1))
        a_len = int(rng.integers(2, length - 3))
        a["input_ids"][i, :length] = rng.integers(5, VOCAB, length)
        a["input_mask"][i, :length] = 1
        a["segment_ids"][i, a_len:length] = 1
        k = int(rng.integers(1, MAX_PRED + 1))
        positions = np.sort(rng.choice(np.arange(1, length - 1), k, replace=False))
        a["masked_lm_positions"][i, :k] = positions
        a["masked_lm_ids"][i, :k] = rng.integers(5, VOCAB, k)
        a["next_sentence_labels"][i] = int(rng.integers(0, 2))
    with h5py.File(path, "w") as f:
        for name, data in a.items():
            f.create_dataset(name, data=data, dtype=data.dtype, compression="gzip")
    return a


def micro_batches(a):
    out = []
    for start in range(0, MICRO_BATCH * ACCUMULATION, MICRO_BATCH):
        sl = slice(start, start + MICRO_BATCH)
        pos = torch.from_numpy(a["masked_lm_positions"][sl].astype(np.int64))
        ids = torch.from_numpy(a["masked_lm_ids"][sl].astype(np.int64))
        used = torch.cumprod((pos != 0).long(), 1).bool()
        out.append({"input_ids": torch.from_numpy(a["input_ids"][sl].astype(np.int64)),
                    "token_type_ids": torch.from_numpy(a["segment_ids"][sl].astype(np.int64)),
                    "attention_mask": torch.from_numpy(a["input_mask"][sl].astype(np.int64)),
                    "positions": pos, "labels": torch.where(used, ids, torch.full_like(ids, -1)),
                    "nsp": torch.from_numpy(a["next_sentence_labels"][sl].astype(np.int64))})
    return out


def schedule(t):
    p = min(max(t / STEPS, 0.0), 1.0)
    return LR * p / WARMUP if p < WARMUP else LR * (1 - p) ** DEGREE


def reference_step(model, batches):
    """Forward and backward of one optimizer step; returns the logged loss (MLM mean + NSP mean)."""
    masked = sum(int((b["labels"] >= 0).sum()) for b in batches)
    sequences = sum(b["input_ids"].shape[0] for b in batches)
    mlm_total = nsp_total = 0.0
    for b in batches:
        out = model(input_ids=b["input_ids"], token_type_ids=b["token_type_ids"], attention_mask=b["attention_mask"])
        rows = torch.arange(b["positions"].shape[0]).unsqueeze(1).expand_as(b["positions"])
        logits = out.prediction_logits[rows, b["positions"]].reshape(-1, VOCAB)
        mlm = torch.nn.functional.cross_entropy(logits, b["labels"].reshape(-1), ignore_index=-1, reduction="sum")
        nsp = torch.nn.functional.cross_entropy(out.seq_relationship_logits, b["nsp"], reduction="sum")
        (mlm / masked + nsp / sequences).backward()
        mlm_total += mlm.item()
        nsp_total += nsp.item()
    return mlm_total / masked + nsp_total / sequences


def update_clipped(opt, params):
    """How many tensors' steps StableAdamW cut in the step just taken: sqrt(mean(g^2 / max(v, eps^2))) > 1."""
    cut = 0
    for p in params.values():
        v = opt.state[p]["exp_avg_sq"]
        cut += int((p.grad.pow(2) / v.clamp_min(1e-12)).mean().sqrt() > 1)
    return cut


def reference_run(model, batches, optimizer):
    params = dict(model.named_parameters())
    losses, norms = [], []
    stable = optimizer.startswith("stableadamw")
    groups = [{"params": [p for n, p in params.items() if takes_decay(n)], "weight_decay": 0.01},
              {"params": [p for n, p in params.items() if not takes_decay(n)], "weight_decay": 0.0}]
    if optimizer == "adamw":
        opt = torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.999), eps=1e-6)
    elif stable:
        opt = StableAdamW(groups, lr=LR, betas=(0.9, 0.98), eps=1e-6, decouple_lr=optimizer.endswith("decoupled"),
                          foreach=False, triton=False)
        reference_run.update_clips = 0
    else:
        lamb = Lamb({n: p.detach().numpy() for n, p in params.items()},
                    {"beta1": 0.9, "beta2": 0.999, "eps": 1e-6, "weight_decay": 0.01, "max_grad_norm": MAX_GRAD_NORM,
                     "trust_ratio_all": False})
    for t in range(1, STEPS + 1):
        model.zero_grad(set_to_none=True)
        losses.append(reference_step(model, batches))
        if optimizer == "adamw" or stable:
            # StableAdamW runs unclipped: an infinite bound only measures the norm.
            bound = float("inf") if stable else MAX_GRAD_NORM
            norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), bound)))
            for group in opt.param_groups:
                group["lr"] = schedule(t)
            opt.step()
            if stable:
                reference_run.update_clips += update_clipped(opt, params)
        else:
            norms.append(lamb.step({n: p.grad.numpy() for n, p in params.items()}, schedule(t)))
            with torch.no_grad():
                for n, p in params.items():
                    p.copy_(torch.from_numpy(lamb.w[n]))
    return losses, norms


def run_bert_train(tmp, name, data, config_path, init_dir, optimizer):
    out = os.path.join(tmp, name)
    cmd = [BERT_TRAIN, "--config", config_path, "--input", data, "--output-dir", out, "--init-checkpoint", init_dir,
           "--train-batch-size", str(MICRO_BATCH * ACCUMULATION), "--gradient-accumulation-steps", str(ACCUMULATION),
           "--max-steps", str(STEPS), "--learning-rate", str(LR), "--warmup-proportion", str(WARMUP),
           "--lr-decay", "poly", "--max-predictions", str(MAX_PRED), "--precision", "fp32", "--no-tensorboard", "-q"]
    if optimizer.startswith("stableadamw"):
        cmd += ["--optimizer", "stableadamw"] + (["--fully-decoupled-weight-decay"] if optimizer.endswith("decoupled") else [])
    else:
        cmd += ["--optimizer", optimizer, "--max-grad-norm", str(MAX_GRAD_NORM)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bert-train failed ({proc.returncode}): {proc.stderr}")
    with open(os.path.join(out, "log.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    steps = [r for r in records if "loss" in r]
    with open(os.path.join(out, "checkpoints", "latest")) as f:
        latest = f.read().strip()
    ckpt = latest if os.path.isabs(latest) else os.path.join(out, "checkpoints", latest)
    return [r["loss"] for r in steps], [r.get("grad_norm") for r in steps], load_file(os.path.join(ckpt, "model.safetensors"))


def main():
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="bertkit-trajectory-") as tmp:
        data = os.path.join(tmp, "step.hdf5")
        batches = micro_batches(write_samples(data, 11))
        config_path = os.path.join(tmp, "bert_config.json")
        with open(config_path, "w") as f:
            json.dump(CONFIG, f)
        for optimizer, seed in (("adamw", 3), ("lamb", 4), ("stableadamw", 5), ("stableadamw-decoupled", 6)):
            torch.manual_seed(seed)
            model = BertForPreTraining(BertConfig(**CONFIG)).train()
            init_dir = os.path.join(tmp, f"init-{optimizer}")
            model.save_pretrained(init_dir, safe_serialization=True)
            initial = {n: p.detach().clone() for n, p in model.named_parameters()}
            ref_losses, ref_norms = reference_run(model, batches, optimizer)
            losses, norms, weights = run_bert_train(tmp, optimizer, data, config_path, init_dir, optimizer)
            label = {"adamw": "AdamW vs torch.optim.AdamW", "lamb": "LAMB vs lamb_reference",
                     "stableadamw": "StableAdamW vs optimi.StableAdamW",
                     "stableadamw-decoupled": "StableAdamW (fully decoupled decay) vs optimi's decouple_lr"}[optimizer]
            if not check(len(losses) == STEPS, f"{label}: bert-train logged {len(losses)} steps, expected {STEPS}"):
                continue
            loss_rel = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
            state = model.state_dict()
            diffs = {k: (v - state[k]).abs().max().item() for k, v in weights.items() if k in state}
            worst = max(diffs, key=diffs.get)
            moved = max((state[n] - initial[n]).abs().max().item() for n in initial)
            clipped = sum(1 for n in ref_norms if n > MAX_GRAD_NORM)
            print(f"{label}: losses {ref_losses[0]:.4f} -> {ref_losses[-1]:.4f}, max relative loss difference "
                  f"{loss_rel:.2e}; {len(diffs)} tensors, max |w - ref| {diffs[worst]:.2e} ({worst}); weights moved up "
                  f"to {moved:.3f}; gradient norms {min(ref_norms):.2f}..{max(ref_norms):.2f}, above {MAX_GRAD_NORM} in {clipped} of {STEPS} steps")
            check(loss_rel <= LOSS_RTOL, f"{label}: a step's loss differs by {loss_rel:.2e} relative > {LOSS_RTOL}")
            check(diffs[worst] <= WEIGHT_ATOL, f"{label}: {worst} differs by {diffs[worst]:.2e} > {WEIGHT_ATOL}")
            check(set(weights) == {k for k in state if not k.startswith("cls.predictions.decoder.")},
                  f"{label}: checkpoint keys differ from HF's: {sorted(set(weights) ^ set(state))}")
            check(moved > 1e-2, f"{label}: the weights barely moved ({moved:.1e}); the test would prove nothing")
            if optimizer.startswith("stableadamw"):
                cuts = reference_run.update_clips
                print(f"{label}: update clipping cut {cuts} of {STEPS * len(initial)} tensor steps")
                check(0 < cuts < STEPS * len(initial), f"{label}: update clipping acted on {cuts} tensor steps; the "
                      "test should see both sides")
            else:
                check(0 < clipped < STEPS or optimizer == "lamb",
                      f"{label}: clipping acted in {clipped} of {STEPS} steps; the test should see both sides")
            norm_rel = max(abs(a - b) / b for a, b in zip(norms, ref_norms) if a is not None)
            check(norm_rel <= 1e-4, f"{label}: gradient norms differ by {norm_rel:.1e} relative")
    return check.exit_code("train trajectory")


if __name__ == "__main__":
    sys.exit(main())
