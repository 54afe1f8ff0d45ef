"""MLPerf-style runs of bert-train on the CPU: evaluation during training, the stop at a target, and the MLPerf log
read by MLCommons' own compliance checker (PyPI mlperf-logging).

  - a run with --eval-input/--eval-every-samples logs eval_mlm_accuracy and eval_mlm_loss at the expected steps, and
    the last evaluation equals bert-eval's on the final checkpoint over the same samples (one process, and two
    processes that split the set and all-reduce their sums);
  - --target-mlm-accuracy stops the run with a checkpoint at the first evaluation that reaches it (exit 0, the log
    says so); a target out of reach is reported as not reached at --max-steps;
  - the --mlperf-log file passes `python -m mlperf_logging.compliance_checker --usage training --ruleset 5.0.0` in
    the open division. 5.0.0 is the last ruleset whose benchmark list holds bert (5.1.0 and later reject
    submission_benchmark bert). The same log declared closed fails, and only on the closed rule's accuracy target
    (eval_accuracy >= 0.720), which a tiny CPU run does not reach.
"""
import json
import os
import subprocess
import sys
import tempfile

from compat_common import BIN, FIXTURES, Checks, require_fixtures, skip

require_fixtures()
if not os.path.exists(os.path.join(BIN, "bert-train")):
    skip("bert-train not built (BERTKIT_WITH_TORCH=OFF)")
try:
    import mlperf_logging  # noqa: F401
except ImportError:
    skip("no mlperf-logging in this Python (scripts/setup.sh --python installs it)")

check = Checks()
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CONFIG = os.path.join(SRC, "tests/fixtures/tiny_bert_config.json")
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def tool(name, *args, ok=True):
    proc = subprocess.run([os.path.join(BIN, name), *map(str, args)], capture_output=True, text=True, env=ENV)
    if ok and proc.returncode != 0:
        raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr}")
    return proc


def log_lines(run_dir):
    return [json.loads(line) for line in open(os.path.join(run_dir, "log.jsonl"))]


def checker(path, ruleset="5.0.0"):
    proc = subprocess.run([sys.executable, "-m", "mlperf_logging.compliance_checker", "--usage", "training",
                           "--ruleset", ruleset, path], capture_output=True, text=True, cwd=os.path.dirname(path))
    return proc.returncode, proc.stdout + proc.stderr


with tempfile.TemporaryDirectory() as tmp:
    vocab = f"{FIXTURES}/vocab/bert-base-uncased-vocab.txt"
    text = f"{FIXTURES}/pretraining_text/sample_text.txt"
    train, held_out = os.path.join(tmp, "train.hdf5"), os.path.join(tmp, "eval.hdf5")
    tool("mkpretrain", "-q", "--vocab", vocab, "--max-seq-length", 64, "--max-predictions", 10, "--dupe-factor", 10,
         "-o", train, text)
    tool("mkpretrain", "-q", "--vocab", vocab, "--max-seq-length", 64, "--max-predictions", 10, "--dupe-factor", 10,
         "--seed", 99, "-o", held_out, text)
    common = ["-q", "--config", CONFIG, "--input", train, "--train-batch-size", 8, "--max-predictions", 10,
              "--no-tensorboard", "--optimizer", "adamw", "--learning-rate", "2e-2", "--warmup-steps", 2,
              "--eval-input", held_out, "--eval-samples", 60, "--precision", "fp32"]

    # 1. Evaluation every 16 samples (2 steps of 8), with an MLPerf log.
    run = os.path.join(tmp, "run")
    mllog = os.path.join(tmp, "bert.mllog")
    tool("bert-train", *common, "--max-steps", 6, "--output-dir", run, "--eval-every-samples", 16,
         "--mlperf-log", mllog)
    evals = [d for d in log_lines(run) if "eval_mlm_accuracy" in d]
    check([d["step"] for d in evals] == [2, 4, 6], f"evaluations at steps 2, 4, 6 (got {[d['step'] for d in evals]})")
    check(all(d["eval_samples"] == 60 for d in evals), "every evaluation over the 60 samples")

    # The same evaluations in TensorBoard, under eval/ (TensorBoard's own loader reads them).
    tb_run = os.path.join(tmp, "tb")
    tool("bert-train", *[a for a in common if a != "--no-tensorboard"], "--max-steps", 4, "--output-dir", tb_run,
         "--eval-every-samples", 16)
    from tensorboard.backend.event_processing import event_accumulator
    events = event_accumulator.EventAccumulator(os.path.join(tb_run, "tensorboard"))
    events.Reload()
    tags = events.Tags()["scalars"]
    logged = [d for d in log_lines(tb_run) if "eval_mlm_accuracy" in d]
    shown = [(e.step, e.value) for e in events.Scalars("eval/mlm_accuracy")] if "eval/mlm_accuracy" in tags else []
    check([s for s, _ in shown] == [d["step"] for d in logged] == [2, 4] and
          all(abs(v - d["eval_mlm_accuracy"]) < 1e-6 for (_, v), d in zip(shown, logged)),
          f"TensorBoard's eval/mlm_accuracy = the log's evaluations (got {shown}; tags {sorted(tags)})")

    def matches_bert_eval(run_dir, last, what):
        latest = open(os.path.join(run_dir, "checkpoints/latest")).read().strip()
        out = json.loads(tool("bert-eval", "-q", "--checkpoint", os.path.join(run_dir, "checkpoints", latest),
                              "--max-samples", 60, "--precision", "fp32", held_out).stdout)
        print(f"{what}: eval_mlm_accuracy {last['eval_mlm_accuracy']:.6f} eval_mlm_loss {last['eval_mlm_loss']:.7f}; "
              f"bert-eval {out['mlm_accuracy']:.6f} {out['mlm_loss']:.7f}")
        check(out["samples"] == 60 and last["eval_mlm_accuracy"] == out["mlm_accuracy"],
              f"{what}: eval_mlm_accuracy equals bert-eval's on the final checkpoint")
        check(abs(last["eval_mlm_loss"] - out["mlm_loss"]) <= 1e-6 * abs(out["mlm_loss"]),
              f"{what}: eval_mlm_loss equals bert-eval's (1e-6)")
        check(abs(last["eval_nsp_accuracy"] - out["nsp_accuracy"]) < 1e-12, f"{what}: eval_nsp_accuracy too")

    matches_bert_eval(run, evals[-1], "1 process")

    # Two processes split the 60 samples (30 each) and all-reduce the sums.
    run2 = os.path.join(tmp, "run2")
    halves = [4 if a == 8 else a for a in common]  # 2 processes x 4 samples: the global batch of 8
    tool("bert-train", *halves, "--max-steps", 4, "--output-dir", run2, "--nproc-per-node", 2)
    evals2 = [d for d in log_lines(run2) if "eval_mlm_accuracy" in d]
    check(len(evals2) == 1 and evals2[0]["eval_samples"] == 60, "2 processes: one evaluation at the end, 60 samples")
    matches_bert_eval(run2, evals2[-1], "2 processes")

    # 2. The compliance checker on the log.
    rc, out = checker(mllog)
    print(out.strip().splitlines()[-1])
    check(rc == 0 and "SUCCESS" in out, f"open division, ruleset 5.0.0: the checker passes the log\n{out}")
    closed = os.path.join(tmp, "closed.mllog")
    with open(mllog) as f, open(closed, "w") as g:
        g.write(f.read().replace('"key":"submission_division","value":"open"',
                                 '"key":"submission_division","value":"closed"'))
    rc, out = checker(closed)
    failed = [line for line in out.splitlines() if "Failed checks" in line]
    check(rc != 0 and len(failed) == 1 and "eval_accuracy" in failed[0] and "0.720" in failed[0],
          f"closed division: fails only on the accuracy target (0.720)\n{out}")
    keys = [json.loads(line[len(":::MLLOG "):])["key"] for line in open(mllog)]
    check(keys[-1] == "run_stop" and keys.count("eval_accuracy") == 3, "run_stop last, one eval_accuracy per evaluation")

    # 3. The target: reached at an evaluation (stop with a checkpoint), and out of reach.
    target = os.path.join(tmp, "target")
    proc = tool("bert-train", *common, "--max-steps", 300, "--output-dir", target, "--eval-every-samples", 80,
                "--target-mlm-accuracy", 0.05)
    lines = log_lines(target)
    reached = [d for d in lines if "target reached" in d.get("event", "")]
    last_eval = [d for d in lines if "eval_mlm_accuracy" in d][-1]
    print(reached[0]["event"] if reached else "target not reached")
    check(len(reached) == 1 and last_eval["eval_mlm_accuracy"] >= 0.05 and last_eval["step"] < 300,
          "target 0.05: the run stops at the first evaluation that reaches it")
    latest = open(os.path.join(target, "checkpoints/latest")).read().strip()
    check(latest == f"step-{last_eval['step']:08d}", f"target: a checkpoint of the step it stopped at ({latest})")
    far = os.path.join(tmp, "far")
    far_log = os.path.join(tmp, "far.mllog")
    tool("bert-train", *common, "--max-steps", 4, "--output-dir", far, "--target-mlm-accuracy", 0.99,
         "--mlperf-log", far_log)
    check(any("target not reached" in d.get("event", "") for d in log_lines(far)), "target 0.99: reported as not reached")
    stop = json.loads(open(far_log).read().splitlines()[-1][len(":::MLLOG "):])
    check(stop["key"] == "run_stop" and stop["metadata"]["status"] == "aborted", "target not reached: run_stop aborted")

sys.exit(check.exit_code("compat.mlperf_run"))
