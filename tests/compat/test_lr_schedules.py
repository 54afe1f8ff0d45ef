"""bert-train's learning-rate schedules against HF transformers' own (transformers.optimization), read from the
rate each step logs in log.jsonl, and resumed runs across the schedule's phase boundaries.

HF's LambdaLR gives update t (from 1) the factor lambda(t - 1) and ours the factor of NVIDIA's convention
(schedule.h), which is lambda(t): the same curve, one step earlier. So the reference for step t is HF's rate after
t scheduler steps. Compared, to 1e-12 relative:
  - warm-up-stable-decay (--warmup-steps W --lr-decay-steps D) with linear, cosine and 1-sqrt decay against
    get_wsd_schedule(W, D, num_stable_steps = STEPS - W - D);
  - cosine and linear over the whole run after the warm-up against get_cosine_schedule_with_warmup and
    get_linear_schedule_with_warmup; 1-sqrt against get_wsd_schedule without a stable phase.
Resume: a 1-sqrt WSD run stopped in its warm-up (step 2), resumed and stopped in its stable phase (step 6),
resumed to the end, logs the straight run's rates and ends with its weights bit for bit. A decay phase run on its
own (--init-checkpoint --init-optimizer from the stable phase's checkpoint, --lr-decay-steps D, no warm-up) takes
the rates of the straight run's last D steps.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, Checks, skip

try:
    import torch
    from safetensors.torch import load_file
    from transformers import optimization
except ImportError as e:
    skip(e)

from test_train_trajectory import CONFIG, MAX_PRED, MICRO_BATCH, ACCUMULATION, write_samples

BERT_TRAIN = os.path.join(BIN, "bert-train")
if not os.access(BERT_TRAIN, os.X_OK):
    skip(f"no bert-train at '{BERT_TRAIN}' (a build without -DBERTKIT_WITH_TORCH=ON)")

STEPS, WARMUP, DECAY = 12, 3, 5
LR = 1e-3


def hf_rates(make):
    """LR * factor after t scheduler steps, t = 1..STEPS, from HF's scheduler object stepped as a trainer does."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=LR)
    sched = make(opt)
    rates = []
    for _ in range(STEPS):
        opt.step()
        sched.step()
        rates.append(sched.get_last_lr()[0])
    return rates


def train(tmp, name, data, config_path, *extra, steps=STEPS):
    out = os.path.join(tmp, name)
    cmd = [BERT_TRAIN, "--config", config_path, "--input", data, "--output-dir", out,
           "--train-batch-size", str(MICRO_BATCH * ACCUMULATION), "--gradient-accumulation-steps", str(ACCUMULATION),
           "--max-steps", str(steps), "--learning-rate", str(LR), "--optimizer", "adamw", "--max-predictions",
           str(MAX_PRED), "--precision", "fp32", "--no-tensorboard", "-q", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bert-train {' '.join(extra)} failed ({proc.returncode}): {proc.stderr}")
    return out


def logged_rates(out):
    with open(os.path.join(out, "log.jsonl")) as f:
        return {r["step"]: r["lr"] for r in map(json.loads, f) if "lr" in r and "loss" in r}


def final_weights(out):
    with open(os.path.join(out, "checkpoints", "latest")) as f:
        latest = f.read().strip()
    ckpt = latest if os.path.isabs(latest) else os.path.join(out, "checkpoints", latest)
    return ckpt, load_file(os.path.join(ckpt, "model.safetensors"))


def same_rates(check, label, ours, reference):
    worst = max(abs(ours[t] - ref) / max(ref, 1e-300) if ref else abs(ours[t]) for t, ref in reference.items())
    print(f"{label}: {len(reference)} steps, rates {min(reference.values()):.3g}..{max(reference.values()):.3g}, "
          f"max relative difference {worst:.1e}")
    check(worst <= 1e-12, f"{label}: a logged rate differs from the reference by {worst:.1e}")


def main():
    check = Checks()
    opt_ = optimization  # HF's schedulers
    with tempfile.TemporaryDirectory(prefix="bertkit-schedules-") as tmp:
        data = os.path.join(tmp, "step.hdf5")
        write_samples(data, 11)
        config_path = os.path.join(tmp, "bert_config.json")
        with open(config_path, "w") as f:
            json.dump(CONFIG, f)
        stable = STEPS - WARMUP - DECAY
        for decay in ("linear", "cosine", "1-sqrt"):
            out = train(tmp, f"wsd-{decay}", data, config_path, "--warmup-steps", str(WARMUP), "--lr-decay-steps",
                        str(DECAY), "--lr-decay", decay)
            ref = hf_rates(lambda o: opt_.get_wsd_schedule(o, WARMUP, DECAY, num_stable_steps=stable, decay_type=decay))
            same_rates(check, f"WSD {decay} vs get_wsd_schedule", logged_rates(out), dict(enumerate(ref, 1)))
        whole = {"cosine": lambda o: opt_.get_cosine_schedule_with_warmup(o, WARMUP, STEPS),
                 "linear": lambda o: opt_.get_linear_schedule_with_warmup(o, WARMUP, STEPS),
                 "1-sqrt": lambda o: opt_.get_wsd_schedule(o, WARMUP, STEPS - WARMUP, num_stable_steps=0,
                                                           decay_type="1-sqrt")}
        for decay, make in whole.items():
            out = train(tmp, f"whole-{decay}", data, config_path, "--warmup-steps", str(WARMUP), "--lr-decay", decay)
            same_rates(check, f"{decay} after the warm-up vs HF", logged_rates(out), dict(enumerate(hf_rates(make), 1)))

        # Resumed across the phases: stopped at step 2 (warm-up) and 6 (stable), then to the end.
        wsd = ["--warmup-steps", str(WARMUP), "--lr-decay-steps", str(DECAY), "--lr-decay", "1-sqrt"]
        straight = train(tmp, "straight", data, config_path, *wsd)
        pieces = train(tmp, "pieces", data, config_path, *wsd, "--stop-after", "2")
        train(tmp, "pieces", data, config_path, *wsd, "--resume", "--stop-after", "4")
        train(tmp, "pieces", data, config_path, *wsd, "--resume")
        straight_rates, piece_rates = logged_rates(straight), logged_rates(pieces)
        check(piece_rates == straight_rates, f"resumed at steps 2 and 6: logged rates {piece_rates} differ from the "
              f"straight run's {straight_rates}")
        _, a = final_weights(straight)
        _, b = final_weights(pieces)
        differing = [k for k in a if not torch.equal(a[k], b[k])]
        print(f"resumed in the warm-up and in the stable phase: {len(a)} tensors, {len(differing)} differ")
        check(not differing, f"the resumed run's weights differ from the straight run's: {differing[:3]}")

        # The decay phase as a run of its own, from the stable phase's checkpoint (step STEPS - DECAY).
        stable_run = train(tmp, "stable", data, config_path, *wsd, "--stop-after", str(STEPS - DECAY))
        ckpt, _ = final_weights(stable_run)
        decay_run = train(tmp, "decay", data, config_path, "--warmup-steps", "0", "--lr-decay-steps", str(DECAY),
                          "--lr-decay", "1-sqrt", "--init-checkpoint", ckpt, "--init-optimizer", steps=DECAY)
        decay_rates = logged_rates(decay_run)
        expected = {t: straight_rates[STEPS - DECAY + t] for t in range(1, DECAY + 1)}
        same_rates(check, "the decay phase as its own run vs the straight run's last steps", decay_rates, expected)
    return check.exit_code("learning-rate schedules")


if __name__ == "__main__":
    sys.exit(main())
