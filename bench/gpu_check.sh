#!/usr/bin/env bash
# bench/gpu_check.sh BUNDLE: the GPU path checked in one command, for the few minutes a GPU is lent (at most 8 on
# one GPU), from a bundle (scripts/bundle.sh) carried to the GPU machine. In order:
#   1. correctness (at most 3 minutes): the build holds bertkit's CUDA kernels and CUDA graphs, then every CUDA case
#      of torch_unit_tests (-tc='cuda*'), where a case skipped on a GPU machine fails (BERTKIT_REQUIRE_CUDA=1);
#   2. host syncs per step, bf16, AdamW and LAMB: 0 (a 20-step run's count less a 10-step run's, over 10);
#   3. speed (at most 5 minutes): BERT-base and BERT-large at seq 128 (batch 256) and BERT-large at seq 512 packed,
#      bf16, each as default / --fused-kernels experimental / --cuda-graphs / LAMB, against HF BertForPreTraining
#      eager and under torch.compile on the same samples in the same run (bench/bert_train_gpu.sh's cases, whose
#      table it prints; HF with its MLM head on the masked positions, bert-train's work: the ratio that counts);
#      MFU as DESIGN.md section 6 counts it, against the card's dense bf16 peak (H100 SXM and H200: 989 TFLOP/s);
#      and ModernBERT-base on packed rows of 1,024 tokens (one segment, 30% masked) against HF's ModernBertForMaskedLM;
#   4. one table, PASS or FAIL per line with its criterion: experimental kernels within 1% of the default run's loss
#      after 25 steps and at least 3% faster; graphs within 1% of their eager twin's loss and not slower; LAMB at most
#      1.06x AdamW's step; and the targets (BERT-large seq 128 at >= 50% MFU on an H100, >= 55% on an H200, >= 1.5x
#      HF eager and >= 1.2x HF compiled; BERT-large seq 512 packed at >= 262k real tokens/s on an H200).
# Exit status: the number of FAIL lines (0: all passed). The whole check keeps to 8 minutes: the CUDA cases are cut
# at 3, the speed runs at 5 (SPEED_SECONDS), and a run cut off is a FAIL.
#
# Environment: FIXTURES (the vocabulary and MLPerf's wiki extract, as ../shared/fixtures lays them out; default
# BUNDLE/../fixtures, else ../shared/fixtures), PYTHON (python3: torch, transformers, h5py for the HF peer),
# RESULTS (where results.jsonl, runs.log and check.txt go; default a temporary folder), DEVICE (cuda), STEPS (25;
# 8 under SMOKE).
# SMOKE=1 DEVICE=cpu runs the same script on two-layer models and small batches on the CPU (CI's cli.gpu_check, so
# that it cannot rot between GPU windows): its figures mean nothing, so only a run that fails or a figure that is
# missing is a FAIL there, and the CUDA-only lines (graphs, the kernels) say n/a.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] && [ -x "$1/bin/bert-train" ] || { echo "usage: bench/gpu_check.sh BUNDLE (scripts/bundle.sh's folder)" >&2; exit 2; }
BUNDLE=$(cd "$1" && pwd)
DEVICE=${DEVICE:-cuda}
SMOKE=${SMOKE:-0}
STEPS=${STEPS:-$([ "$SMOKE" = 1 ] && echo 8 || echo 25)}
PYTHON=${PYTHON:-python3}
if [ -z "${FIXTURES:-}" ]; then
  FIXTURES=$SRC/../shared/fixtures
  [ -d "$BUNDLE/../fixtures" ] && FIXTURES=$(cd "$BUNDLE/../fixtures" && pwd)
fi
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RESULTS=${RESULTS:-$TMP/results}
mkdir -p "$RESULTS"
CHECKS=$RESULTS/check.jsonl
: >"$CHECKS"
card=cpu
[ "$DEVICE" = cuda ] && card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "gpu_check: $card, bundle $(cat "$BUNDLE/build-info" 2>/dev/null || cat "$BUNDLE/payload.id"), $(date -u +%Y-%m-%d)"

# line NAME RESULT CRITERION MEASURED: one line of the table.
line() { printf '{"check": "%s", "result": "%s", "criterion": "%s", "measured": "%s"}\n' "$1" "$2" "$3" "$4" >>"$CHECKS"; }

# A bundle that finds no LibTorch (no BERTKIT_TORCH_LIB, a python3 without torch) can run nothing below: the table
# is one line with the launcher's own words, not every line failed with "see runs.log".
if ! why=$("$BUNDLE/bin/bert-train" --version 2>&1 >/dev/null); then
  printf 'FAIL libtorch  %s   [the bundle'"'"'s LibTorch tools start]\n1 FAIL of 1 lines\n' "$(printf '%s' "$why" | head -1)" |
    tee "$RESULTS/check.txt"
  exit 1
fi

# 1. Correctness.
tests=$BUNDLE/bin/torch_unit_tests
if [ "$DEVICE" = cuda ]; then
  if BERTKIT_REQUIRE_CUDA=1 timeout 30 "$tests" -tc='cuda build*' -s >"$RESULTS/build.txt" 2>&1; then
    line "build" PASS "bertkit's CUDA kernels and CUDA graphs built" "$(grep -o 'kernels: .*' "$RESULTS/build.txt" | head -1)"
  else
    line "build" FAIL "bertkit's CUDA kernels and CUDA graphs built" "$(grep -o 'kernels: .*' "$RESULTS/build.txt" | head -1)"
  fi
fi
export BERTKIT_REQUIRE_CUDA=$([ "$DEVICE" = cuda ] && echo 1 || echo 0)
start=$(date +%s)
timeout 180 "$tests" -tc='cuda*' >"$RESULTS/cuda_cases.txt" 2>&1
rc=$?
unset BERTKIT_REQUIRE_CUDA
summary=$(grep 'test cases:' "$RESULTS/cuda_cases.txt" | sed 's/\[doctest\] //; s/  */ /g')
measured="$summary in $(( $(date +%s) - start )) s$([ "$DEVICE" = cuda ] || echo '; no CUDA device, so skipped')"
line "cuda cases" "$([ $rc = 0 ] && echo PASS || echo FAIL)" "torch_unit_tests -tc='cuda*' all pass, none skipped" "$measured"

# 2 and 3. Syncs and speed: bench/bert_train_gpu.sh's cases, run with the bundle's tools.
cases="syncs base128 large128 large512packed experimental lamb modernbert1024"
[ "$DEVICE" = cuda ] && cases="$cases graphs"
# At most 5 minutes on a GPU (SPEED_SECONDS): a run cut off there is missing from the table, so a FAIL.
TOOLS=$BUNDLE/bin FIXTURES=$FIXTURES PYTHON=$PYTHON RESULTS=$RESULTS DEVICE=$DEVICE SMOKE=$SMOKE CASES=$cases \
  HF_VARIANTS=masked,masked-compiled timeout "${SPEED_SECONDS:-$([ "$SMOKE" = 1 ] && echo 1200 || echo 300)}" \
  bash "$SRC/bench/bert_train_gpu.sh" "" "$STEPS" | tee "$RESULTS/speed.txt"

# 4. The judged table.
"$PYTHON" - "$RESULTS/results.jsonl" "$CHECKS" "$card" "$SMOKE" "$DEVICE" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
out = open(sys.argv[2], "a")
card, smoke, device = sys.argv[3], sys.argv[4] == "1", sys.argv[5]
ours = {r["case"]: r for r in rows if r.get("tool") == "bert-train"}
hf = {(r["case"], r["tool"]): r for r in rows if r.get("tool", "").startswith("hf-")}
syncs = {r["case"]: r for r in rows if r["case"].startswith("syncs-")}


def line(check, passed, criterion, measured, judged=True):
    # Under SMOKE the figures mean nothing: a missing or failed run is still a FAIL, a comparison is not judged.
    result = "n/a" if passed is None else ("PASS" if passed else "FAIL") if judged and not smoke else "ran"
    out.write(json.dumps({"check": check, "result": result, "criterion": criterion, "measured": measured}) + "\n")


def run_of(name):
    r = ours.get(name)
    if r is None or r.get("failed"):
        out.write(json.dumps({"check": name, "result": "FAIL", "criterion": "the run completes",
                              "measured": "no run" if r is None else "failed (runs.log)"}) + "\n")
        return None
    return r


for opt in ("adamw", "lamb"):
    s = syncs.get(f"syncs-{opt}")
    if s is None or s.get("failed"):
        out.write(json.dumps({"check": f"syncs, {opt}", "result": "FAIL", "criterion": "the runs complete",
                              "measured": "failed (runs.log)"}) + "\n")
    else:
        line(f"syncs, {opt}", s["syncs_20_steps"] == s["syncs_10_steps"], "0 host syncs per step, bf16",
             f"{s['per_step']} per step ({s['syncs_10_steps']} in 10 steps, {s['syncs_20_steps']} in 20)",
             judged=device == "cuda")
for case in ("base128", "large128", "large512-packed"):
    base, exp = run_of(case), run_of(f"{case}-experimental")
    if base and exp:
        dloss = abs(exp["final_loss"] - base["final_loss"]) / abs(base["final_loss"])
        speed = base["ms_per_step"] / exp["ms_per_step"]
        line(f"{case} experimental", dloss <= 0.01 and speed >= 1.03, "loss within 1% after 25 steps, >= 3% faster",
             f"loss {exp['final_loss']:.4f} vs {base['final_loss']:.4f} ({dloss:.2%}), {speed:.3f}x")
for m in ("base128", "large128"):
    if device != "cuda":
        line(f"{m} graphs", None, "within 1% of the eager twin's loss, not slower", "needs a CUDA device", judged=False)
        continue
    eager, graphs = run_of(f"{m}-padded"), run_of(f"{m}-graphs")
    if eager and graphs:
        dloss = abs(graphs["final_loss"] - eager["final_loss"]) / abs(eager["final_loss"])
        speed = eager["ms_per_step"] / graphs["ms_per_step"]
        line(f"{m} graphs", dloss <= 0.01 and speed >= 1.0, "within 1% of the eager twin's loss, not slower",
             f"loss {graphs['final_loss']:.4f} vs {eager['final_loss']:.4f} ({dloss:.2%}), {speed:.3f}x")
adamw, lamb = run_of("large128"), run_of("large128-lamb")
if adamw and lamb:
    ratio = lamb["ms_per_step"] / adamw["ms_per_step"]
    line("large128 LAMB", ratio <= 1.06, "step at most 1.06x AdamW's", f"{ratio:.3f}x")
# The targets, on this run's figures.
large = ours.get("large128")
if large and not large.get("failed"):
    goal = 0.55 if "H200" in card else 0.50
    mfu = large.get("mfu")
    line("large128 MFU", mfu is not None and mfu >= goal, f">= {goal:.0%} (H100 50%, H200 55%)",
         "no MFU (card unknown)" if mfu is None else f"{mfu:.1%}", judged=device == "cuda")
    for tool, goal in (("hf-masked", 1.5), ("hf-masked-compiled", 1.2)):
        peer = hf.get(("large128", tool))
        failed = [r for r in rows if r.get("case") == "large128" and r.get("tool") == tool and r.get("failed")]
        if peer is None and failed and tool.endswith("-compiled"):
            # The peer, not bertkit, failed: say so (torch.compile needs a C compiler for its launchers, say).
            line(f"large128 vs {tool}", None, f">= {goal}x", f"torch.compile failed: {failed[0]['failed']}", judged=False)
        elif peer is None:
            line(f"large128 vs {tool}", False, f">= {goal}x",
                 failed[0]["failed"] if failed else "no result from the peer (cut off by RUN_SECONDS? runs.log)")
        else:
            ratio = large["seq_per_s"] / peer["seq_per_s"]
            line(f"large128 vs {tool}", ratio >= goal, f">= {goal}x sequences/s", f"{ratio:.2f}x")
modern = run_of("modernbert1024")
for tool in ("hf-masked", "hf-masked-compiled") if modern else ():
    peer = hf.get(("modernbert1024", tool))
    failed = [r for r in rows if r.get("case") == "modernbert1024" and r.get("tool") == tool and r.get("failed")]
    measured = (f"{modern['seq_per_s'] / peer['seq_per_s']:.2f}x, {modern['real_tokens_per_s'] / 1e3:.0f}k real tokens/s"
                + (f", MFU {modern['mfu']:.1%}" if modern.get("mfu") else "")) if peer else \
        (failed[0]["failed"] if failed else "no result from the peer (runs.log)")
    line(f"modernbert1024 vs {tool}", None if peer is None and failed and tool.endswith("-compiled") else
         peer is not None and modern["seq_per_s"] >= peer["seq_per_s"],
         ">= 1.0x HF ModernBertForMaskedLM (SDPA), MLM head on the masked positions", measured,
         judged=device == "cuda")
packed = ours.get("large512-packed")
if packed and not packed.get("failed"):
    rate = packed["real_tokens_per_s"]
    line("large512 packed", rate >= 262e3 or "H200" not in card, ">= 262k real tokens/s on an H200 (MLPerf v4.1's best)",
         f"{rate / 1e3:.0f}k real tokens/s", judged=device == "cuda")
PY
[ $? = 0 ] || line "judging" FAIL "the table is made" "the judging step failed (its error is above)"

echo
echo "gpu_check: $card"
"$PYTHON" - "$CHECKS" <<'PY' | tee "$RESULTS/check.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
width = max(len(r["check"]) for r in rows)
for r in rows:
    print(f"{r['result']:4} {r['check']:{width}}  {r['measured']}   [{r['criterion']}]")
print(f"{sum(r['result'] == 'FAIL' for r in rows)} FAIL of {len(rows)} lines")
PY
exit "$(grep -c '"result": "FAIL"' "$CHECKS")"
