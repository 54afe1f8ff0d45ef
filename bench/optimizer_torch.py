"""The peers of bench/optimizer.sh: torch.optim.AdamW (foreach and fused) and torch-optimi's StableAdamW (foreach
and for-loop; its Triton form needs a GPU) on the parameters of HF transformers' BertForPreTraining built from the
same config, with random gradients. One JSON line per optimizer, as optim_bench."""
import json
import resource
import sys
import time

import torch
from transformers import BertConfig, BertForPreTraining


def status_mb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
    return 0.0


config, steps = BertConfig.from_json_file(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(int(sys.argv[3]))
def measure(name, params, step):
    """The best of `steps` steps after a first one; each starts from the same gradients (optimi's foreach form
    squares them in place)."""
    grads = [p.grad.clone() for p in params]
    with torch.no_grad():
        step()
        open("/proc/self/clear_refs", "w").write("5")
        base, best = status_mb("VmRSS:"), 1e30
        for _ in range(steps):
            for p, g in zip(params, grads):
                p.grad.copy_(g)
            start = time.perf_counter()
            step()
            best = min(best, (time.perf_counter() - start) * 1000)
    print(json.dumps({"optimizer": name, "parameters": sum(p.numel() for p in params),
                      "ms_per_step": round(best, 1), "peak_extra_mb": round(status_mb("VmHWM:") - base, 1)}))
    sys.stdout.flush()


for kind in ("foreach", "fused", "optimi-foreach", "optimi-loop"):
    torch.manual_seed(1)
    model = BertForPreTraining(config)
    params = list(model.parameters())
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    plain = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}]
    if kind.startswith("optimi"):
        from optimi import StableAdamW
        opt = StableAdamW(groups, lr=1e-4, betas=(0.9, 0.98), eps=1e-6, foreach=kind == "optimi-foreach", triton=False)
        measure(f"optimi-stableadamw-{kind[7:]}", params, opt.step)  # no gradient clipping, as bert-train's default
        continue
    opt = torch.optim.AdamW(groups, lr=1e-4, eps=1e-6, foreach=kind == "foreach", fused=kind == "fused")

    def clipped_step():
        torch.nn.utils.clip_grad_norm_(params, 1.0)  # as ours: clipping is part of the step
        opt.step()
    measure(f"torch-adamw-{kind}", params, clipped_step)
