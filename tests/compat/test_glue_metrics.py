"""The GLUE scores of bert-finetune (tasks/finetune/glue_metrics.h, through tests/tools/metrics_probe) against
scikit-learn (accuracy_score, f1_score, matthews_corrcoef) and scipy (pearsonr, spearmanr) on the same data:
random binary and three-class predictions, ties in the regression values (Spearman's average ranks), all-one-class
predictions (F1 and MCC degenerate), and perfect and inverted agreement. Asserted to 1e-12."""
import json
import os
import subprocess
import sys

from compat_common import TEST_TOOLS, Checks, skip

try:
    import numpy as np
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef
except ImportError as e:
    skip(e)

PROBE = os.path.join(TEST_TOOLS, "metrics_probe")
if not os.access(PROBE, os.X_OK):
    skip(f"no metrics_probe at {PROBE}")


def ours(data):
    proc = subprocess.run([PROBE], input=json.dumps(data), capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main():
    check = Checks()
    rng = np.random.default_rng(3)
    cases = [
        ("binary", rng.integers(0, 2, 400), rng.integers(0, 2, 400)),
        ("three classes (MNLI-like)", rng.integers(0, 3, 500), rng.integers(0, 3, 500)),
        ("all predicted 0", np.zeros(50, int), rng.integers(0, 2, 50)),
        ("perfect", np.arange(60) % 2, np.arange(60) % 2),
        ("inverted", 1 - np.arange(60) % 2, np.arange(60) % 2),
    ]
    for name, p, g in cases:
        got = ours({"predicted": p.tolist(), "gold": g.tolist()})
        want = {"accuracy": accuracy_score(g, p), "f1": f1_score(g, p, pos_label=1, average="binary", zero_division=0)
                if len(set(g) | set(p)) <= 2 else None, "mcc": matthews_corrcoef(g, p)}
        for metric, value in want.items():
            if value is None:
                continue
            check(abs(got[metric] - value) <= 1e-12, f"{name}: {metric} {got[metric]} vs scikit-learn {value}")
        print(f"{name}: accuracy {got['accuracy']:.6f}, f1 {got['f1']:.6f}, mcc {got['mcc']:.6f} (scikit-learn agrees)")
    regression = [
        ("continuous", rng.normal(size=300), rng.normal(size=300)),
        ("ties (STS-B scores in steps of 0.2)", np.round(rng.uniform(0, 5, 300) * 5) / 5,
         np.round(rng.uniform(0, 5, 300) * 5) / 5),
        ("monotone", np.arange(40.0), np.arange(40.0) ** 3),
    ]
    for name, x, y in regression:
        got = ours({"x": x.tolist(), "y": y.tolist()})
        for metric, value in (("pearson", pearsonr(x, y)[0]), ("spearman", spearmanr(x, y)[0])):
            check(abs(got[metric] - value) <= 1e-12, f"{name}: {metric} {got[metric]} vs scipy {value}")
        print(f"{name}: pearson {got['pearson']:.6f}, spearman {got['spearman']:.6f} (scipy agrees)")
    return check.exit_code("glue metrics")


if __name__ == "__main__":
    sys.exit(main())
