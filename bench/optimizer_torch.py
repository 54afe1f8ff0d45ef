"""The peer of bench/optimizer.sh: torch.optim.AdamW (foreach and fused) on the parameters of HF transformers'
BertForPreTraining built from the same config, with random gradients. One JSON line per optimizer, as optim_bench."""
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
for kind in ("foreach", "fused"):
    torch.manual_seed(1)
    model = BertForPreTraining(config)
    params = list(model.parameters())
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    plain = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=1e-4, eps=1e-6, foreach=kind == "foreach", fused=kind == "fused")
    with torch.no_grad():
        torch.nn.utils.clip_grad_norm_(params, 1.0)  # as ours: clipping is part of the step
        opt.step()
        open("/proc/self/clear_refs", "w").write("5")
        base, best = status_mb("VmRSS:"), 1e30
        for _ in range(steps):
            start = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            best = min(best, (time.perf_counter() - start) * 1000)
    print(json.dumps({"optimizer": f"torch-adamw-{kind}", "parameters": sum(p.numel() for p in params),
                      "ms_per_step": round(best, 1), "peak_extra_mb": round(status_mb("VmHWM:") - base, 1)}))
    sys.stdout.flush()
