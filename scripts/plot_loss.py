#!/usr/bin/env python3
"""Plots a bert-train (or bert-finetune train) run from its log.jsonl as a PNG, with matplotlib.

    plot_loss.py [--title TEXT] LOG.jsonl OUT.png

The log has one JSON object per line (man bert-train, LOGS): step records {"step", "time", "loss", "mlm_loss",
"mlm_accuracy", "lr", ...}, evaluation records {"step", "time", "eval_mlm_loss", "eval_mlm_accuracy", ...}, event
records {"step", "time", "event"} and, where the run wrote one, a header record {"step", "time", "header": {"tool",
"model_config", "parameters", "global_batch", "optimizer", ...}}; a resumed run appends, logging again the steps
after its checkpoint, and the later record of a step wins (and its header). The plot: the training loss and, where the log has them, the evaluation losses
against the step, with the learning rate on the right-hand axis; below, the MLM accuracy (or the task's accuracy)
with the evaluation accuracies. The title names the run (the log's directory, or --title) and its last step.
One line on stdout says what was drawn; a bad log is one line on stderr ("plot_loss.py: error: ...") and exit 1,
and no output file is written.
"""
import argparse
import json
import math
import os
import sys
import tempfile

PROG = "plot_loss.py"


class LogError(Exception):
    pass


def read_log(path):
    """Returns (steps, evals, header): the last step record of each step and the evaluation records, by step."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise LogError(f"{path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise LogError(f"{path}: not UTF-8 text (byte {e.start}): is it bert-train's log.jsonl?") from None
    steps, evals, header = {}, {}, None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # a last line cut off by a run still writing (or killed mid-line)
                break
            raise LogError(f"{path}:{number}: not a JSON object: is it bert-train's log.jsonl?") from None
        if not isinstance(record, dict):
            raise LogError(f"{path}:{number}: not a JSON object: is it bert-train's log.jsonl?")
        if isinstance(record.get("header"), dict):
            header = record["header"]
            continue
        step = record.get("step")
        if not isinstance(step, (int, float)) or isinstance(step, bool):
            raise LogError(f"{path}:{number}: a record without a numeric \"step\": is it bert-train's log.jsonl?")
        if "loss" in record:
            steps[step] = record
        elif any(k.startswith("eval_") for k in record):
            evals[step] = record
    if not steps:
        raise LogError(f"{path}: no step records (lines with \"step\" and \"loss\"): is it bert-train's log.jsonl?")
    return steps, evals, header


def series(records, key):
    """(xs, ys) of a field over records sorted by step, leaving out records without it and NaN/inf (null)."""
    xs, ys = [], []
    for step in sorted(records):
        value = records[step].get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            xs.append(step)
            ys.append(value)
    return xs, ys


def label(key):
    words = key.removeprefix("eval_").replace("_", " ")
    for short, full in (("mlm", "MLM"), ("nsp", "NSP"), ("f1", "F1"), ("mcc", "MCC")):
        words = " ".join(full if w == short else w for w in words.split())
    return ("eval " if key.startswith("eval_") else "train ") + words


def run_title(log_path, header):
    """'bert-train: RUN_DIR' and, from the run's header record, the model and the optimisation."""
    header = header or {}
    title = f"{header.get('tool', 'bert-train')}: {os.path.dirname(log_path) or os.path.basename(os.getcwd())}"
    about = []
    config = header.get("model_config")
    if isinstance(config, dict) and "hidden_size" in config:
        about.append(f"L={config.get('num_hidden_layers', '?')} H={config['hidden_size']}")
    if isinstance(header.get("parameters"), (int, float)):
        about.append(f"{header['parameters'] / 1e6:.3g}M parameters")
    if isinstance(header.get("global_batch"), (int, float)):
        about.append(f"global batch {header['global_batch']}")
    if isinstance(header.get("optimizer"), str) and isinstance(header.get("learning_rate"), (int, float)):
        about.append(f"{header['optimizer']} lr {header['learning_rate']:g}")
    return title + (f"\n{', '.join(about)}" if about else "")


def plot(log_path, out_path, title):
    steps, evals, header = read_log(log_path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LogError("matplotlib is not installed (scripts/setup.sh --torch installs it)") from None

    accuracy_key = next((k for k in ("mlm_accuracy", "accuracy") if series(steps, k)[0]), None)
    eval_keys = sorted({k for r in evals.values() for k in r if k.startswith("eval_") and k != "eval_samples"})
    eval_loss_keys = [k for k in eval_keys if "loss" in k]
    eval_score_keys = [k for k in eval_keys if "loss" not in k]
    panels = 2 if accuracy_key or eval_score_keys else 1
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(10, 4.2 + 2.6 * (panels - 1)), dpi=110,
                             gridspec_kw={"height_ratios": [3, 2][:panels]}, squeeze=False)
    top = axes[0][0]

    xs, ys = series(steps, "loss")
    if not xs:
        raise LogError(f"{log_path}: every loss in the log is null (NaN or inf): the run diverged")
    top.plot(xs, ys, color="C0", linewidth=1.6, label="train loss")
    for key in ("mlm_loss", "nsp_loss"):
        kx, ky = series(steps, key)
        if kx and ky != ys:
            top.plot(kx, ky, linewidth=1, alpha=0.7, linestyle="--", label=label(key))
    for i, key in enumerate(eval_loss_keys):
        ex, ey = series(evals, key)
        top.plot(ex, ey, marker="o", linestyle=":", color=f"C{3 + i}", label=label(key))
    top.set_ylabel("loss")
    top.grid(True, alpha=0.3)
    handles, labels = top.get_legend_handles_labels()

    lx, ly = series(steps, "lr")
    if lx:
        right = top.twinx()
        right.plot(lx, ly, color="0.45", linewidth=1, linestyle="-.", label="learning rate")
        right.set_ylabel("learning rate")
        right.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
        right.set_ylim(bottom=0)
        h, l = right.get_legend_handles_labels()
        handles, labels = handles + h, labels + l
    top.legend(handles, labels, loc="best", fontsize="small", framealpha=0.85)

    if panels == 2:
        bottom = axes[1][0]
        if accuracy_key:
            ax, ay = series(steps, accuracy_key)
            bottom.plot(ax, ay, color="C2", linewidth=1.6, label=label(accuracy_key))
            nx, ny = series(steps, "nsp_accuracy")
            if nx:
                bottom.plot(nx, ny, color="C1", linewidth=1, alpha=0.7, linestyle="--", label=label("nsp_accuracy"))
        for i, key in enumerate(eval_score_keys):
            ex, ey = series(evals, key)
            bottom.plot(ex, ey, marker="o", linestyle=":", color=f"C{5 + i}", label=label(key))
        bottom.set_ylabel("accuracy" if not accuracy_key or "accuracy" in accuracy_key else "score")
        bottom.grid(True, alpha=0.3)
        bottom.legend(loc="best", fontsize="small", framealpha=0.85)
    axes[-1][0].set_xlabel("step")

    last = max(steps)
    final = steps[last].get("loss")
    summary = f"step {last}" + (f", loss {final:.4g}" if isinstance(final, (int, float)) else "")
    if accuracy_key and isinstance(steps[last].get(accuracy_key), (int, float)):
        summary += f", {label(accuracy_key).removeprefix('train ')} {steps[last][accuracy_key]:.3f}"
    fig.suptitle(title or run_title(log_path, header), fontsize="large")
    top.set_title(summary, fontsize="small", color="0.3")
    fig.tight_layout()

    # Written under a temporary name beside the output and renamed, as bertkit's tools write their outputs.
    directory = os.path.dirname(os.path.abspath(out_path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(out_path) + ".", suffix=".tmp.png", dir=directory)
    except OSError as e:
        raise LogError(f"{out_path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png")
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, out_path)
    except BaseException:
        os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    ex = sorted(evals)
    print(f"{out_path}: {len(steps)} logged steps ({min(steps)}-{last}), {len(ex)} evaluations, "
          f"loss {ys[0]:.4g} -> {ys[-1]:.4g}" + (", learning rate on the right axis" if lx else ""))


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main():
    parser = argparse.ArgumentParser(prog=PROG, description="Plots bert-train's log.jsonl (loss, MLM accuracy, "
                                     "evaluations, learning rate against the step) as a PNG.")
    parser.add_argument("log", metavar="LOG.jsonl", help="bert-train's log (OUTPUT_DIR/log.jsonl or --log-file)")
    parser.add_argument("out", metavar="OUT.png", help="the PNG to write (replaced if it exists)")
    parser.add_argument("--title", help="the plot's title (default: the run's directory and model shape)")
    args = parser.parse_args()
    try:
        plot(args.log, args.out, args.title)
    except LogError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
