// `--nproc-per-node N`: one command starts N worker processes on this host, as torchrun does.
//
// The launcher re-executes this same binary (/proc/self/exe) N times with its own flags removed from the
// arguments and RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT in the environment
// (read back by detect_dist_env). Multi-node: the same command on every node with --nnodes and --node-rank
// (or NNODES/NODE_RANK, or Slurm's SLURM_NNODES/SLURM_NODEID with one launcher task per node); global ranks are
// node_rank * N + local rank. Workers write to the launcher's stdout and stderr unchanged. SIGINT and SIGTERM are
// passed on to the workers; when a worker fails the others are stopped (SIGTERM, then SIGKILL after a grace
// period) and the launcher returns the failed worker's exit status.
//
// --numa-bind pins local worker i to NUMA node i * nodes / N: its CPU affinity to that node's CPUs and its memory
// policy to that node (set_mempolicy MPOL_BIND), applied in the child before exec. With one NUMA node it does
// nothing. Unless OMP_NUM_THREADS is set, each worker gets its share of this host's CPUs (of its node's CPUs
// when bound) so N workers do not oversubscribe the cores.
//
// Torch-free.
#pragma once

#include "cli/options.h"

#include <string>
#include <vector>

namespace bk {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 0;          // 0: from the environment, else 1
  int node_rank = -1;      // -1: from the environment, else 0
  std::string master_addr; // empty: MASTER_ADDR, the first Slurm host, or 127.0.0.1 on one node
  int master_port = 0;     // 0: MASTER_PORT, else a free port on one node, else 29500
  bool numa_bind = false;
  int grace_seconds = 10;  // after SIGTERM, before SIGKILL
  // --dist-timeout: for Dist::create in each worker (rendezvous and collectives); passed through to the workers.
  int dist_timeout_seconds = 300;

  bool launch() const { return nproc_per_node > 1 || nnodes > 1; }
};

// Adds --nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port, --numa-bind (the launcher's, removed
// from the workers' arguments) and --dist-timeout (kept: the workers use it).
void add_launcher_options(Options& options, LaunchOptions& launch);

// Starts the workers and waits for them; returns 0, or the exit status of the first worker that failed
// (128 + signal if it was killed), or 128 + signal if the launcher itself was interrupted.
int run_local_workers(const LaunchOptions& launch, int argc, char** argv);
// The same with the other settings from the environment.
int run_local_workers(int nproc_per_node, int argc, char** argv);

// argv[1..] without the launcher's own flags ("--flag value" and "--flag=value" forms; nothing after "--").
std::vector<std::string> strip_launcher_args(int argc, char** argv);

// "0-3,8,10-11" -> 0 1 2 3 8 10 11 (the /sys/devices/system/node/nodeN/cpulist format).
std::vector<int> parse_cpu_list(const std::string& text);
// The NUMA node local worker `local_rank` of `nproc` goes to: workers split into contiguous blocks per node.
int numa_node_for_worker(int local_rank, int nproc, int numa_nodes);

// --numa-bind for a worker another launcher started (srun, mpirun, torchrun): pins this process's CPUs and memory
// to NUMA node `preferred_node` (a GPU's own node, where the system tells it; -1: none) or else to the node of its
// local rank. Returns the threads that node gives this worker (its CPUs over the local workers sharing it), or 0
// when it did not bind; it says why on stderr (a warning, never silence).
int bind_self_to_numa(int local_rank, int local_world_size, int preferred_node);

}  // namespace bk
