#!/usr/bin/env bash
# dist: the distributed layer (train/dist/, launch/) through tests/torch_tools/dist_probe, on Gloo over
# 127.0.0.1: collectives with known inputs give the sums, means and copies computed here from the probe's input
# rules; the three rendezvous sources; the --nproc-per-node launcher; and failure drills (a rank exits, is
# SIGKILLed or stops answering) that must end the others with a clear error instead of a hang.
source "$(dirname "$0")/lib.sh"
PROBE="${TORCH_TEST_TOOLS:-}/dist_probe"
if [ ! -x "$PROBE" ]; then echo "skipped: no dist_probe (a build without LibTorch)"; exit 77; fi
PY=${PYTHON:-python3}
[ -x "$PY" ] || PY=python3
# Whatever launched the tests must not leak its own rendezvous into the probes.
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT NNODES NODE_RANK
unset $(compgen -e | grep -E '^(SLURM_|OMPI_)') 2>/dev/null
LIMIT="timeout -k 5 120"  # every probe is bounded: a hang fails the test instead of blocking it

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# expected RANK WORLD: the value lines rank RANK of WORLD must print, from the rules in dist_probe.cpp.
expected() {
  "$PY" - "$1" "$2" <<'EOF'
import sys
rank, world = int(sys.argv[1]), int(sys.argv[2])
g = lambda x: "%g" % x
value = lambda r, k, i: (r + 1) * (k + 1) + i          # all-reduce input, tensor k element i on rank r
sizes = [3, 6, 5, 1000]
lines = []
for label, divisor in (("sum", 1), ("mean", world)):
    for k in range(3):
        lines.append(f"{label} t{k}: " + " ".join(g(sum(value(r, k, i) for r in range(world)) / divisor)
                                                  for i in range(sizes[k])))
    total = sum(value(r, 3, i) for r in range(world) for i in range(1000)) / divisor
    lines.append(f"{label} t3 sum: {total:.1f}")
for k in range(3):                                       # rank 0's parameters: 100 * 0 + 10 k + i
    lines.append(f"broadcast p{k}: " + " ".join(g(10 * k + i) for i in range(4)))
lines.append(f"scalar sum={g(world * (world + 1) / 2)} max={g(world)} min=1")
mean_scale = sum(r + 1 for r in range(world)) / world   # d loss / d w[i] = (r + 1)(i + 1), two micro-batches
for k, n in enumerate([4, 6, 5]):
    lines.append(f"overlap w{k}: " + " ".join(g(2 * (i + 1) * mean_scale) for i in range(n)))
print("\n".join(f"rank {rank}: {line}" for line in lines))
EOF
}

# check_rank FILE RANK WORLD SOURCE WHAT: one rank's stdout is complete and right.
check_rank() {
  local file=$1 rank=$2 world=$3 source=$4 what=$5 got
  CASES=$((CASES + 1))
  got=$(grep -E "^rank $rank: (sum|mean|broadcast|scalar|overlap w)" "$file")
  [ "$got" = "$(expected "$rank" "$world")" ] || fail_case "$what: rank $rank values differ:
$got
--- expected ---
$(expected "$rank" "$world")"
  CASES=$((CASES + 1))
  grep -qx "rank $rank: env source=$source rank=$rank world=$world local=$rank/$world backend=gloo" "$file" ||
    [ "$world" = 1 ] || fail_case "$what: rank $rank env line: $(grep "^rank $rank: env" "$file")"
  CASES=$((CASES + 1))
  grep -qx "rank $rank: overlap buckets: 3 started in backward: 3" "$file" || [ "$world" = 1 ] ||
    fail_case "$what: rank $rank did not start every bucket inside backward: $(grep "^rank $rank: overlap b" "$file")"
  CASES=$((CASES + 1))
  grep -qx "rank $rank: done 3 steps" "$file" || fail_case "$what: rank $rank did not finish"
}

# start_ranks WORLD ENVFN ARGS...: starts WORLD probes in the background, rank r's environment from `ENVFN r`;
# their stdout/stderr go to $TMP/rR.out / .err, pids to PIDS.
start_ranks() {
  local world=$1 envfn=$2 r
  shift 2
  PIDS=()
  for ((r = 0; r < world; r++)); do
    env $($envfn "$r") $LIMIT "$PROBE" "$@" >"$TMP/r$r.out" 2>"$TMP/r$r.err" &
    PIDS+=($!)
  done
}
# wait_ranks: RCS[r] = exit status of rank r.
wait_ranks() {
  local r
  RCS=()
  for r in "${!PIDS[@]}"; do
    wait "${PIDS[$r]}" 2>/dev/null  # (bash would announce a killed job)
    RCS[$r]=$?
  done
}

# check_pair ENVFN SOURCE WHAT: two ranks with environments from ENVFN both succeed with the right values.
check_pair() {
  local envfn=$1 source=$2 what=$3
  start_ranks 2 "$envfn" --dist-timeout 60
  wait_ranks
  CASES=$((CASES + 1))
  [ "${RCS[0]}/${RCS[1]}" = "0/0" ] || fail_case "$what: exit ${RCS[*]} ($(cat "$TMP"/r*.err))"
  check_rank "$TMP/r0.out" 0 2 "$source" "$what"
  check_rank "$TMP/r1.out" 1 2 "$source" "$what"
}

# --- one process: every collective is the identity --------------------------------------------------------------
run $LIMIT "$PROBE"
expect_rc 0 "single process"
printf '%s\n' "$OUT" >"$TMP/single.out"
check_rank "$TMP/single.out" 0 1 single "single process"
CASES=$((CASES + 1))
grep -qx "rank 0: env source=single rank=0 world=1 local=0/1 backend=single" "$TMP/single.out" ||
  fail_case "single process env line: $(head -1 "$TMP/single.out")"

# --- two ranks from torchrun variables --------------------------------------------------------------------------
PORT=$(free_port)
torchrun_env() { echo RANK=$1 WORLD_SIZE=2 LOCAL_RANK=$1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT; }
check_pair torchrun_env torchrun "torchrun pair"

# --- Slurm variables: master from the compressed node list, port from MASTER_PORT ---------------------------------
PORT=$(free_port)
slurm_env() {
  echo SLURM_PROCID=$1 SLURM_NTASKS=2 SLURM_LOCALID=$1 SLURM_TASKS_PER_NODE='2(x1)' SLURM_NODEID=0 \
    SLURM_JOB_ID=4242 SLURM_JOB_NODELIST='127.0.0.[1-3]' MASTER_PORT=$PORT
}
check_pair slurm_env slurm "slurm pair"

# --- Open MPI variables ------------------------------------------------------------------------------------------
PORT=$(free_port)
ompi_env() {
  echo OMPI_COMM_WORLD_RANK=$1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$1 OMPI_COMM_WORLD_LOCAL_SIZE=2 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT
}
check_pair ompi_env openmpi "openmpi pair"

run env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 $LIMIT "$PROBE"
expect_rc 1 "openmpi without MASTER_ADDR"
expect_err '^dist_probe: error: .*MASTER_ADDR is not set' "openmpi without MASTER_ADDR names the variable"

# --- the launcher: three workers from one command ------------------------------------------------------------------
run $LIMIT "$PROBE" --nproc-per-node 3 --dist-timeout 60
expect_rc 0 "launcher, 3 workers"
printf '%s\n' "$OUT" >"$TMP/launch.out"
for r in 0 1 2; do check_rank "$TMP/launch.out" $r 3 torchrun "launcher, 3 workers"; done

# --numa-bind: pinned where there are several NUMA nodes, a note where there is one; the results are the same.
run $LIMIT "$PROBE" --nproc-per-node 2 --numa-bind --dist-timeout 60
expect_rc 0 "launcher with --numa-bind"
printf '%s\n' "$OUT" >"$TMP/numa.out"
for r in 0 1; do check_rank "$TMP/numa.out" $r 2 torchrun "launcher with --numa-bind"; done
if [ "$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)" -le 1 ]; then
  expect_err 'note: --numa-bind: this host has [01] NUMA node' "--numa-bind on one node says so"
fi

run $LIMIT "$PROBE" --nproc-per-node 0
expect_rc 2 "--nproc-per-node 0"
expect_err '^dist_probe: --nproc-per-node must be in \[1, [0-9]+\], got 0; try --help$' "--nproc-per-node 0 message"
run $LIMIT "$PROBE" --nproc-per-node 2 --nnodes 2 --node-rank 2 --master-addr 127.0.0.1
expect_rc 2 "--node-rank out of range"
expect_err 'node-rank 2 is not below --nnodes 2' "--node-rank out of range message"
run $LIMIT "$PROBE" --nproc-per-node 2 --nnodes 2 --node-rank 1
expect_rc 2 "two nodes without a master address"
expect_err 'needs --master-addr' "two nodes without a master address message"

# --- failure drills ----------------------------------------------------------------------------------------------
# Rank 1 exits in the middle of the all-reduce rounds: rank 0 must stop with an error naming the lost rank.
PORT=$(free_port)
start_ranks 2 torchrun_env --dist-timeout 60 --steps 100000 --exit-rank 1 --fail-step 5
wait_ranks
CASES=$((CASES + 1))
[ "${RCS[0]}/${RCS[1]}" = "1/3" ] || fail_case "rank 1 exits: exit ${RCS[*]}, expected 1/3 ($(cat "$TMP/r0.err"))"
ERR=$(cat "$TMP/r0.err")
expect_err '^dist_probe: error: gradient all-reduce failed on rank 0 of 2 \(gloo\): lost the connection to rank 1' \
  "rank 1 exits: rank 0's message"

# Rank 0 (which also serves the store) is SIGKILLed while rank 1 waits on it.
PORT=$(free_port)
start_ranks 2 torchrun_env --dist-timeout 60 --steps 100000 --hang-rank 0 --fail-step 3
for _ in $(seq 600); do grep -q 'hanging' "$TMP/r0.out" && break; sleep 0.1; done
kill -9 "$(sed -n 's/^rank 0: hanging at step 3 pid \([0-9]*\)$/\1/p' "$TMP/r0.out")" 2>/dev/null
wait_ranks
CASES=$((CASES + 1))
[ "${RCS[1]}" = 1 ] || fail_case "rank 0 killed: rank 1 exit ${RCS[1]}, expected 1 ($(cat "$TMP/r1.err"))"
ERR=$(cat "$TMP/r1.err")
expect_err '^dist_probe: error: .* failed on rank 1 of 2 \(gloo\): lost the connection to rank 0' \
  "rank 0 killed: rank 1's message"

# Rank 1 stops answering: rank 0 gives up after the 3 s timeout, then the test ends rank 1.
PORT=$(free_port)
start_ranks 2 torchrun_env --dist-timeout 3 --steps 100000 --hang-rank 1 --fail-step 3
wait "${PIDS[0]}"
RC0=$?
kill "$(sed -n 's/^rank 1: hanging at step 3 pid \([0-9]*\)$/\1/p' "$TMP/r1.out")" 2>/dev/null
wait "${PIDS[1]}"
CASES=$((CASES + 1))
[ "$RC0" = 1 ] || fail_case "rank 1 silent: rank 0 exit $RC0, expected 1 ($(cat "$TMP/r0.err"))"
ERR=$(cat "$TMP/r0.err")
expect_err '^dist_probe: error: .* failed on rank 0 of 2 \(gloo\): no answer from a peer within the 3 s timeout' \
  "rank 1 silent: rank 0's message"

# Nobody else arrives at the rendezvous: rank 0 gives up after the timeout with a one-line error.
PORT=$(free_port)
run env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT $LIMIT "$PROBE" --dist-timeout 2
expect_rc 1 "rendezvous alone"
expect_err '^dist_probe: error: rank 0 of 2 \(torchrun\): rendezvous at 127.0.0.1:[0-9]+ failed within 2 s' \
  "rendezvous alone message"
CASES=$((CASES + 1))
[ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] || fail_case "rendezvous alone: more than one line on stderr: $ERR"

# Under the launcher a failing worker stops the others and its status is the launcher's.
run $LIMIT "$PROBE" --nproc-per-node 2 --dist-timeout 60 --steps 100000 --exit-rank 1 --fail-step 5
expect_rc 3 "launcher, worker 1 exits 3"
expect_err 'dist_probe: worker 1 \(local rank 1, pid [0-9]+\) exited with status 3; stopping the other 1 worker' \
  "launcher names the failed worker"

# SIGTERM to the launcher reaches the workers (one hangs, the other waits for it) and nothing is left running.
"$PROBE" --nproc-per-node 2 --dist-timeout 600 --steps 100000 --hang-rank 0 --fail-step 2 >"$TMP/term.out" \
  2>"$TMP/term.err" &
LAUNCHER=$!
for _ in $(seq 600); do grep -q 'hanging' "$TMP/term.out" && break; sleep 0.1; done
WORKER0=$(sed -n 's/^rank 0: hanging at step 2 pid \([0-9]*\)$/\1/p' "$TMP/term.out")
kill -TERM "$LAUNCHER"
$LIMIT tail --pid="$LAUNCHER" -f /dev/null
wait "$LAUNCHER"
RC=$?
CASES=$((CASES + 1))
[ "$RC" = 143 ] || fail_case "SIGTERM to the launcher: exit $RC, expected 143 ($(cat "$TMP/term.err"))"
CASES=$((CASES + 1))
[ -n "$WORKER0" ] && ! kill -0 "$WORKER0" 2>/dev/null || fail_case "SIGTERM to the launcher: worker 0 still runs"

finish
