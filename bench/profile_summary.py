#!/usr/bin/env python3
"""Totals a Chrome trace from bert-train's BERTKIT_PROFILE (torch's Kineto profiler).

  bench/profile_summary.py TRACE [--steps N] [--top K]

Prints, per step (the trace holds N steps; default 3, BERTKIT_PROFILE's default window): the GPU's busy time
(the union of its kernels, copies and memsets) against the wall time they span, the kernel time by kind (GEMM,
attention, normalisation, dropout, elementwise, optimizer, copies) and the K longest kernels; and the host's
operators (top level only: the operators bert-train called, not those they called), their count and time. A GPU
busy share well under 100% with host time near the wall time means the step is bound by the host's dispatch.
"""
import argparse
import collections
import json
import re

KINDS = [  # first match wins; names as the CUDA kernels and ATen operators are called
    ("attention", r"flash|fmha|attention|sdpa"),
    ("gemm", r"gemm|cutlass|xmma|nvjet|cublas|sm\d+_|ampere_|hopper_"),
    ("layer_norm", r"layer_norm|LayerNorm|GammaBeta"),  # bertkit's fused dropout_add_layer_norm_* too
    ("dropout", r"dropout|bernoulli|philox|masked_scale"),
    ("gelu", r"Gelu|gelu"),
    ("optimizer", r"Adam|Lamb|lamb_|multi_tensor_apply"),
    ("reduction", r"reduce|norm_kernel|sum_kernel"),
    ("index/gather", r"index|gather|scatter|embedding"),
    ("copy/cast", r"copy|cast|Memcpy|Memset|memcpy|memset"),
    ("elementwise", r"elementwise|vectorized|unrolled"),
]


def kind_of(name):
    for kind, pattern in KINDS:
        if re.search(pattern, name):
            return kind
    return "other"


def union_length(intervals):
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def top_level(ops):
    """The operators not nested inside another on the same thread."""
    out, by_thread = [], collections.defaultdict(list)
    for e in ops:
        by_thread[e["tid"]].append(e)
    for events in by_thread.values():
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = float("-inf")
        for e in events:
            if e["ts"] >= end:
                out.append(e)
                end = e["ts"] + e["dur"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    events = [e for e in json.load(open(args.trace))["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    ops = top_level([e for e in events if e.get("cat") == "cpu_op"])
    n = args.steps
    if ops:
        wall = max(e["ts"] + e["dur"] for e in ops) - min(e["ts"] for e in ops)
        host = sum(e["dur"] for e in ops)
        print(f"host: {len(ops) / n:.0f} operators per step, {host / n / 1e3:.2f} ms in them per step "
              f"({wall / n / 1e3:.2f} ms wall per step from the first to the last)")
    if not gpu:
        print("no GPU activity in the trace (a CPU run): the host's operators by time")
        by_op = collections.Counter()
        for e in ops:
            by_op[e["name"]] += e["dur"]
        for name, us in by_op.most_common(args.top):
            print(f"  {us / n / 1e3:9.3f} ms  {name}")
        return
    start = min(e["ts"] for e in gpu)
    stop = max(e["ts"] + e["dur"] for e in gpu)
    busy = union_length([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    print(f"gpu: {busy / n / 1e3:.2f} ms busy per step of {(stop - start) / n / 1e3:.2f} ms "
          f"({100 * busy / (stop - start):.1f}% busy), {len(gpu) / n:.0f} kernels/copies per step")
    by_kind, by_name, count = collections.Counter(), collections.Counter(), collections.Counter()
    for e in gpu:
        by_kind[kind_of(e["name"])] += e["dur"]
        by_name[e["name"]] += e["dur"]
        count[e["name"]] += 1
    total = sum(by_kind.values())
    for kind, us in by_kind.most_common():
        print(f"  {kind:14s} {us / n / 1e3:8.2f} ms/step  {100 * us / total:5.1f}%")
    print(f"the {args.top} longest kernels (total per step, calls per step):")
    for name, us in by_name.most_common(args.top):
        print(f"  {us / n / 1e3:8.2f} ms {count[name] / n:6.0f}x  {name[:110]}")


if __name__ == "__main__":
    main()
