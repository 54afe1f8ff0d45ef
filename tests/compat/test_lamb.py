"""Our optimizers (bk::make_optimizer, through tests/torch_tools/optim_probe) against independent references.

LAMB: the project's independent float64 reference of the published algorithm with NVIDIA's choices for BERT
(lamb_reference.py says which).
AdamW: torch.optim.AdamW itself, after torch.nn.utils.clip_grad_norm_, with the same two parameter groups.
MADGRAD: facebookresearch's own madgrad 1.3 (PyPI), after clip_grad_norm_, the same two groups (coupled decay).
ACClip: a float64 numpy implementation of the published update (Zhang et al. 2020, alpha = 2), written here from
the paper, after the same clipping.

LAMB and AdamW run both ways: by torch's fused kernels (what bert-train runs) and in multi-tensor passes.
Seeded random weights and gradients for a handful of BERT-named parameters (one all-zero weight for the
zero-norm rule), 5 steps with a varying learning rate, in several settings: gradients large enough for the
pre-normalisation to act, small ones where it does not, trust ratio on all parameters, and a resume from exported
state in the middle. Prints the largest absolute difference per setting; asserts <= 1e-6 for every parameter
after every step and for the final moments.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from lamb_reference import Lamb, takes_decay

TOOLS = os.environ.get("TORCH_TEST_TOOLS") or os.path.join(os.environ.get("BIN", "build/tools"), "..", "tests")
PROBE = os.path.join(TOOLS, "optim_probe")
TOLERANCE = 1e-6
STEPS = 5
LRS = [0.004, 0.008, 0.012, 0.006, 0.002]

PARAMS = [
    ("bert.embeddings.word_embeddings.weight", (40, 16)),
    ("bert.embeddings.LayerNorm.weight", (16,)),
    ("bert.embeddings.LayerNorm.bias", (16,)),
    ("bert.encoder.layer.0.attention.self.query.weight", (16, 16)),
    ("bert.encoder.layer.0.attention.self.query.bias", (16,)),
    ("bert.encoder.layer.0.intermediate.dense.weight", (32, 16)),
    ("cls.predictions.bias", (40,)),
    ("extra.zero.weight", (4, 4)),
]


def make_data(seed, grad_scale):
    rng = np.random.default_rng(seed)
    weights = {}
    for name, shape in PARAMS:
        if name == "extra.zero.weight" or name.endswith("LayerNorm.bias") or name == "cls.predictions.bias":
            weights[name] = np.zeros(shape, np.float32)
        elif "LayerNorm.weight" in name:
            weights[name] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            weights[name] = (0.5 * rng.standard_normal(shape)).astype(np.float32)
    grads = [{name: (grad_scale * rng.standard_normal(shape)).astype(np.float32) for name, shape in PARAMS}
             for _ in range(STEPS)]
    return weights, grads


def lamb_reference(weights, grads, lrs, cfg):
    lamb = Lamb({n: weights[n] for n, _ in PARAMS}, cfg)
    history, norms = [], []
    for step_grads, lr in zip(grads, lrs):
        norms.append(lamb.step(step_grads, lr))
        history.append({n: x.copy() for n, x in lamb.w.items()})
    return history, norms, lamb.m, lamb.v


def torch_optimizer(make, state_names, weights, grads, lrs, cfg):
    """Steps a torch.optim optimizer (make(groups) builds it) after clip_grad_norm_, with our two parameter groups;
    returns the weights after each step, the norms and the two state tensors named in state_names."""
    import torch

    params = {n: torch.nn.Parameter(torch.from_numpy(weights[n].copy())) for n, _ in PARAMS}
    groups = [{"params": [p for n, p in params.items() if takes_decay(n)], "weight_decay": cfg["weight_decay"]},
              {"params": [p for n, p in params.items() if not takes_decay(n)], "weight_decay": 0.0}]
    opt = make(groups)
    history, norms = [], []
    for step_grads, lr in zip(grads, lrs):
        for n, p in params.items():
            p.grad = torch.from_numpy(step_grads[n].copy())
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), cfg["max_grad_norm"])))
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
        history.append({n: p.detach().numpy().astype(np.float64).copy() for n, p in params.items()})
    first, second = ({n: opt.state[p][key].numpy().astype(np.float64) for n, p in params.items()} for key in state_names)
    return history, norms, first, second


def adamw_torch(weights, grads, lrs, cfg):
    import torch

    make = lambda groups: torch.optim.AdamW(groups, lr=lrs[0], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"])
    return torch_optimizer(make, ("exp_avg", "exp_avg_sq"), weights, grads, lrs, cfg)


def madgrad_pypi(weights, grads, lrs, cfg):
    from madgrad import MADGRAD

    make = lambda groups: MADGRAD(groups, lr=lrs[0], momentum=cfg["beta1"], eps=cfg["eps"])
    return torch_optimizer(make, ("s", "grad_sum_sq"), weights, grads, lrs, cfg)


def clip(step_grads, max_norm):
    norm = float(np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in step_grads.values())))
    factor = min(1.0, max_norm / (norm + 1e-6)) if max_norm > 0 else 1.0  # <= 0: no clipping
    return {n: g.astype(np.float64) * factor for n, g in step_grads.items()}, norm


def acclip_reference(weights, grads, lrs, cfg):
    w = {n: weights[n].astype(np.float64) for n, _ in PARAMS}
    m = {n: np.zeros_like(x) for n, x in w.items()}
    tau = {n: np.zeros_like(x) for n, x in w.items()}
    history, norms = [], []
    for step_grads, lr in zip(grads, lrs):
        g, norm = clip(step_grads, cfg["max_grad_norm"])
        norms.append(norm)
        for n in w:
            if takes_decay(n):
                g[n] = g[n] + cfg["weight_decay"] * w[n]
            m[n] = cfg["beta1"] * m[n] + (1 - cfg["beta1"]) * g[n]
            tau[n] = cfg["beta2"] * tau[n] + (1 - cfg["beta2"]) * np.abs(g[n]) ** 2
            factor = np.clip(tau[n] ** 0.5 / (np.abs(m[n]) + cfg["eps"]), 0.0, 1.0)
            w[n] = w[n] - lr * factor * m[n]
        history.append({n: x.copy() for n, x in w.items()})
    return history, norms, m, tau


def run_probe(tmp, cfg, weights, grads, lrs, resume_at=None):
    data = os.path.join(tmp, "data.f32")
    with open(data, "wb") as f:
        for block in [weights] + grads:
            for name, _ in PARAMS:
                f.write(np.ascontiguousarray(block[name], dtype="<f4").tobytes())
    spec = dict(cfg, params=[{"name": n, "shape": list(s)} for n, s in PARAMS], lrs=lrs, data=data)
    if resume_at is not None:
        spec["resume_at"] = resume_at
    spec_path, out_path = os.path.join(tmp, "spec.json"), os.path.join(tmp, "out.f32")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    proc = subprocess.run([PROBE, spec_path, out_path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"optim_probe failed ({proc.returncode}): {proc.stderr}")
    report = json.loads(proc.stdout)
    flat = np.fromfile(out_path, dtype="<f4").astype(np.float64)
    sizes = [int(np.prod(s)) for _, s in PARAMS]
    total = sum(sizes)
    assert flat.size == total * (len(lrs) + 2), (flat.size, total)

    def split(block):
        out, offset = {}, 0
        for (name, shape), size in zip(PARAMS, sizes):
            out[name] = block[offset:offset + size].reshape(shape)
            offset += size
        return out

    history = [split(flat[s * total:(s + 1) * total]) for s in range(len(lrs))]
    m = split(flat[len(lrs) * total:(len(lrs) + 1) * total])
    v = split(flat[(len(lrs) + 1) * total:])
    return history, report["norms"], m, v, report["steps"]


def max_diff(a, b):
    return max(float(np.max(np.abs(a[n] - b[n]))) for n, _ in PARAMS)


def main():
    if not os.path.exists(PROBE):
        print(f"skip: {PROBE} not built (a build without LibTorch)")
        return 77
    base = {"beta1": 0.9, "beta2": 0.999, "eps": 1e-6, "weight_decay": 0.01, "max_grad_norm": 1.0,
            "grad_averaging": True, "trust_ratio_all": False, "fused": True}
    settings = [
        # (label, kind, config changes, seed, gradient scale, resume_at)
        ("lamb, pre-normalised gradients", "lamb", {}, 1, 0.2, None),
        ("lamb, gradients under max norm", "lamb", {}, 2, 0.005, None),
        ("lamb, trust ratio on all", "lamb", {"trust_ratio_all": True}, 3, 0.2, None),
        ("lamb, resumed after step 2", "lamb", {}, 4, 0.2, 2),
        ("lamb, weight decay 0.1, eps 1e-8", "lamb", {"weight_decay": 0.1, "eps": 1e-8}, 5, 0.05, None),
        # LAMB's and AdamW's fused kernels (what the trainer runs, the settings above) and their multi-tensor passes.
        ("lamb, multi-tensor passes", "lamb", {"fused": False}, 1, 0.2, None),
        ("lamb, multi-tensor passes, resumed", "lamb", {"fused": False, "trust_ratio_all": True}, 4, 0.005, 2),
        ("adamw, multi-tensor passes", "adamw", {"fused": False}, 6, 0.2, 3),
        ("adamw vs torch.optim.AdamW, clipped", "adamw", {}, 6, 0.2, None),
        ("adamw vs torch.optim.AdamW, unclipped", "adamw", {}, 7, 0.005, None),
        ("adamw vs torch.optim.AdamW, resumed", "adamw", {}, 8, 0.2, 3),
        # ACClip steps by lr * min(1, ...) * m, a gradient-sized step where Adam's is lr-sized: larger rates (and
        # unclipped gradients in the second setting), so that the weights move.
        ("acclip vs the paper, clipped", "acclip", {"beta2": 0.99, "eps": 1e-5, "lr_scale": 1000}, 9, 0.2, None),
        ("acclip vs the paper, unclipped, resumed", "acclip",
         {"beta2": 0.99, "eps": 1e-5, "lr_scale": 50, "max_grad_norm": 0.0}, 10, 0.5, 2),
        ("madgrad vs madgrad 1.3", "madgrad", {"eps": 1e-6}, 11, 0.2, None),
        ("madgrad vs madgrad 1.3, resumed", "madgrad", {"eps": 1e-6}, 12, 0.005, 3),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, kind, changes, seed, grad_scale, resume_at in settings:
            cfg = dict(base, **changes)
            lrs = [lr * cfg.pop("lr_scale", 1) for lr in LRS]
            weights, grads = make_data(seed, grad_scale)
            reference = {"lamb": lamb_reference, "adamw": adamw_torch, "acclip": acclip_reference,
                         "madgrad": madgrad_pypi}[kind]
            ref_history, ref_norms, ref_m, ref_v = reference(weights, grads, lrs, cfg)
            history, norms, m, v, steps = run_probe(tmp, dict(cfg, kind=kind), weights, grads, lrs, resume_at)
            weight_diff = max(max_diff(history[s], ref_history[s]) for s in range(STEPS))
            moment_diff = max(max_diff(m, ref_m), max_diff(v, ref_v))
            norm_diff = max(abs(a - b) / max(b, 1e-30) for a, b in zip(norms, ref_norms))
            moved = max_diff(history[-1], {n: weights[n].astype(np.float64) for n, _ in PARAMS})
            print(f"{label}: max |w - ref| {weight_diff:.2e} over {STEPS} steps (weights moved up to {moved:.3f}), "
                  f"moments {moment_diff:.2e}, grad norm rel {norm_diff:.1e} (norms {min(norms):.3f}..{max(norms):.3f})")
            if weight_diff > TOLERANCE or moment_diff > TOLERANCE:
                failures.append(f"{label}: differs by {max(weight_diff, moment_diff):.2e} > {TOLERANCE}")
            if norm_diff > 1e-5:
                failures.append(f"{label}: gradient norms differ by {norm_diff:.1e} relative")
            if steps != STEPS:
                failures.append(f"{label}: the optimizer counted {steps} steps, expected {STEPS}")
            if moved < 1e-3:
                failures.append(f"{label}: the weights barely moved ({moved:.1e}); the test would prove nothing")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
