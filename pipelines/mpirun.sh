#!/usr/bin/env bash
# bert-train under Open MPI: every rank reads OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK itself, so mpirun
# starts bert-train directly, no wrapper script. MASTER_ADDR (the host of rank 0) must be exported to the ranks.
#   pipelines/mpirun.sh NP HOSTFILE -- BERT_TRAIN_ARGS...
# Intel's CPU recipe (independent workers, sqrt learning-rate scaling) is e.g.
#   pipelines/mpirun.sh 4 hosts -- --no-sync-gradients --lr-scaling sqrt --device cpu ...
# Environment: BIN, MASTER_PORT (default 29500), MPIRUN (default mpirun). Open MPI refuses to run as root unless
# OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are exported (containers often run as root).
set -euo pipefail
np=${1:?usage: mpirun.sh NP HOSTFILE -- BERT_TRAIN_ARGS...}; hostfile=${2:?}; shift 2
[ "${1:-}" = "--" ] && shift
source "$(dirname "$0")/tools-dir.sh" bert-train
if [ -s "$hostfile" ]; then master=$(awk 'NF && $1 !~ /^#/ {print $1; exit}' "$hostfile"); else master=127.0.0.1; fi
export MASTER_ADDR=${MASTER_ADDR:-$master} MASTER_PORT=${MASTER_PORT:-29500}
hosts=(); [ -s "$hostfile" ] && hosts=(--hostfile "$hostfile")
exec "${MPIRUN:-mpirun}" -np "$np" "${hosts[@]}" -x MASTER_ADDR -x MASTER_PORT -x OMP_NUM_THREADS \
  "$BIN/bert-train" "$@"
