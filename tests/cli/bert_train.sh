#!/usr/bin/env bash
# bert-train on the CPU: usage, loss falls, exact resume, strict --init-checkpoint, bad inputs that must fail
# loudly and leave the last checkpoint intact. Needs a build with BERTKIT_WITH_TORCH.
source "$(dirname "$0")/lib.sh"
need_fixtures
if [ ! -x "$BIN/bert-train" ]; then echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; fi
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
CFG=$SRC/tests/fixtures/tiny_bert_config.json
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 10 -o "$TMP/data.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
TRAIN=(bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10
       --learning-rate 2e-2 --warmup-proportion 0.1 --seed 7)
train() { "${TRAIN[@]}" "$@"; }
# The values of a JSON field in a log, one per line (python as an independent reader).
field() { python3 -c 'import json,sys; [print(d[sys.argv[2]]) for d in map(json.loads, open(sys.argv[1])) if sys.argv[2] in d]' "$1" "$2"; }
# The steps of a log's training lines (those with a loss), one per line, in the log's order.
loss_steps() { python3 -c 'import json,sys; [print(d["step"]) for d in map(json.loads, open(sys.argv[1])) if "loss" in d]' "$1"; }

run bert-train --help
expect_rc 0 "--help"
run bert-train --version
expect_rc 0 "--version"; expect_out "bert-train (bertkit) 0.1.0" "--version text"
run bert-train --config "$CFG" --input "$TMP/data.hdf5" --output-dir "$TMP/x" --train-batch-size 8 --max-step 3
expect_rc 2 "misspelt flag"; expect_err "max-step.*try --help" "misspelt flag named"
# Not through train: TRAIN pins --precision fp32, and a flag given twice is refused.
run bert-train -q --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 \
  --output-dir "$TMP/x" --max-steps 2 --precision fp16
expect_rc 2 "fp16 on the CPU"; expect_err "fp16 needs --device cuda" "fp16 message"
# --precision auto: the banner and the log's header say which precision ran and why (bert_eval.sh checks the choice
# against the CPU's flags).
run bert-train --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --no-tensorboard \
  --output-dir "$TMP/auto" --max-steps 1 --precision auto
expect_rc 0 "--precision auto"
expect_err "processes: 1 on cpu \((bf16|fp32) \(auto: [^;]+\)\); global batch" "the banner names the precision and why"
CASES=$((CASES + 1))
[ "$(python3 -c 'import json,sys; h = json.loads(open(sys.argv[1]).readline())["header"]; print(h["precision_reason"][:6])' \
  "$TMP/auto/log.jsonl")" = "auto: " ] || fail_case "the log header gives the precision's reason"
# A run resumed under auto where auto picks another precision than the run's (here oneDNN capped below bf16, so
# auto is fp32) is refused in one line; naming the precision resumes it.
BF=(bert-train -q --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --no-tensorboard
    --output-dir "$TMP/bf16" --max-steps 2)
run "${BF[@]}" --precision bf16 --stop-after 1
expect_rc 0 "bf16, stopped after a step"
run env ONEDNN_MAX_CPU_ISA=avx2 "${BF[@]}" --resume
expect_rc 1 "resumed under auto in another precision"
expect_err "the run was trained in bf16, and --precision auto takes fp32 here \(auto: [^)]*\); give --precision bf16 to resume it as it ran" \
  "the precision change named"
run env ONEDNN_MAX_CPU_ISA=avx2 "${BF[@]}" --resume --precision bf16
expect_rc 0 "resumed with its precision named"
run train --output-dir "$TMP/x" --max-steps 2 --fused-kernels fast
expect_rc 2 "--fused-kernels fast"; expect_err "fused-kernels must be auto, on, off or experimental, got 'fast'" "kernels message"
# --fused-kernels experimental touches CUDA tensors only: on the CPU the run is the default one, bit for bit (a build
# without the kernels refuses it as a usage error).
run train --output-dir "$TMP/k0" --max-steps 3 --log-every 1
expect_rc 0 "3 steps"
run train --output-dir "$TMP/k1" --max-steps 3 --log-every 1 --fused-kernels experimental
if [ "$RC" = 2 ]; then
  expect_err "this build has no CUDA kernels" "experimental kernels refused without them"
else
  expect_rc 0 "3 steps, --fused-kernels experimental"
  CASES=$((CASES + 1))
  LOSSES=$(field "$TMP/k0/log.jsonl" loss)
  [ "$(echo "$LOSSES" | wc -l)" = 3 ] && [ "$LOSSES" = "$(field "$TMP/k1/log.jsonl" loss)" ] \
    || fail_case "--fused-kernels experimental changed a CPU run's losses"
fi
# --cuda-graphs: what a captured step cannot take is refused before the run starts, each with its reason.
run train --output-dir "$TMP/g" --max-steps 2 --cuda-graphs --optimizer acclip
expect_rc 2 "--cuda-graphs with acclip"; expect_err "optimizer acclip takes its step's scalars from the host" "graphs: optimizer"
run train --output-dir "$TMP/g" --max-steps 2 --cuda-graphs
expect_rc 2 "--cuda-graphs, unpadded"; expect_err "cuda-graphs: unpadded attention" "graphs: unpadded attention"
run train --output-dir "$TMP/g" --max-steps 2 --cuda-graphs --attention padded
expect_rc 2 "--cuda-graphs on the CPU"; expect_err "cuda-graphs needs --device cuda" "graphs: CPU"
CASES=$((CASES + 1)); [ ! -e "$TMP/g" ] || fail_case "--cuda-graphs refused, yet $TMP/g was made"

# The loss falls clearly within a short run (AdamW-free default: LAMB).
run train --output-dir "$TMP/fall" --max-steps 60 --log-every 1
expect_rc 0 "60 steps"
CASES=$((CASES + 1))
python3 - "$TMP/fall/log.jsonl" <<'PY' || fail_case "the loss does not fall: $(field "$TMP/fall/log.jsonl" loss | tr '\n' ' ')"
import json, sys
loss = [d["loss"] for d in map(json.loads, open(sys.argv[1])) if "loss" in d]  # event lines have none
first, last = sum(loss[:5]) / 5, sum(loss[-5:]) / 5
print(f"loss: first 5 steps {first:.3f}, last 5 steps {last:.3f}")
sys.exit(0 if len(loss) == 60 and last < first - 1.0 else 1)
PY
CASES=$((CASES + 1))
python3 - "$TMP/fall/log.jsonl" <<'PY' || fail_case "real_token_fraction: $(field "$TMP/fall/log.jsonl" real_token_fraction | head -5 | tr '\n' ' ')"
import json, sys
f = [d["real_token_fraction"] for d in map(json.loads, open(sys.argv[1])) if "loss" in d]
print(f"real_token_fraction: {min(f):.3f} .. {max(f):.3f}")
# Unpadded attention (the default) computes on the real tokens only; the padded case is the bin4 one below.
sys.exit(0 if len(f) == 60 and all(x == 1 for x in f) else 1)
PY
CASES=$((CASES + 1)); [ -f "$TMP/fall/checkpoints/step-00000060/model.safetensors" ] || fail_case "final checkpoint written"
CASES=$((CASES + 1)); [ "$(umask)" != 0022 ] || [ "$(stat -c %a "$TMP/fall/checkpoints/step-00000060")" = 755 ] \
  || fail_case "checkpoint directories are 0755 like every other output (umask 022)"

# The plan. --dry-run resolves config, data, processes and schedule, prints them on stdout and writes nothing; a
# run prints the same plan on stderr, and its log opens with a header record (version, arguments, model config).
# --max-predictions is the data's (10 here) when not given. --resume on a finished run says so and changes nothing.
PLAN=(bert-train --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --seed 7 --output-dir "$TMP/plan")
run "${PLAN[@]}" --max-steps 2 --dry-run
expect_rc 0 "--dry-run"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "10 masked positions per sample" \
  || fail_case "--dry-run: the data's masked positions: $OUT"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -Eq "^model: BERT L=2 .* [0-9,]+ parameters$" \
  || fail_case "--dry-run: the model and its parameters: $OUT"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "global batch 8 = 1 x 8 per micro-batch x 1 accumulation; up to 512 tokens per step" \
  || fail_case "--dry-run: processes, batch and tokens per step: $OUT"
CASES=$((CASES + 1)); [ ! -e "$TMP/plan" ] || fail_case "--dry-run wrote $TMP/plan"
run "${PLAN[@]}" --max-steps 2
expect_rc 0 "a run with the data's --max-predictions"
expect_err "^bert-train: model: BERT L=2" "the plan on stderr"
expect_err "bert-train: start: step 0 from freshly initialised weights" "where the run starts"
CASES=$((CASES + 1))
python3 - "$TMP/plan/log.jsonl" "${PLAN[@]:1}" --max-steps 2 <<'PY' || fail_case "log.jsonl header: $(head -1 "$TMP/plan/log.jsonl")"
import json, sys
first = json.loads(open(sys.argv[1]).readline())["header"]
sys.exit(0 if first["arguments"] == sys.argv[2:] and first["version"] and first["model_config"]["hidden_size"] > 0
         and first["global_batch"] == 8 and first["max_steps"] == 2 else 1)
PY
sum_before=$(cat "$TMP/plan/log.jsonl" "$TMP/plan/checkpoints/step-00000002/"* | md5sum)
run "${PLAN[@]}" --max-steps 2 --resume
expect_rc 0 "--resume of a finished run"
expect_err "this run already finished \(its last checkpoint is at step 2 of --max-steps 2\); nothing to do" \
  "--resume of a finished run says so"
CASES=$((CASES + 1))
[ "$(cat "$TMP/plan/log.jsonl" "$TMP/plan/checkpoints/step-00000002/"* | md5sum)" = "$sum_before" ] \
  || fail_case "--resume of a finished run changed its log or checkpoint"
run "${PLAN[@]}" --max-steps 4 --resume --dry-run
expect_rc 0 "--dry-run --resume"
CASES=$((CASES + 1)); printf '%s' "$OUT" | grep -q "^start: resuming at step 2 from .*step-00000002$" \
  || fail_case "--dry-run --resume names the checkpoint: $OUT"

# bin4 input: each bin of the step's ratio is a forward pass of its own, cut to its longest sample, so short samples
# are not padded to the long bins' length. Samples of every length from 8 to 64 tokens (NVIDIA's layout, written
# here), binned at 16/32/48/64: the real-token fraction must be far above that of the same samples unbinned.
"$PYTHON" - "$TMP/lengths.hdf5" <<'PY'
import sys
import h5py
import numpy as np
rng = np.random.default_rng(5)
n, L, P = 2000, 64, 10
lengths = rng.integers(8, L + 1, n)
ids = np.zeros((n, L), np.int32); mask = np.zeros((n, L), np.int8); seg = np.zeros((n, L), np.int8)
pos = np.zeros((n, P), np.int32); mids = np.zeros((n, P), np.int32)
for i, t in enumerate(lengths):
    ids[i, :t] = rng.integers(1000, 2000, t); ids[i, 0] = 101; ids[i, t - 1] = 102; mask[i, :t] = 1
    seg[i, t // 2:t] = 1
    k = min(P, max(1, t // 7)); pos[i, :k] = np.sort(rng.choice(np.arange(1, t - 1), k, replace=False))
    mids[i, :k] = ids[i, pos[i, :k]]
with h5py.File(sys.argv[1], "w") as f:
    for name, data in [("input_ids", ids), ("input_mask", mask), ("segment_ids", seg), ("masked_lm_positions", pos),
                       ("masked_lm_ids", mids), ("next_sentence_labels", rng.integers(0, 2, n).astype(np.int8))]:
        f.create_dataset(name, data=data)
PY
bin4 -q --bins 16,32,48,64 -o "$TMP/bins" "$TMP/lengths.hdf5"
for input in lengths.hdf5 bins; do
  run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/$input" --train-batch-size 16 --max-predictions 10 --max-steps 5 \
    --output-dir "$TMP/real-$input" --no-tensorboard --attention padded
  expect_rc 0 "training on $input"
done
CASES=$((CASES + 1))
python3 - "$TMP/real-lengths.hdf5/log.jsonl" "$TMP/real-bins/log.jsonl" <<'PY' || fail_case "bin4 micro-batches are not cut per bin"
import json, sys
mean = lambda p: (lambda f: sum(f) / len(f))([d["real_token_fraction"] for d in map(json.loads, open(p)) if "loss" in d])
mixed, binned = mean(sys.argv[1]), mean(sys.argv[2])
print(f"real_token_fraction: {mixed:.3f} unbinned, {binned:.3f} binned")
sys.exit(0 if binned >= 0.85 and binned > mixed + 0.1 else 1)
PY
CASES=$((CASES + 1))
# Each step's line carries its own step number (statistics are read a step late, and logged under their step).
[ "$(python3 -c 'import json,sys; print([d["step"] for d in map(json.loads, open(sys.argv[1])) if "loss" in d] == list(range(1, 61)))' "$TMP/fall/log.jsonl")" = True ] \
  || fail_case "log lines for steps 1..60, once each"
CASES=$((CASES + 1)); ls "$TMP/fall/tensorboard"/events.out.tfevents.* >/dev/null 2>&1 || fail_case "tensorboard events written"

# Packed rows (pack) hold the same samples: one step over the whole file, without dropout, gives the loss of the
# unpacked samples through the padded model.
pack -q -o "$TMP/packed.hdf5" "$TMP/lengths.hdf5"
rows=$("$PYTHON" -c 'import h5py, sys; print(h5py.File(sys.argv[1])["input_ids"].shape[0])' "$TMP/packed.hdf5")
sed 's/"\(attention_probs\|hidden\)_dropout_prob": 0.1/"\1_dropout_prob": 0.0/' "$CFG" >"$TMP/no-dropout.json"
run bert-train -q --precision fp32 --config "$TMP/no-dropout.json" --input "$TMP/lengths.hdf5" --train-batch-size 2000 \
  --max-predictions 10 --max-steps 1 --output-dir "$TMP/whole" --no-tensorboard --attention padded
expect_rc 0 "one step over the unpacked file"
run bert-train -q --precision fp32 --config "$TMP/no-dropout.json" --input "$TMP/packed.hdf5" --train-batch-size "$rows" \
  --max-predictions 12 --max-steps 1 --output-dir "$TMP/whole-packed" --no-tensorboard
expect_rc 0 "one step over the packed file"
CASES=$((CASES + 1))
python3 - "$TMP/whole/log.jsonl" "$TMP/whole-packed/log.jsonl" "$rows" <<'PY' || fail_case "packed loss differs from unpacked"
import json, sys
step = lambda p: next(d for d in map(json.loads, open(p)) if "loss" in d)
a, b = step(sys.argv[1]), step(sys.argv[2])
print(f"2000 samples in {sys.argv[3]} packed rows: loss {a['loss']:.7f} unpacked, {b['loss']:.7f} packed")
sys.exit(0 if all(abs(a[k] - b[k]) <= 1e-5 * max(1, abs(a[k])) for k in ("loss", "mlm_loss", "nsp_loss")) else 1)
PY
run bert-train -q --config "$CFG" --input "$TMP/packed.hdf5" --train-batch-size 16 --max-predictions 12 \
  --max-steps 1 --output-dir "$TMP/packed-padded" --no-tensorboard --attention padded
expect_rc 1 "packed rows with padded attention"
expect_err "packed rows need unpadded attention" "packed rows with padded attention: the error says why"
# Phase 2 as NVIDIA runs it: --init-checkpoint DIR --init-optimizer carries the optimizer's moments. Where the
# schedules coincide (linear decay, no warm-up: 5 steps at half the rate continue the last 5 of 10) and every batch
# is the same (one sample repeated, no dropout), 5 + 5 steps equal 10 straight ones; with the weights alone they
# do not.
"$PYTHON" - "$TMP/data.hdf5" "$TMP/same.hdf5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f, h5py.File(sys.argv[2], "w") as g:
    for name in f:
        row = f[name][3:4]
        g.create_dataset(name, data=np.repeat(row, 64, axis=0))
PY
PHASE=(bert-train -q --precision fp32 --config "$TMP/no-dropout.json" --input "$TMP/same.hdf5" --train-batch-size 8 --max-predictions 10
       --no-tensorboard --lr-decay linear --warmup-proportion 0)
run "${PHASE[@]}" --output-dir "$TMP/p-straight" --max-steps 10 --learning-rate 1e-2
expect_rc 0 "10 straight steps"
run "${PHASE[@]}" --output-dir "$TMP/p1" --max-steps 10 --stop-after 5 --learning-rate 1e-2
expect_rc 0 "phase 1: 5 of 10 steps"
for mode in with without; do
  flag=(); [ $mode = with ] && flag=(--init-optimizer)
  run "${PHASE[@]}" --output-dir "$TMP/p2-$mode" --max-steps 5 --learning-rate 5e-3 \
    --init-checkpoint "$TMP/p1/checkpoints/step-00000005" "${flag[@]}"
  expect_rc 0 "phase 2 $mode --init-optimizer"
done
CASES=$((CASES + 1))
"$PYTHON" - "$TMP/p-straight/checkpoints/step-00000010" "$TMP/p2-with/checkpoints/step-00000005" \
  "$TMP/p2-without/checkpoints/step-00000005" <<'PY' || fail_case "phase 2 with the optimizer's moments == the straight run"
import sys
from safetensors.numpy import load_file
a, b, c = (load_file(p + "/model.safetensors") for p in sys.argv[1:])
with_moments = max(abs(a[k] - b[k]).max() for k in a)
weights_only = max(abs(a[k] - c[k]).max() for k in a)
print(f"phase 2 against 10 straight steps: {with_moments:.2e} with --init-optimizer, {weights_only:.2e} without")
sys.exit(0 if with_moments < 1e-6 and weights_only > 1e-4 else 1)
PY
run bert-train -q --config "$CFG" --input "$TMP/same.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 2 \
  --output-dir "$TMP/p2-kind" --optimizer adamw --init-checkpoint "$TMP/p1/checkpoints/step-00000005" --init-optimizer
expect_rc 1 "--init-optimizer across optimizer kinds"
expect_err "step-00000005: holds lamb state, and this run's --optimizer is adamw" "--init-optimizer kind mismatch"
run bert-train -q --config "$CFG" --input "$TMP/same.hdf5" --train-batch-size 8 --max-steps 2 --output-dir "$TMP/p2-x" \
  --init-optimizer
expect_rc 2 "--init-optimizer without --init-checkpoint"

# Samsung's trial optimizers train and resume (their steps are checked against references in compat.lamb).
for opt in acclip madgrad; do
  run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 4 \
    --stop-after 2 --output-dir "$TMP/opt-$opt" --no-tensorboard --optimizer $opt --learning-rate 1e-3
  expect_rc 0 "--optimizer $opt"
  run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 4 \
    --output-dir "$TMP/opt-$opt" --no-tensorboard --optimizer $opt --learning-rate 1e-3 --resume
  expect_rc 0 "--optimizer $opt resumed"
done
# A run resumed with another optimizer would load moments of the same names that mean another thing: refused.
run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 4 \
  --stop-after 2 --output-dir "$TMP/opt-stable" --no-tensorboard --optimizer stableadamw --learning-rate 1e-3
expect_rc 0 "--optimizer stableadamw"
run bert-train -q --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 4 \
  --output-dir "$TMP/opt-stable" --no-tensorboard --optimizer adamw --learning-rate 1e-3 --resume
expect_rc 1 "--resume with another --optimizer"
expect_err "the run was started with --optimizer stableadamw, this one has adamw; resume with the same optimizer" \
  "--resume with another --optimizer names both"

# Nothing lost: a new run never replaces an earlier run's checkpoints without --force (even with another log file),
# --resume finds the newest step directory when `latest` is gone, and a second run on a directory in use fails at
# once, naming the first.
OWN=(bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --no-tensorboard
     --output-dir "$TMP/own")
run "${OWN[@]}" --max-steps 4
expect_rc 0 "a first run"
cp "$TMP/own/checkpoints/step-00000004/model.safetensors" "$TMP/own-step4.safetensors"
run "${OWN[@]}" --max-steps 4 --log-file "$TMP/other-log.jsonl"
expect_rc 1 "a new run on an earlier run's checkpoints"
expect_err "own: holds checkpoints of an earlier run \(the newest step-00000004\); --resume continues it, --force starts over" \
  "a new run on an earlier run's checkpoints: the message"
expect_same "$TMP/own/checkpoints/step-00000004/model.safetensors" "$TMP/own-step4.safetensors" "the earlier checkpoint is intact"
rm "$TMP/own/checkpoints/latest"
run "${OWN[@]}" --max-steps 6 --resume
expect_rc 0 "--resume without checkpoints/latest"
CASES=$((CASES + 1)); [ "$(field "$TMP/own/log.jsonl" step | grep -c .)" -gt 0 ] && \
  [ "$(python3 -c 'import json,sys; print(min(d["step"] for d in map(json.loads, open(sys.argv[1])) if "loss" in d and d["step"] > 4))' "$TMP/own/log.jsonl")" = 5 ] \
  || fail_case "--resume without latest continues at step 5"
(exec "${OWN[@]}" --max-steps 100000 --force) & first=$!
for _ in $(seq 100); do [ -s "$TMP/own/.lock" ] && grep -q "^$first$" "$TMP/own/.lock" && break; sleep 0.1; done
run "${OWN[@]}" --max-steps 4 --force
kill "$first" 2>/dev/null; wait "$first" 2>/dev/null
expect_rc 1 "a second run on a directory in use"
expect_err "own: in use by another run \(pid $first\)" "a second run names the first's pid"
run "${OWN[@]}" --max-steps 2 --force
expect_rc 0 "--force starts over"
CASES=$((CASES + 1)); [ "$(ls "$TMP/own/checkpoints" | grep -c '^step-')" = 1 ] || fail_case "--force removed the earlier checkpoints"

# A masked token id beyond the vocabulary: one line naming the step, not a LibTorch trace.
"$PYTHON" -c 'import h5py, sys
with h5py.File(sys.argv[1]) as f, h5py.File(sys.argv[2], "w") as g:
    for n in f:
        d = f[n][:]
        if n == "masked_lm_ids": d[:, 0] = 40000
        g.create_dataset(n, data=d)' "$TMP/data.hdf5" "$TMP/big-masked.hdf5"
run bert-train -q --config "$CFG" --input "$TMP/big-masked.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 1 \
  --output-dir "$TMP/big-masked"
expect_rc 1 "masked_lm_ids beyond the vocabulary"
expect_err "^bert-train: error: step 1: the data holds masked_lm_ids 40000, but the model's vocab_size is 30522" \
  "masked_lm_ids beyond the vocabulary: one line"
CASES=$((CASES + 1)); [ "$(printf '%s\n' "$ERR" | grep -c .)" = 1 ] || fail_case "masked_lm_ids error is one line: $ERR"

# Interrupted while it writes a checkpoint (with 11M parameters and a checkpoint every step, most of the time is
# spent writing them): the run removes its step-N.tmp.* itself. The first SIGINT only asks the run to stop at a
# checkpoint; the second, sent as soon as that is said, stops it wherever it is.
for delay in 1.0 1.7 2.4; do
  (OMP_NUM_THREADS=1 exec bert-train -q --precision fp32 --config bert-L4-H256 --input "$TMP/data.hdf5" --train-batch-size 4 \
     --max-predictions 10 --max-steps 100000 --checkpoint-every 1 --keep-checkpoints 1 --output-dir "$TMP/intr-$delay" \
     --no-tensorboard 2>"$TMP/intr-$delay.err") & pid=$!
  sleep "$delay"; kill -INT "$pid"
  for _ in $(seq 500); do grep -q "stopping after this step" "$TMP/intr-$delay.err" && break; sleep 0.01; done
  kill -INT "$pid" 2>/dev/null; wait "$pid"; rc=$?
  CASES=$((CASES + 1)); [ "$rc" = 130 ] || fail_case "interrupted run: exit $rc, expected 130"
  CASES=$((CASES + 1))
  left=$(ls "$TMP/intr-$delay/checkpoints" 2>/dev/null | grep -F .tmp. || true)
  [ -z "$left" ] || fail_case "interrupted after ${delay}s: left $left"
done

# stderr: a line for the first logged step and the last (and at most one per --log-seconds between), with an ETA,
# without fp16's fields on an fp32 run; log.jsonl keeps every --log-every step; a summary line names the checkpoint.
run bert-train --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 \
  --output-dir "$TMP/lines2" --max-steps 30 --no-tensorboard --log-seconds 3600
expect_rc 0 "30 steps, a line an hour at most"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$ERR" | grep -c ': step [0-9]*/30')" = 2 ] || fail_case "not 2 step lines (the first and last): $ERR"
CASES=$((CASES + 1)); [ "$(field "$TMP/lines2/log.jsonl" loss | wc -l)" = 30 ] || fail_case "log.jsonl lost steps"
CASES=$((CASES + 1)); printf '%s\n' "$ERR" | grep ': step ' | grep -q 'loss_scale\|skipped_steps' && fail_case "fp16 fields on an fp32 run: $ERR"
CASES=$((CASES + 1)); grep -q '"loss_scale"' "$TMP/lines2/log.jsonl" || fail_case "log.jsonl keeps loss_scale"
expect_err "^bert-train: 30 steps in [0-9.]+ s, final loss [0-9.]+, .*; checkpoint $TMP/lines2/checkpoints/step-00000030$" \
  "the summary line: steps, time, loss, throughput, the checkpoint"
run bert-train --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 \
  --output-dir "$TMP/lines3" --max-steps 30 --no-tensorboard --log-every 10 --log-seconds 0
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$ERR" | grep -c ': step [0-9]*/30')" = 3 ] || fail_case "--log-seconds 0: a line per logged step: $ERR"
expect_err "^bert-train: step 20/30, eta [0-9hms]+: loss " "an ETA on a line to a file"

# Interrupted: the first SIGINT finishes the step and saves a checkpoint there (issue 39), and one line says the
# step, the checkpoint and --resume; a second one stops at once, and before any checkpoint the line says that the
# same command starts over, and it does (the earlier run's log.jsonl is replaced, not in the way). A failed run
# before its first checkpoint does not block the next one either.
TINY=(bert-train --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --log-every 1000)
(exec "${TINY[@]}" --output-dir "$TMP/stopped" --max-steps 100000 --checkpoint-every 5 2>"$TMP/stopped.err") & pid=$!
for _ in $(seq 300); do [ -e "$TMP/stopped/checkpoints/step-00000010" ] && break; sleep 0.1; done
kill -INT "$pid"; wait "$pid"; rc=$?
CASES=$((CASES + 1)); [ "$rc" = 130 ] || fail_case "interrupted tiny run: exit $rc"
line=$(tail -1 "$TMP/stopped.err")
CASES=$((CASES + 1))
[[ "$line" =~ ^bert-train:\ interrupted\ at\ step\ [0-9]+\;\ last\ checkpoint\ (step-[0-9]{8})\;\ continue\ with\ --resume$ ]] \
  && [ -d "$TMP/stopped/checkpoints/${BASH_REMATCH[1]}" ] || fail_case "interrupted: the last line says where to go on: $line"
CASES=$((CASES + 1))
grep -q "^bert-train: stopping after this step, at a checkpoint (once more to stop at once, without one)$" "$TMP/stopped.err" \
  || fail_case "the first SIGINT does not say it stops at a checkpoint"
# The second signal comes while the first step runs: a step of bert-L4-H256 at batch 32 takes most of a second here,
# and it is sent as soon as the first one is acknowledged.
(OMP_NUM_THREADS=1 exec bert-train --precision fp32 --config bert-L4-H256 --vocab "$VOCAB" --input "$TMP/data.hdf5" --train-batch-size 32 \
   --max-predictions 10 --log-every 1000 --output-dir "$TMP/early" --max-steps 100000 --no-tensorboard 2>"$TMP/early.err") &
pid=$!
for _ in $(seq 300); do [ -s "$TMP/early/log.jsonl" ] && break; sleep 0.05; done
kill -INT "$pid"
for _ in $(seq 500); do grep -q "stopping after this step" "$TMP/early.err" && break; sleep 0.01; done
kill -INT "$pid"; wait "$pid"
CASES=$((CASES + 1)); grep -q "stopping after this step" "$TMP/early.err" || fail_case "the first SIGINT was not acknowledged"
CASES=$((CASES + 1))
grep -qE "^bert-train: interrupted at step [0-9]+, before the first checkpoint; the same command starts over$" "$TMP/early.err" \
  || fail_case "interrupted before a checkpoint: $(tail -1 "$TMP/early.err")"
run "${TINY[@]}" --output-dir "$TMP/early" --max-steps 3 --checkpoint-every 100000
expect_rc 0 "the same command after an interrupted run without checkpoints"
expect_err "early/log.jsonl: replacing the log of an earlier run that left no checkpoint" "the old log replaced, said once"
CASES=$((CASES + 1)); [ "$(grep -c '"header"' "$TMP/early/log.jsonl")" = 1 ] || fail_case "the new log holds only the new run"
run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 1 \
  --output-dir "$TMP/big-masked"
expect_rc 0 "a run in the directory of a run that failed before its first checkpoint"

# --output-dir naming a file: one line, not std::filesystem's text.
: >"$TMP/a-file"
run bert-train -q --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 1 \
  --output-dir "$TMP/a-file"
expect_rc 1 "--output-dir naming a file"
expect_err "^bert-train: error: $TMP/a-file: cannot create the output directory: Not a directory$" "--output-dir naming a file: the message"

# --config takes Google's published sizes by name.
run bert-train -q --precision fp32 --config bert-L2-H128 --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 \
  --max-steps 1 --output-dir "$TMP/preset" --no-tensorboard
expect_rc 0 "--config bert-L2-H128"
CASES=$((CASES + 1))
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); sys.exit(0 if (c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["intermediate_size"]) == (128, 2, 2, 512) else 1)' \
  "$TMP/preset/checkpoints/step-00000001/config.json" || fail_case "--config bert-L2-H128 trains Google's L=2 H=128 A=2"
# A preset takes its vocabulary size from --vocab (a learned vocabulary of 3000 tokens here), or --vocab-size.
head -3000 "$VOCAB" >"$TMP/v3k.txt"
mkpretrain -q --vocab "$TMP/v3k.txt" --max-seq-length 64 --max-predictions 10 -o "$TMP/d3k.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
run bert-train -q --precision fp32 --config bert-L2-H128 --input "$TMP/d3k.hdf5" --vocab "$TMP/v3k.txt" --train-batch-size 8 \
  --max-steps 1 --output-dir "$TMP/preset-v3k" --no-tensorboard
expect_rc 0 "a preset with a learned vocabulary of 3000"
run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$TMP/preset-v3k/checkpoints/step-00000001/config.json"
expect_out "3000" "the preset's vocabulary size is --vocab's"
run bert-train -q --precision fp32 --config bert-L2-H128 --input "$TMP/d3k.hdf5" --vocab-size 3000 --train-batch-size 8 \
  --max-steps 1 --output-dir "$TMP/preset-n3k" --no-tensorboard
expect_rc 0 "a preset with --vocab-size"
run python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab_size"])' "$TMP/preset-n3k/checkpoints/step-00000001/config.json"
expect_out "3000" "the preset's vocabulary size is --vocab-size"
run bert-train -q --precision fp32 --config bert-L2-H128 --input "$TMP/d3k.hdf5" --init-checkpoint "$TMP/preset-v3k" --train-batch-size 8 \
  --max-steps 1 --output-dir "$TMP/preset-phase2" --no-tensorboard
expect_rc 0 "phase 2 of a preset from its phase 1, no --vocab: the size of the vocab.txt beside the checkpoint"
run bert-train -q --config "$CFG" --input "$TMP/d3k.hdf5" --vocab-size 3000 --train-batch-size 8 --max-steps 1 \
  --output-dir "$TMP/file-n3k"
expect_rc 2 "--vocab-size with a config file"
expect_err "^bert-train: --vocab-size sizes a preset's vocabulary; $CFG gives its own vocab_size \(30522\); try --help$" \
  "--vocab-size with a config file: one line"
run bert-train -q --config bert-huge --input "$TMP/data.hdf5" --train-batch-size 8 --max-steps 1 --output-dir "$TMP/preset-x"
expect_rc 1 "--config with an unknown preset"
expect_err "--config 'bert-huge': no such file, and not a preset \(bert-base, bert-large, bert-L2-H128" "unknown preset: the list"

# --no-nsp: the masked-LM loss alone, on mkpretrain --no-nsp data.
mkpretrain -q --no-nsp --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 -o "$TMP/mlm.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
run bert-train -q --precision fp32 --config "$CFG" --input "$TMP/mlm.hdf5" --train-batch-size 8 --max-predictions 10 --max-steps 3 \
  --output-dir "$TMP/no-nsp" --no-tensorboard --no-nsp
expect_rc 0 "--no-nsp training"
CASES=$((CASES + 1))
python3 - "$TMP/no-nsp/log.jsonl" <<'PY' || fail_case "--no-nsp: the loss is the MLM loss alone"
import json, sys
steps = [d for d in map(json.loads, open(sys.argv[1])) if "loss" in d]
sys.exit(0 if len(steps) == 3 and all("nsp_loss" not in d and d["loss"] == d["mlm_loss"] for d in steps) else 1)
PY
run bert-train -q --config "$CFG" --input "$TMP/mlm.hdf5" --train-batch-size 8 --max-steps 1 \
  --output-dir "$TMP/ls" --loss-scale 128
expect_rc 2 "--loss-scale without fp16"
expect_err "^bert-train: --loss-scale is for --precision fp16" "--loss-scale without fp16: message"
run bert-train -q --config "$CFG" --input "$TMP/lengths.hdf5" --train-batch-size 16 --max-steps 1 \
  --output-dir "$TMP/attention-x" --attention flash
expect_rc 2 "--attention with an unknown kind"
expect_err "^bert-train: --attention must be unpadded or padded, got 'flash'" "--attention error"

# Exact resume: 20 steps straight == 10 steps, stop, 10 resumed steps (bit for bit), and == a run killed at a
# random point and resumed.
run train --output-dir "$TMP/straight" --max-steps 20
expect_rc 0 "straight run"
run train --output-dir "$TMP/split" --max-steps 20 --stop-after 10
expect_rc 0 "first half"
CASES=$((CASES + 1)); [ "$(cat "$TMP/split/checkpoints/latest")" = "step-00000010" ] || fail_case "stopped at step 10"
run train --output-dir "$TMP/split" --max-steps 20 --resume
expect_rc 0 "resumed half"
expect_same "$TMP/straight/checkpoints/step-00000020/model.safetensors" "$TMP/split/checkpoints/step-00000020/model.safetensors" \
  "20 straight steps == 10 + 10 resumed steps (model)"
expect_same "$TMP/straight/checkpoints/step-00000020/optimizer.safetensors" "$TMP/split/checkpoints/step-00000020/optimizer.safetensors" \
  "20 straight steps == 10 + 10 resumed steps (optimizer)"
# In a subshell that execs, so that $! is bert-train itself: killing a shell that runs it would leave it running
# beside the resumed run.
(exec "${TRAIN[@]}" --output-dir "$TMP/killed" --max-steps 20 --checkpoint-every 3 >/dev/null 2>&1) &
pid=$!
for _ in $(seq 600); do [ -d "$TMP/killed/checkpoints/step-00000006" ] && break; sleep 0.05; done
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
run train --output-dir "$TMP/killed" --max-steps 20 --checkpoint-every 3 --resume
expect_rc 0 "resumed after kill -9"
expect_same "$TMP/straight/checkpoints/step-00000020/model.safetensors" "$TMP/killed/checkpoints/step-00000020/model.safetensors" \
  "killed and resumed == straight"
# The log holds each step once: the killed run's lines past its last checkpoint are dropped when it resumes.
CASES=$((CASES + 1)); [ "$(loss_steps "$TMP/killed/log.jsonl" | tr '\n' ' ')" = "$(seq 20 | tr '\n' ' ')" ] ||
  fail_case "killed and resumed: log.jsonl does not hold each step once: $(loss_steps "$TMP/killed/log.jsonl" | tr '\n' ' ')"
# SIGINT (a Ctrl-C) mid-run: the step finishes, a checkpoint is saved there, exit 130; --resume goes on from it to
# the same weights as a straight run, and the log holds one line per step.
run train --output-dir "$TMP/straight300" --max-steps 300 --no-tensorboard
(exec "${TRAIN[@]}" --output-dir "$TMP/ctrl-c" --max-steps 300 --no-tensorboard 2>"$TMP/ctrl-c.err") & pid=$!
for _ in $(seq 600); do [ "$(grep -c '"loss"' "$TMP/ctrl-c/log.jsonl" 2>/dev/null)" -ge 20 ] && break; sleep 0.05; done
kill -INT "$pid"; wait "$pid"; rc=$?
CASES=$((CASES + 1)); [ "$rc" = 130 ] || fail_case "Ctrl-C: exit $rc, expected 130"
stopped=$(cat "$TMP/ctrl-c/checkpoints/latest" 2>/dev/null)
CASES=$((CASES + 1))
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["saved_because"] == "interrupted" and 0 < s["step"] < 300 else 1)' \
  "$TMP/ctrl-c/checkpoints/$stopped/trainer_state.json" 2>/dev/null || fail_case "Ctrl-C saved no checkpoint mid-run ($stopped)"
run train --output-dir "$TMP/ctrl-c" --max-steps 300 --no-tensorboard --resume
expect_rc 0 "resumed after Ctrl-C"
expect_same "$TMP/straight300/checkpoints/step-00000300/model.safetensors" "$TMP/ctrl-c/checkpoints/step-00000300/model.safetensors" \
  "Ctrl-C and resumed == straight"
CASES=$((CASES + 1)); [ "$(loss_steps "$TMP/ctrl-c/log.jsonl" | tr '\n' ' ')" = "$(seq 300 | tr '\n' ' ')" ] ||
  fail_case "Ctrl-C and resumed: not one log line per step"
# A resumed run keeps the warm-up it was started with (trainer_state.json), given again or not.
W=(bert-train -q --precision fp32 --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --learning-rate 2e-2
   --seed 7 --max-steps 20 --no-tensorboard)
run "${W[@]}" --output-dir "$TMP/w-straight" --warmup-proportion 0.5
run "${W[@]}" --output-dir "$TMP/w-split" --warmup-proportion 0.5 --stop-after 5
run "${W[@]}" --output-dir "$TMP/w-split" --resume
expect_rc 0 "resumed without --warmup-proportion"
expect_same "$TMP/w-straight/checkpoints/step-00000020/model.safetensors" "$TMP/w-split/checkpoints/step-00000020/model.safetensors" \
  "the resumed run's warm-up is the one it started with"

# --init-checkpoint is strict: a checkpoint of another shape names the keys.
sed 's/"num_hidden_layers": 2/"num_hidden_layers": 3/' "$CFG" >"$TMP/three.json"
run bert-train -q --config "$TMP/three.json" --input "$TMP/data.hdf5" --output-dir "$TMP/init" --train-batch-size 8 \
  --max-predictions 10 --max-steps 1 --init-checkpoint "$TMP/straight/checkpoints/step-00000020"
expect_rc 1 "init from a smaller model"; expect_err "missing.*bert.encoder.layer.2" "missing keys listed"
run train --output-dir "$TMP/init-ok" --max-steps 2 --init-checkpoint "$TMP/straight/checkpoints/step-00000020"
expect_rc 0 "init from a matching checkpoint"

# Bad inputs: one clear line, exit 1.
printf '{"hidden_size": 32}\n' >"$TMP/bad.json"
run bert-train --config "$TMP/bad.json" --input "$TMP/data.hdf5" --output-dir "$TMP/b1" --train-batch-size 8 --max-steps 1
expect_rc 1 "incomplete config"; expect_err "bad.json: missing \"vocab_size\"" "config key named"
sed 's/"vocab_size": 30522/"vocab_size": 1000/' "$CFG" >"$TMP/small-vocab.json"
run bert-train --config "$TMP/small-vocab.json" --input "$TMP/data.hdf5" --output-dir "$TMP/b2" --train-batch-size 8 \
  --max-predictions 10 --max-steps 1
expect_rc 1 "vocab-size mismatch"; expect_err "token id [0-9]+, but the model's vocab_size is 1000" "mismatch explained"
run train --output-dir "$TMP/b3" --max-steps 1 --input "$TMP/missing.hdf5"
expect_rc 1 "missing data"; expect_err "missing.hdf5" "missing data named"
head -c 3000 "$TMP/data.hdf5" >"$TMP/cut.hdf5"
run bert-train -q --config "$CFG" --input "$TMP/cut.hdf5" --output-dir "$TMP/b4" --train-batch-size 8 --max-steps 1
expect_rc 1 "truncated data"; expect_err "cut.hdf5" "truncated data named"
# A diverging run (absurd learning rate) stops at the first non-finite loss; the checkpoints before it are whole.
run bert-train -q --config "$CFG" --input "$TMP/data.hdf5" --train-batch-size 8 --max-predictions 10 --output-dir "$TMP/nan" \
  --max-steps 50 --checkpoint-every 1 --learning-rate 1e12 --warmup-proportion 0 --optimizer adamw --max-grad-norm 0
expect_rc 1 "NaN loss"; expect_err "loss is (NaN|infinite) at step [0-9]+" "NaN named with its step"
CASES=$((CASES + 1))
python3 - "$TMP/nan/checkpoints" <<'PY' || fail_case "the last checkpoint before the NaN is intact and finite"
import json, struct, sys, os, math
root = sys.argv[1]
latest = open(os.path.join(root, "latest")).read().strip()
path = os.path.join(root, latest, "model.safetensors")
data = open(path, "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
for name, e in header.items():
    if name == "__metadata__": continue
    b, end = e["data_offsets"]
    vals = struct.unpack(f"<{(end - b) // 4}f", data[8 + n + b:8 + n + end])
    if not all(math.isfinite(v) for v in vals): sys.exit(1)
print(f"last checkpoint {latest} is finite")
PY
finish
