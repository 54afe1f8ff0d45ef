// Where this process sits in a distributed job, read from the environment the launcher left behind.
//
// Sources:
//   torchrun  RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (also our own launcher)
//   openmpi   OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE}
//   pmi       Intel MPI and MPICH (Hydra's mpiexec/mpirun), Cray PALS: PMI_RANK, PMI_SIZE, and
//             MPI_LOCALRANKID/MPI_LOCALNRANKS or else PMI_LOCAL_RANK/PMI_LOCAL_SIZE for the local rank
//   mvapich2  MV2_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE} (mpirun_rsh)
//             (the MPI launchers need MASTER_ADDR, e.g. mpirun -x MASTER_ADDR or -genv MASTER_ADDR)
//   slurm     SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE;
//             master = MASTER_ADDR or the first host of SLURM_JOB_NODELIST; port = MASTER_PORT or one derived
//             from SLURM_JOB_ID, so every task of a job agrees on it without talking
//   single    none of the above: one process, rank 0 of 1
// Launchers nest (torchrun inside srun or mpirun with one task per node; mpirun inside a Slurm allocation, whose
// SLURM_PROCID the ranks inherit), so the innermost present wins: torchrun, then the MPI launchers, then Slurm.
// Refused, with the variables named, rather than run as N separate single-process jobs: an MPI launcher's size
// (or local size) above 1 without its rank variable; two MPI launchers that disagree on rank or size; the winner
// saying one process while another launcher says several.
// Torch-free: this is plain string work, unit-tested without a process group.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        // index among the processes on this host (selects the GPU)
  int local_world_size = 1;  // processes on this host
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "single";  // "torchrun", "openmpi", "pmi", "mvapich2", "slurm" or "single"

  bool distributed() const { return world_size > 1; }
};

inline constexpr int kDefaultMasterPort = 29500;

// Pure: decides from the given variables. Throws bk::Error naming the variable when one is malformed,
// inconsistent (rank >= world size) or missing (an MPI launch without MASTER_ADDR), and naming the launchers'
// variables when the launch is refused (above).
DistEnv detect_dist_env(const std::map<std::string, std::string>& env);
// The same over this process's environment.
DistEnv detect_dist_env();
std::map<std::string, std::string> environment_map();

// Slurm's compressed host lists: "node[01-04,07],gpu5,rack[1-2]-n[3-4]" -> node01 node02 node03 node04 node07
// gpu5 rack1-n3 rack1-n4 rack2-n3 rack2-n4. Zero padding follows the lower bound of each range.
std::vector<std::string> expand_slurm_nodelist(std::string_view nodelist);
// Slurm's task counts per node: "2(x3),1" -> 2 2 2 1.
std::vector<int> expand_slurm_tasks_per_node(std::string_view tasks);
// The rendezvous port every task of Slurm job `job_id` derives: in [12000, 32000), below Linux's ephemeral range.
int slurm_default_port(long long job_id);

}  // namespace bk
