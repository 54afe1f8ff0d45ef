#!/usr/bin/env bash
# Data parallelism on the CPU (Gloo): 2 ranks with batch b reach the weights of 1 rank with batch 2b (<= 1e-6
# after 10 steps), started through --nproc-per-node and through torchrun-style variables; and a lost rank stops
# the other with an error instead of a hang.
source "$(dirname "$0")/lib.sh"
need_fixtures
if [ ! -x "$BIN/bert-train" ]; then echo "skipped: bert-train not built (BERTKIT_WITH_TORCH=OFF)"; exit 77; fi
export OMP_NUM_THREADS=1
VOCAB=$FIXTURES/vocab/bert-base-uncased-vocab.txt
# No dropout: the ranks' dropout masks differ by design (seed + rank).
sed 's/"attention_probs_dropout_prob": 0.1/"attention_probs_dropout_prob": 0.0/; s/"hidden_dropout_prob": 0.1/"hidden_dropout_prob": 0.0/' \
  "$SRC/tests/fixtures/tiny_bert_config.json" >"$TMP/config.json"
mkpretrain -q --vocab "$VOCAB" --max-seq-length 64 --max-predictions 10 --dupe-factor 10 -o "$TMP/data.hdf5" \
  "$FIXTURES/pretraining_text/sample_text.txt"
loud=(--precision fp32 --config "$TMP/config.json" --input "$TMP/data.hdf5" --max-predictions 10 --max-steps 10 --seed 7
      --no-tensorboard --dist-timeout 60)
common=(-q --precision fp32 --config "$TMP/config.json" --input "$TMP/data.hdf5" --max-predictions 10 --max-steps 10 --seed 7
        --no-tensorboard --dist-timeout 60)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Max abs difference between the model tensors of two checkpoints, and the largest change from the first step.
diff_models() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
import numpy as np
from safetensors.numpy import load_file
a, b = load_file(sys.argv[1]), load_file(sys.argv[2])
assert a.keys() == b.keys()
print(max(float(np.abs(a[k] - b[k]).max()) for k in a))
PY
}
within() { python3 -c "import sys; sys.exit(0 if float('$1') $2 float('$3') else 1)"; }

for opt in "lamb 5e-3" "adamw 1e-3"; do
  set -- $opt
  run bert-train "${common[@]}" --optimizer "$1" --learning-rate "$2" --train-batch-size 16 --global-data-order \
    --output-dir "$TMP/one-$1"
  expect_rc 0 "$1: 1 rank, batch 16"
  run bert-train "${common[@]}" --optimizer "$1" --learning-rate "$2" --train-batch-size 8 --global-data-order \
    --nproc-per-node 2 --master-port "$port" --output-dir "$TMP/two-$1"
  expect_rc 0 "$1: 2 ranks, batch 8 each (--nproc-per-node)"
  d=$(diff_models "$TMP/one-$1/checkpoints/step-00000010/model.safetensors" "$TMP/two-$1/checkpoints/step-00000010/model.safetensors")
  echo "$1: max |w(1 rank, batch 16) - w(2 ranks, batch 8)| after 10 steps = $d"
  CASES=$((CASES + 1)); within "$d" "<=" 1e-6 || fail_case "$1: 2 ranks x 8 != 1 rank x 16 (max diff $d)"
done
# The comparison can fail: another data order (each rank its own share) gives other weights.
run bert-train "${common[@]}" --optimizer lamb --learning-rate 5e-3 --train-batch-size 8 --nproc-per-node 2 \
  --master-port "$port" --output-dir "$TMP/two-own"
expect_rc 0 "2 ranks, own shares"
d=$(diff_models "$TMP/one-lamb/checkpoints/step-00000010/model.safetensors" "$TMP/two-own/checkpoints/step-00000010/model.safetensors")
CASES=$((CASES + 1)); within "$d" ">" 1e-4 || fail_case "other batches should give other weights (diff $d)"

# Intel's independent workers: no all-reduce; the worker with the lowest final loss is kept and saved.
run bert-train "${loud[@]}" --optimizer lamb --learning-rate 5e-3 --train-batch-size 8 --nproc-per-node 2 \
  --master-port "$port" --no-sync-gradients --lr-scaling sqrt --output-dir "$TMP/independent"
expect_rc 0 "--no-sync-gradients"
expect_err "independent workers: rank [01] had the lowest loss" "the best worker is named"
d=$(diff_models "$TMP/two-own/checkpoints/step-00000010/model.safetensors" "$TMP/independent/checkpoints/step-00000010/model.safetensors")
CASES=$((CASES + 1)); within "$d" ">" 1e-4 || fail_case "independent workers train apart from synchronised ones (diff $d)"
# Samsung's local clipping before the all-reduce: a small --max-grad-norm makes it matter.
run bert-train "${common[@]}" --optimizer adamw --learning-rate 1e-3 --max-grad-norm 0.01 --train-batch-size 8 \
  --nproc-per-node 2 --master-port "$port" --local-clip --output-dir "$TMP/local-clip"
expect_rc 0 "--local-clip"
run bert-train "${common[@]}" --optimizer adamw --learning-rate 1e-3 --max-grad-norm 0.01 --train-batch-size 8 \
  --nproc-per-node 2 --master-port "$port" --output-dir "$TMP/global-clip"
expect_rc 0 "global clipping"
d=$(diff_models "$TMP/local-clip/checkpoints/step-00000010/model.safetensors" "$TMP/global-clip/checkpoints/step-00000010/model.safetensors")
CASES=$((CASES + 1)); within "$d" ">" 0 || fail_case "clipping before the all-reduce changes the result (diff $d)"
# Gradients all-reduced in bf16 and fp16 (half the bytes): close to the fp32 all-reduce, not equal to it.
for wire in bf16 fp16; do
  run bert-train "${common[@]}" --optimizer adamw --learning-rate 1e-3 --train-batch-size 8 --global-data-order \
    --nproc-per-node 2 --master-port "$port" --allreduce-dtype "$wire" --output-dir "$TMP/wire-$wire"
  expect_rc 0 "--allreduce-dtype $wire"
  d=$(diff_models "$TMP/two-adamw/checkpoints/step-00000010/model.safetensors" "$TMP/wire-$wire/checkpoints/step-00000010/model.safetensors")
  echo "adamw: max |w(fp32 all-reduce) - w($wire all-reduce)| after 10 steps = $d"
  CASES=$((CASES + 1)); within "$d" ">" 0 && within "$d" "<" 1e-2 || fail_case "$wire all-reduce: diff $d not in (0, 1e-2)"
done
# --numa-bind in a process another launcher started: it binds itself, or warns (this host may have one node).
RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  run bert-train "${loud[@]}" --optimizer lamb --learning-rate 5e-3 --train-batch-size 8 --numa-bind \
  --output-dir "$TMP/numa"
expect_rc 0 "--numa-bind under a torchrun-style launch"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -le 1 ]; then
  expect_err "warning: --numa-bind: this host has [01] NUMA node with CPUs; worker 0 is not pinned" \
    "--numa-bind warns when it cannot pin"
fi
# Samsung's warm-up collectives change nothing but the timing.
run bert-train "${loud[@]}" --optimizer lamb --learning-rate 5e-3 --train-batch-size 8 --global-data-order \
  --nproc-per-node 2 --master-port "$port" --nccl-warmup --output-dir "$TMP/warm"
expect_rc 0 "--nccl-warmup"
expect_err "--nccl-warmup: [0-9]+ bucket all-reduces twice in" "--nccl-warmup says what it did"
expect_same "$TMP/two-lamb/checkpoints/step-00000010/model.safetensors" "$TMP/warm/checkpoints/step-00000010/model.safetensors" \
  "--nccl-warmup leaves the weights as they were"
run bert-train "${common[@]}" --train-batch-size 8 --allreduce-dtype int8 --output-dir "$TMP/wire-bad"
expect_rc 2 "--allreduce-dtype int8"

# torchrun-style variables, two processes started by hand: the same result as --nproc-per-node.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    bert-train "${common[@]}" --optimizer lamb --learning-rate 5e-3 --train-batch-size 8 --global-data-order \
    --output-dir "$TMP/env" >"$TMP/env-$r.log" 2>&1 &
done
wait
expect_same "$TMP/two-lamb/checkpoints/step-00000010/model.safetensors" "$TMP/env/checkpoints/step-00000010/model.safetensors" \
  "RANK/WORLD_SIZE launch == --nproc-per-node launch"

# Open MPI's variables (as mpirun sets them) select the ranks too.
for r in 0 1; do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_LOCAL_SIZE=2 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port bert-train "${common[@]}" --optimizer lamb --learning-rate 5e-3 \
    --train-batch-size 8 --global-data-order --output-dir "$TMP/mpi" >"$TMP/mpi-$r.log" 2>&1 &
done
wait
expect_same "$TMP/two-lamb/checkpoints/step-00000010/model.safetensors" "$TMP/mpi/checkpoints/step-00000010/model.safetensors" \
  "Open MPI variables == --nproc-per-node launch"

# A rank that never arrives: the other stops with a clear error within the timeout, not a hang.
start=$(date +%s)
run timeout 120 env RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port bert-train -q \
  --config "$TMP/config.json" --input "$TMP/data.hdf5" --max-predictions 10 --max-steps 10 --train-batch-size 8 \
  --output-dir "$TMP/alone" --dist-timeout 5
expect_rc 1 "a missing peer is an error"
CASES=$((CASES + 1)); [ $(( $(date +%s) - start )) -lt 100 ] || fail_case "the error came only after $(( $(date +%s) - start )) s"
finish
