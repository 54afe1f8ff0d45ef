#!/usr/bin/env bash
# bert-train on one CUDA GPU against HF transformers' BertForPreTraining (SDPA attention, fused AdamW, bf16
# autocast) on the same data and batch size, in one run: BERT-base and BERT-large at seq 128 (phase 1), and at
# seq 512 (phase 2) from bin4 bins and from pack's packed rows, against HF on the same samples cut to each batch's
# longest; fp16 with loss scaling; bert-train without its own CUDA kernels (--fused-kernels off, case unfused);
# and the host syncs per step (torch's CUDA sync debug mode); with CASES=graphs, --cuda-graphs. HF runs twice per
# case: as users run it (vocabulary logits for every token) and with the MLM head on the masked positions only
# (bert-train's work); the ratio that counts is the second. Sequences per second count samples (a packed row
# holds one or more); MFU counts the FLOPs of real tokens only (bert-train's log, train_log.cpp), and HF's MFU is that figure
# scaled by HF's rate on the same samples.
#   bench/bert_train_gpu.sh [BUILD_DIR] [STEPS]
# Environment: FIXTURES (../shared/fixtures), PYTHON (python3), RESULTS (a directory to keep results.jsonl and
# runs.log in; default a temporary one), CASES (which cases, default all: base128 large128 lamb base512 large512
# unfused fp16 syncs; on request graphs, --cuda-graphs against the same padded runs without, experimental,
# --fused-kernels experimental, large512packed, large512's packed rows alone, and modernbert1024, ModernBERT-base on
# packed one-segment rows of 1,024 tokens masked 30%, against HF's ModernBertForMaskedLM), TOOLS (the tools' folder,
# default BUILD/tools), RUN_SECONDS (each run's limit: 150, 900 under SMOKE), HF=0 (bert-train alone, no peer), HF_VARIANTS (bench/bert_train_hf.py's, default
# full,masked; masked-compiled and full-compiled under torch.compile), PROFILE=1 (each bert-train run goes on for 3
# steps after the timed ones under BERTKIT_PROFILE, to RESULTS/profile-CASE.json, totalled by
# bench/profile_summary.py), DEVICE (cuda) and SMOKE=1 (two-layer models and small batches: a quick check of this
# script on the CPU with DEVICE=cpu, whose figures mean nothing).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
TOOLS=${TOOLS:-$BUILD/tools}  # or a bundle's bin/ (scripts/bundle.sh), as bench/gpu_check.sh runs it
STEPS=${2:-30}
WARMUP=5
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
PYTHON=${PYTHON:-python3}
CASES=${CASES:-base128 large128 lamb base512 large512 unfused fp16 syncs}
DEVICE=${DEVICE:-cuda}
B128=256 B512=64 BPACKED=32 B1024=32
[ "${SMOKE:-0}" = 1 ] && B128=16 B512=8 BPACKED=4 B1024=2
# Each run's limit; HF's torch.compile on a busy CPU (CI's SMOKE) takes minutes.
RUN_SECONDS=${RUN_SECONDS:-$([ "${SMOKE:-0}" = 1 ] && echo 900 || echo 150)}
TMP=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d); trap 'rm -rf "$TMP"' EXIT
RESULTS=${RESULTS:-$TMP}
mkdir -p "$RESULTS"
LOG=$RESULTS/runs.log
JSONL=$RESULTS/results.jsonl
: >"$LOG"; : >"$JSONL"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$PYTHON" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'

# Data: the fixtures' Wikipedia text through mkpretrain at 128 and 512 tokens; the 512 set binned and packed.
awk '/^<doc /{t=1; next} /^<\/doc>/{print ""; next} t{t=0; next} NF' "$FIXTURES/wiki/mlperf-extracted/wiki_00" >"$TMP/docs.txt"
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
"$TOOLS/mkpretrain" -q -t 0 --vocab "$VOCAB" --max-seq-length 128 --max-predictions 20 --dupe-factor 4 \
  -o "$TMP/p128.hdf5" "$TMP/docs.txt" &
"$TOOLS/mkpretrain" -q -t 0 --vocab "$VOCAB" --max-seq-length 512 --max-predictions 76 --dupe-factor 4 \
  -o "$TMP/p512.hdf5" "$TMP/docs.txt" &
wait
case " $CASES " in *" modernbert1024 "*)  # one-segment rows (no NSP) of 1,024 tokens, 30% masked, and packed
  "$TOOLS/mkpretrain" -q -t 0 --vocab "$VOCAB" --max-seq-length 1024 --no-nsp --masked-lm-prob 0.3 \
    --max-predictions 308 --dupe-factor 2 -o "$TMP/s1024.hdf5" "$TMP/docs.txt"
  "$TOOLS/pack" -q --max-seq-length 1024 -o "$TMP/packed1024.hdf5" "$TMP/s1024.hdf5" ;;
esac
"$TOOLS/bin4" -q -o "$TMP/bins" "$TMP/p512.hdf5"
"$TOOLS/pack" -q --max-seq-length 512 -o "$TMP/packed.hdf5" "$TMP/p512.hdf5"

# ours NAME CONFIG INPUT BATCH [bert-train options...]: one run, its timed steps summarised as one JSON line.
ours() {
  local name=$1 config=$2 input=$3 batch=$4; shift 4
  echo "== $name: bert-train $*" >>"$LOG"
  local steps=$STEPS
  [ "${PROFILE:-0}" = 1 ] && steps=$((STEPS + 3)) && export BERTKIT_PROFILE=$RESULTS/profile-$name.json:$((STEPS + 1)):3
  if ! timeout "$RUN_SECONDS" "$TOOLS/bert-train" -q --device "$DEVICE" --precision "${PRECISION:-bf16}" --config "$config" --input "$input" \
      --output-dir "$TMP/run-$name" --train-batch-size "$batch" --max-steps "$steps" --optimizer "${OPTIMIZER:-adamw}" \
      --learning-rate 1e-4 --no-tensorboard --prefetch 8 "$@" >>"$LOG" 2>&1; then
    echo "{\"case\": \"$name\", \"tool\": \"bert-train\", \"failed\": true}" >>"$JSONL"; echo "$name: bert-train FAILED"
    return
  fi
  unset BERTKIT_PROFILE
  [ -f "$RESULTS/profile-$name.json" ] && "$PYTHON" "$SRC/bench/profile_summary.py" "$RESULTS/profile-$name.json" \
    >"$RESULTS/profile-$name.txt" && sed "s/^/$name profile: /" "$RESULTS/profile-$name.txt" | head -14
  "$PYTHON" - "$TMP/run-$name/log.jsonl" "$WARMUP" "$name" "$batch" "$STEPS" <<'PY' | tee -a "$JSONL"
import json, sys
lines = [l for l in map(json.loads, open(sys.argv[1])) if "step_seconds" in l and l["step"] <= int(sys.argv[5])]
lines = lines[int(sys.argv[2]):]
mean = lambda k: sum(l[k] for l in lines) / len(lines)
seconds = mean("step_seconds")
print(json.dumps({"case": sys.argv[3], "tool": "bert-train", "batch": int(sys.argv[4]), "ms_per_step": seconds * 1e3,
                  "seq_per_s": sum(l["seq_per_s"] * l["step_seconds"] for l in lines) / sum(l["step_seconds"] for l in lines),
                  "real_tokens_per_s": sum(l["tokens_per_s"] * l["step_seconds"] for l in lines) / sum(l["step_seconds"] for l in lines),
                  "real_token_fraction": mean("real_token_fraction"),
                  # Over the whole time, not a mean of the steps' figures (fp16's host read makes step times uneven).
                  "mfu": sum(l["mfu"] * l["step_seconds"] for l in lines) / sum(l["step_seconds"] for l in lines) if "mfu" in lines[0] else None,
                  "data_share": sum(l["data_seconds"] for l in lines) / sum(l["step_seconds"] for l in lines),
                  "final_loss": lines[-1]["loss"], "loss_scale": lines[-1]["loss_scale"]}))
PY
  rm -rf "$TMP/run-$name"
}

# hf NAME CONFIG DATA BATCH PRECISION: HF's two variants on the same samples.
hf() {
  local name=$1 config=$2 data=$3 batch=$4 precision=$5
  [ "${HF:-1}" = 1 ] || return 0
  echo "== $name: HF transformers" >>"$LOG"
  timeout "$RUN_SECONDS" "$PYTHON" "$SRC/bench/bert_train_hf.py" --config "$config" --data "$data" --batch-size "$batch" \
    --steps "$STEPS" --warmup "$WARMUP" --lr 1e-4 --device "$DEVICE" --precision "$precision" \
    --variants "${HF_VARIANTS:-full,masked}" 2>>"$LOG" | "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if "failed" in d:
        print(json.dumps({"case": sys.argv[1], "tool": "hf-" + d["variant"], "failed": d["failed"]}))
        continue
    s = d["seconds_per_step"]
    print(json.dumps({"case": sys.argv[1], "tool": "hf-" + d["variant"], "ms_per_step": s * 1e3,
                      "seq_per_s": d["sequences_per_step"] / s, "real_tokens_per_s": d["real_tokens_per_step"] / s,
                      "real_token_fraction": d["real_tokens_per_step"] / d["computed_tokens_per_step"],
                      "final_loss": d["final_loss"]}))' "$name" | tee -a "$JSONL"
}

config_json() {  # the published BERT-base / BERT-large configs (google-research/bert), as HF reads them
  local layers=$1 hidden=$2 heads=$3
  echo "{\"attention_probs_dropout_prob\": 0.1, \"hidden_act\": \"gelu\", \"hidden_dropout_prob\": 0.1,
 \"hidden_size\": $hidden, \"initializer_range\": 0.02, \"intermediate_size\": $((hidden * 4)),
 \"max_position_embeddings\": 512, \"num_attention_heads\": $heads, \"num_hidden_layers\": $layers,
 \"type_vocab_size\": 2, \"vocab_size\": 30522}"
}
modernbert_json() {  # HF's ModernBertConfig defaults (modernbert-base with BERT's WordPiece vocabulary)
  local layers=$1 hidden=$2 heads=$3 intermediate=$4
  echo "{\"model_type\": \"modernbert\", \"hidden_size\": $hidden, \"intermediate_size\": $intermediate,
 \"num_hidden_layers\": $layers, \"num_attention_heads\": $heads, \"vocab_size\": 30522, \"pad_token_id\": 0,
 \"cls_token_id\": 101, \"sep_token_id\": 102, \"bos_token_id\": 101, \"eos_token_id\": 102}"
}
if [ "${SMOKE:-0}" = 1 ]; then
  config_json 2 128 2 >"$TMP/base.json"; config_json 2 256 4 >"$TMP/large.json"
  modernbert_json 3 128 2 192 >"$TMP/modernbert.json"
else
  config_json 12 768 12 >"$TMP/base.json"; config_json 24 1024 16 >"$TMP/large.json"
  modernbert_json 22 768 12 1152 >"$TMP/modernbert.json"
fi

for c in $CASES; do
  case $c in
    base128|large128)
      m=${c%128}
      ours "$c" "$TMP/$m.json" "$TMP/p128.hdf5" $B128
      hf "$c" "$TMP/$m.json" "$TMP/p128.hdf5" $B128 bf16 ;;
    unfused)
      # The cases above without bertkit's own CUDA kernels (--fused-kernels off: ATen's ops alone).
      ours base128-unfused "$TMP/base.json" "$TMP/p128.hdf5" $B128 --fused-kernels off
      ours large128-unfused "$TMP/large.json" "$TMP/p128.hdf5" $B128 --fused-kernels off
      ours large512-packed-unfused "$TMP/large.json" "$TMP/packed.hdf5" $BPACKED --fused-kernels off ;;
    experimental)
      # The kernels not yet measured on a GPU (--fused-kernels experimental: the dense layers' biases inside the
      # kernels after them, bias + GELU, the residual gradients summed in LayerNorm's, the masked-LM cross
      # entropy), against the base128, large128 and large512-packed rows.
      ours base128-experimental "$TMP/base.json" "$TMP/p128.hdf5" $B128 --fused-kernels experimental
      ours large128-experimental "$TMP/large.json" "$TMP/p128.hdf5" $B128 --fused-kernels experimental
      ours large512-packed-experimental "$TMP/large.json" "$TMP/packed.hdf5" $BPACKED --fused-kernels experimental ;;
    lamb)
      # bert-train's default optimizer (NVIDIA's LAMB) against the AdamW of the case above.
      OPTIMIZER=lamb ours large128-lamb "$TMP/large.json" "$TMP/p128.hdf5" $B128 ;;
    base512|large512)
      m=${c%512}
      ours "$c-bin4" "$TMP/$m.json" "$TMP/bins" $B512
      ours "$c-packed" "$TMP/$m.json" "$TMP/packed.hdf5" $BPACKED
      ours "$c-padded" "$TMP/$m.json" "$TMP/p512.hdf5" $B512 --attention padded
      hf "$c" "$TMP/$m.json" "$TMP/p512.hdf5" $B512 bf16 ;;
    modernbert1024)
      # ModernBERT-base (window 128 on two layers of three, masked LM only) on packed rows of 1,024 tokens, unpadded
      # (on CUDA: ATen's variable-length flash kernel with its window), against HF's ModernBertForMaskedLM (SDPA) on
      # the same samples unpacked.
      ours modernbert1024 "$TMP/modernbert.json" "$TMP/packed1024.hdf5" $B1024
      hf modernbert1024 "$TMP/modernbert.json" "$TMP/s1024.hdf5" $B1024 bf16 ;;
    large512packed)
      ours large512-packed "$TMP/large.json" "$TMP/packed.hdf5" $BPACKED
      hf large512 "$TMP/large.json" "$TMP/p512.hdf5" $B512 bf16 ;;
    graphs)
      # --cuda-graphs: the step captured once and replayed, against the same runs without (both with --attention
      # padded, which --cuda-graphs needs for one shape: every micro-batch padded to the data's 128 tokens).
      for m in base large; do
        ours "${m}128-padded" "$TMP/$m.json" "$TMP/p128.hdf5" $B128 --attention padded
        ours "${m}128-graphs" "$TMP/$m.json" "$TMP/p128.hdf5" $B128 --attention padded --cuda-graphs
      done
      # bin4 with one shape per bin (each bin's micro-batch padded to its bound), where the host bounds BERT-base.
      ours base512-bin4-graphs "$TMP/base.json" "$TMP/bins" $B512 --attention padded --cuda-graphs ;;
    fp16)
      PRECISION=fp16 ours base128-fp16 "$TMP/base.json" "$TMP/p128.hdf5" $B128
      hf base128-fp16 "$TMP/base.json" "$TMP/p128.hdf5" $B128 fp16 ;;
    syncs)
      # Host syncs per step, with AdamW and with LAMB: torch's sync debug mode warns, with its call stack, for each
      # operation that makes the host wait for the GPU. Runs of 10 and 20 steps (logging every 10): the difference
      # over 10 is the count per step, without the start (weights to the GPU) and the end (the checkpoint back).
      for optimizer in adamw lamb; do
        failed=0
        for n in 10 20; do
          BERTKIT_CUDA_SYNC_DEBUG=warn timeout "$RUN_SECONDS" "$TOOLS/bert-train" -q --device "$DEVICE" --precision bf16 \
            --config "$TMP/base.json" --input "$TMP/p128.hdf5" --output-dir "$TMP/run-syncs$n" --train-batch-size 64 \
            --max-steps $n --optimizer $optimizer --learning-rate 1e-4 --no-tensorboard --log-every 10 \
            2>"$TMP/syncs$n.err" >/dev/null || failed=1
          echo "syncs, $optimizer, $n steps: exit $failed" >>"$LOG"
          rm -rf "$TMP/run-syncs$n"
        done
        cp "$TMP/syncs20.err" "$RESULTS/syncs-$optimizer.txt"
        s10=$(grep -c '^host sync' "$TMP/syncs10.err"); s20=$(grep -c '^host sync' "$TMP/syncs20.err")
        echo "{\"case\": \"syncs-$optimizer\", \"failed\": $([ $failed = 1 ] && echo true || echo false), \"syncs_10_steps\": $s10, \"syncs_20_steps\": $s20, \"per_step\": $(awk -v a="$s10" -v b="$s20" 'BEGIN { print (b - a) / 10 }')}" | tee -a "$JSONL"
      done ;;
    *) echo "unknown case $c" >&2 ;;
  esac
done

"$PYTHON" - "$JSONL" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ours = {r["case"]: r for r in rows if r.get("tool") == "bert-train" and not r.get("failed")}
hf = {(r["case"], r["tool"]): r for r in rows if r.get("tool", "").startswith("hf-") and not r.get("failed")}
print(f"{'case':22} {'tool':12} {'ms/step':>8} {'seq/s':>8} {'real tok/s':>11} {'real':>6} {'MFU':>6}")
for r in rows:
    if "ms_per_step" not in r:
        print(f"{r['case']:22} {r.get('tool', ''):12} {json.dumps({k: v for k, v in r.items() if k not in ('case', 'tool')})}")
        continue
    mfu = r.get("mfu")
    print(f"{r['case']:22} {r['tool']:12} {r['ms_per_step']:8.1f} {r['seq_per_s']:8.1f} {r['real_tokens_per_s']:11.0f} "
          f"{r['real_token_fraction']:6.1%} {'' if mfu is None else f'{mfu:6.1%}'}")
print("ratios (bert-train sequences/s over HF's on the same samples; the masked-head one counts):")
for (case, tool), h in sorted(hf.items()):
    for name, o in ours.items():
        # A case's own runs: its name, or its name and a data variant (-bin4, -packed, -padded, -lamb) that is
        # not a case of its own with its own HF runs (base128-fp16).
        if name == case or (name.startswith(case + "-") and name not in {c for c, _ in hf}):
            print(f"  {name:22} vs {tool:10} {o['seq_per_s'] / h['seq_per_s']:5.2f}x"
                  + (f"   (HF's MFU {o['mfu'] * h['seq_per_s'] / o['seq_per_s']:.1%})" if o.get("mfu") and name == case else ""))
PY
