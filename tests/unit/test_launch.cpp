// The torch-free half of the distributed layer: rendezvous variables, Slurm's list syntax, bucket plans, and the
// launcher's argument and CPU-list handling.
#include "../error_of.h"
#include "launch/dist_env.h"
#include "launch/launcher.h"
#include "train/dist/dist_buckets.h"
#include "util/error.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

using Env = std::map<std::string, std::string>;

namespace {

std::string error_of(const Env& env) {
  return bk_test::error_of([&] { bk::detect_dist_env(env); });
}

}  // namespace

TEST_CASE("dist env: nothing set is one process") {
  auto d = bk::detect_dist_env(Env{{"HOME", "/root"}, {"MASTER_PORT", "not a port"}});
  CHECK(d.source == "single");
  CHECK(d.rank == 0);
  CHECK(d.world_size == 1);
  CHECK(d.local_rank == 0);
  CHECK(d.local_world_size == 1);
  CHECK_FALSE(d.distributed());
}

TEST_CASE("dist env: torchrun variables") {
  Env env{{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
          {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "23456"}};
  auto d = bk::detect_dist_env(env);
  CHECK(d.source == "torchrun");
  CHECK(d.rank == 5);
  CHECK(d.world_size == 8);
  CHECK(d.local_rank == 1);
  CHECK(d.local_world_size == 4);
  CHECK(d.master_addr == "10.0.0.7");
  CHECK(d.master_port == 23456);
  CHECK(d.distributed());

  SUBCASE("they win over Slurm and Open MPI") {
    env["SLURM_PROCID"] = "0";
    env["SLURM_NTASKS"] = "2";
    env["OMPI_COMM_WORLD_RANK"] = "0";
    env["OMPI_COMM_WORLD_SIZE"] = "2";
    CHECK(bk::detect_dist_env(env).source == "torchrun");
  }
  SUBCASE("without local variables: one host") {
    env.erase("LOCAL_RANK");
    env.erase("LOCAL_WORLD_SIZE");
    auto one_host = bk::detect_dist_env(env);
    CHECK(one_host.local_rank == 5);
    CHECK(one_host.local_world_size == 8);
  }
  SUBCASE("default port") {
    env.erase("MASTER_PORT");
    CHECK(bk::detect_dist_env(env).master_port == 29500);
  }
}

TEST_CASE("dist env: torchrun mistakes name the variable") {
  CHECK(error_of({{"RANK", "0"}}).find("WORLD_SIZE") != std::string::npos);
  CHECK(error_of({{"WORLD_SIZE", "2"}}).find("RANK") != std::string::npos);
  CHECK(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("RANK=2") != std::string::npos);
  CHECK(error_of({{"RANK", "x1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("RANK='x1'") != std::string::npos);
  CHECK(error_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}}).find("MASTER_ADDR") != std::string::npos);
  CHECK(error_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
            .find("MASTER_PORT") != std::string::npos);
  CHECK(error_of({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"},
                  {"MASTER_ADDR", "h"}})
            .find("LOCAL_RANK=2") != std::string::npos);
}

TEST_CASE("dist env: Slurm") {
  Env env{{"SLURM_PROCID", "6"},          {"SLURM_NTASKS", "7"},        {"SLURM_LOCALID", "0"},
          {"SLURM_TASKS_PER_NODE", "2(x3),1"}, {"SLURM_NODEID", "3"},   {"SLURM_JOB_ID", "123456"},
          {"SLURM_JOB_NODELIST", "gpu[07-09,12]"}};
  auto d = bk::detect_dist_env(env);
  CHECK(d.source == "slurm");
  CHECK(d.rank == 6);
  CHECK(d.world_size == 7);
  CHECK(d.local_rank == 0);
  CHECK(d.local_world_size == 1);  // the fourth node's count in 2,2,2,1
  CHECK(d.master_addr == "gpu07");
  CHECK(d.master_port == 12000 + 123456 % 20000);

  SUBCASE("an explicit per-node count, address and port win") {
    env["SLURM_NTASKS_PER_NODE"] = "4";
    env["SLURM_NTASKS"] = "8";
    env["SLURM_LOCALID"] = "2";
    env["MASTER_ADDR"] = "head";
    env["MASTER_PORT"] = "4000";
    auto e = bk::detect_dist_env(env);
    CHECK(e.local_world_size == 4);
    CHECK(e.local_rank == 2);
    CHECK(e.master_addr == "head");
    CHECK(e.master_port == 4000);
  }
  SUBCASE("an MPI launcher inside the allocation wins: its ranks inherit SLURM_PROCID from the step that made them") {
    env["OMPI_COMM_WORLD_RANK"] = "5";
    env["OMPI_COMM_WORLD_SIZE"] = "14";
    env["MASTER_ADDR"] = "gpu07";
    auto e = bk::detect_dist_env(env);
    CHECK(e.source == "openmpi");
    CHECK(e.rank == 5);
    CHECK(e.world_size == 14);
  }
  SUBCASE("an allocation without a task launch is not a distributed job") {
    env.erase("SLURM_NTASKS");
    CHECK(bk::detect_dist_env(env).source == "single");
  }
  SUBCASE("no node list and no MASTER_ADDR") {
    env.erase("SLURM_JOB_NODELIST");
    CHECK(error_of(env).find("SLURM_JOB_NODELIST") != std::string::npos);
  }
}

TEST_CASE("dist env: Open MPI") {
  Env env{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"MASTER_ADDR", "node1"}};
  auto d = bk::detect_dist_env(env);
  CHECK(d.source == "openmpi");
  CHECK(d.rank == 3);
  CHECK(d.world_size == 4);
  CHECK(d.local_rank == 1);
  CHECK(d.local_world_size == 2);
  CHECK(d.master_addr == "node1");
  CHECK(d.master_port == 29500);
  env.erase("MASTER_ADDR");
  std::string message = error_of(env);
  CHECK(message.find("MASTER_ADDR is not set") != std::string::npos);
  CHECK(message.find("mpirun -x MASTER_ADDR") != std::string::npos);
}

TEST_CASE("dist env: Intel MPI and MPICH (Hydra)") {
  Env env{{"PMI_RANK", "5"},        {"PMI_SIZE", "16"},       {"MPI_LOCALRANKID", "1"},
          {"MPI_LOCALNRANKS", "4"}, {"MASTER_ADDR", "node1"}, {"MASTER_PORT", "4242"}};
  auto d = bk::detect_dist_env(env);
  CHECK(d.source == "pmi");
  CHECK(d.rank == 5);
  CHECK(d.world_size == 16);
  CHECK(d.local_rank == 1);
  CHECK(d.local_world_size == 4);
  CHECK(d.master_addr == "node1");
  CHECK(d.master_port == 4242);

  SUBCASE("PMI_LOCAL_RANK and PMI_LOCAL_SIZE when Hydra's own pair is absent (Cray PALS, some Hydras)") {
    env.erase("MPI_LOCALRANKID");
    env.erase("MPI_LOCALNRANKS");
    env["PMI_LOCAL_RANK"] = "3";
    env["PMI_LOCAL_SIZE"] = "8";
    auto e = bk::detect_dist_env(env);
    CHECK(e.local_rank == 3);
    CHECK(e.local_world_size == 8);
  }
  SUBCASE("MPI_LOCALRANKID wins over PMI_LOCAL_RANK") {
    env["PMI_LOCAL_RANK"] = "3";
    env["PMI_LOCAL_SIZE"] = "8";
    CHECK(bk::detect_dist_env(env).local_rank == 1);
  }
  SUBCASE("no local variables: one host") {
    env.erase("MPI_LOCALRANKID");
    env.erase("MPI_LOCALNRANKS");
    auto e = bk::detect_dist_env(env);
    CHECK(e.local_rank == 5);
    CHECK(e.local_world_size == 16);
  }
  SUBCASE("MASTER_ADDR is required, with Hydra's way to pass it") {
    env.erase("MASTER_ADDR");
    std::string message = error_of(env);
    CHECK(message.find("Intel MPI / MPICH (16 processes) but MASTER_ADDR is not set") != std::string::npos);
    CHECK(message.find("-genv MASTER_ADDR") != std::string::npos);
  }
  SUBCASE("a rank outside the world names the variables") {
    env["PMI_RANK"] = "16";
    CHECK(error_of(env).find("PMI_RANK=16 is not below PMI_SIZE=16") != std::string::npos);
    env["PMI_RANK"] = "2";
    env["MPI_LOCALRANKID"] = "4";
    CHECK(error_of(env).find("MPI_LOCALRANKID=4 is not below MPI_LOCALNRANKS=4") != std::string::npos);
  }
  SUBCASE("one process of one needs no address") {
    auto e = bk::detect_dist_env(Env{{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}});
    CHECK(e.source == "pmi");
    CHECK_FALSE(e.distributed());
  }
}

TEST_CASE("dist env: MVAPICH2") {
  Env env{{"MV2_COMM_WORLD_RANK", "6"},       {"MV2_COMM_WORLD_SIZE", "8"}, {"MV2_COMM_WORLD_LOCAL_RANK", "2"},
          {"MV2_COMM_WORLD_LOCAL_SIZE", "4"}, {"MASTER_ADDR", "head"}};
  auto d = bk::detect_dist_env(env);
  CHECK(d.source == "mvapich2");
  CHECK(d.rank == 6);
  CHECK(d.world_size == 8);
  CHECK(d.local_rank == 2);
  CHECK(d.local_world_size == 4);
  CHECK(d.master_addr == "head");
  CHECK(d.master_port == 29500);

  SUBCASE("under Hydra it also has PMI's variables; agreeing, they are one launch") {
    env["PMI_RANK"] = "6";
    env["PMI_SIZE"] = "8";
    CHECK(bk::detect_dist_env(env).rank == 6);
  }
  SUBCASE("MASTER_ADDR is required") {
    env.erase("MASTER_ADDR");
    CHECK(error_of(env).find("MVAPICH2 (8 processes) but MASTER_ADDR is not set") != std::string::npos);
  }
}

TEST_CASE("dist env: precedence, innermost launcher first") {
  // torchrun (or --nproc-per-node) started by srun or mpirun with one task per node: torchrun's variables win.
  Env env{{"RANK", "9"},           {"WORLD_SIZE", "16"},          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "8"}, {"MASTER_ADDR", "n0"},         {"SLURM_PROCID", "1"},
          {"SLURM_NTASKS", "2"},     {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
          {"PMI_RANK", "1"},         {"PMI_SIZE", "2"},             {"MV2_COMM_WORLD_RANK", "1"},
          {"MV2_COMM_WORLD_SIZE", "2"}};
  CHECK(bk::detect_dist_env(env).source == "torchrun");
  CHECK(bk::detect_dist_env(env).rank == 9);
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) env.erase(name);
  CHECK(bk::detect_dist_env(env).source == "openmpi");
  env.erase("OMPI_COMM_WORLD_RANK");
  env.erase("OMPI_COMM_WORLD_SIZE");
  CHECK(bk::detect_dist_env(env).source == "pmi");
  env.erase("PMI_RANK");
  env.erase("PMI_SIZE");
  CHECK(bk::detect_dist_env(env).source == "mvapich2");
  env.erase("MV2_COMM_WORLD_RANK");
  env.erase("MV2_COMM_WORLD_SIZE");
  CHECK(bk::detect_dist_env(env).source == "slurm");
  CHECK(bk::detect_dist_env(env).rank == 1);
}

TEST_CASE("dist env: a launch whose rank cannot be read is refused, naming the variables") {
  CHECK(error_of({{"PMI_SIZE", "4"}}) ==
        "started by Intel MPI / MPICH (PMI_SIZE=4) but PMI_RANK is not set: cannot tell this process's rank");
  CHECK(error_of({{"MPI_LOCALNRANKS", "2"}}) ==
        "started by Intel MPI / MPICH (MPI_LOCALNRANKS=2) but PMI_RANK is not set: cannot tell this process's rank");
  CHECK(error_of({{"PMI_LOCAL_SIZE", "8"}, {"PMI_SIZE", "16"}}) ==
        "started by Intel MPI / MPICH (PMI_SIZE=16 PMI_LOCAL_SIZE=8) but PMI_RANK is not set: cannot tell this "
        "process's rank");
  CHECK(error_of({{"OMPI_COMM_WORLD_SIZE", "2"}}) ==
        "started by Open MPI (OMPI_COMM_WORLD_SIZE=2) but OMPI_COMM_WORLD_RANK is not set: cannot tell this "
        "process's rank");
  CHECK(error_of({{"MV2_COMM_WORLD_SIZE", "3"}, {"MV2_COMM_WORLD_LOCAL_SIZE", "3"}}) ==
        "started by MVAPICH2 (MV2_COMM_WORLD_SIZE=3 MV2_COMM_WORLD_LOCAL_SIZE=3) but MV2_COMM_WORLD_RANK is not "
        "set: cannot tell this process's rank");
  // Even when another launcher's variables are readable: the process was started by one that says "several".
  CHECK(error_of({{"PMI_SIZE", "4"}, {"RANK", "0"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "h"}})
            .find("PMI_RANK is not set") != std::string::npos);
  // A size of one without a rank is one process.
  CHECK(bk::detect_dist_env(Env{{"PMI_SIZE", "1"}}).source == "single");
  CHECK(bk::detect_dist_env(Env{{"OMPI_COMM_WORLD_SIZE", "1"}}).source == "single");
  CHECK(error_of({{"PMI_SIZE", "four"}}).find("PMI_SIZE='four'") != std::string::npos);
}

TEST_CASE("dist env: launchers that disagree are refused, naming both") {
  CHECK(error_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"PMI_RANK", "3"},
                  {"PMI_SIZE", "4"}, {"MASTER_ADDR", "h"}}) ==
        "launchers disagree on this process's rank: Open MPI OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 but "
        "Intel MPI / MPICH PMI_RANK=3 PMI_SIZE=4; unset the stale variables");
  CHECK(error_of({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"MV2_COMM_WORLD_RANK", "1"}, {"MV2_COMM_WORLD_SIZE", "2"},
                  {"MASTER_ADDR", "h"}})
            .find("MVAPICH2 MV2_COMM_WORLD_RANK=1 MV2_COMM_WORLD_SIZE=2") != std::string::npos);
  // A stale RANK=0 WORLD_SIZE=1 inside a launch of several processes.
  CHECK(error_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                  {"MASTER_ADDR", "h"}}) ==
        "launchers disagree on this process's rank: torchrun RANK=0 WORLD_SIZE=1 but Open MPI "
        "OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4; unset the stale variables");
  CHECK(error_of({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"},
                  {"SLURM_JOB_NODELIST", "n1"}})
            .find("Intel MPI / MPICH PMI_RANK=0 PMI_SIZE=1 but Slurm SLURM_PROCID=3 SLURM_NTASKS=4") !=
        std::string::npos);
  // Agreeing launchers are fine: srun --mpi=pmi2 sets PMI_RANK/PMI_SIZE beside SLURM_PROCID.
  auto d = bk::detect_dist_env(Env{{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"SLURM_PROCID", "3"},
                                   {"SLURM_NTASKS", "4"}, {"MASTER_ADDR", "h"}});
  CHECK(d.source == "pmi");
  CHECK(d.rank == 3);
}

TEST_CASE("Slurm node lists") {
  using V = std::vector<std::string>;
  CHECK(bk::expand_slurm_nodelist("node[01-04,07]") == V{"node01", "node02", "node03", "node04", "node07"});
  CHECK(bk::expand_slurm_nodelist("login") == V{"login"});
  CHECK(bk::expand_slurm_nodelist("a1,b[2-3],c") == V{"a1", "b2", "b3", "c"});
  CHECK(bk::expand_slurm_nodelist("n[8-11]") == V{"n8", "n9", "n10", "n11"});
  CHECK(bk::expand_slurm_nodelist("n[098-101]") == V{"n098", "n099", "n100", "n101"});
  CHECK(bk::expand_slurm_nodelist("rack[1-2]-n[3,5]") == V{"rack1-n3", "rack1-n5", "rack2-n3", "rack2-n5"});
  CHECK(bk::expand_slurm_nodelist("gpu-[1-2].cluster") == V{"gpu-1.cluster", "gpu-2.cluster"});
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("node[01-04"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("node01]"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("node[4-2]"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("node[a-b]"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("a,,b"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_nodelist("n[[1]]"), bk::Error);
}

TEST_CASE("Slurm tasks per node") {
  using V = std::vector<int>;
  CHECK(bk::expand_slurm_tasks_per_node("2(x3),1") == V{2, 2, 2, 1});
  CHECK(bk::expand_slurm_tasks_per_node("8") == V{8});
  CHECK(bk::expand_slurm_tasks_per_node("4(x2)") == V{4, 4});
  CHECK_THROWS_AS(bk::expand_slurm_tasks_per_node("2(3)"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_tasks_per_node("x"), bk::Error);
  CHECK_THROWS_AS(bk::expand_slurm_tasks_per_node("0"), bk::Error);
}

TEST_CASE("bucket plans") {
  auto all_once = [](const std::vector<std::vector<size_t>>& buckets, size_t n) {
    std::vector<size_t> seen;
    for (const auto& b : buckets) seen.insert(seen.end(), b.begin(), b.end());
    std::sort(seen.begin(), seen.end());
    std::vector<size_t> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = i;
    return seen == want;
  };
  using B = std::vector<std::vector<size_t>>;
  std::vector<bk::BucketSlot> same{{40, 0}, {40, 0}, {40, 0}, {100, 0}, {10, 0}};
  CHECK(bk::plan_buckets(same, 100) == B{{0, 1}, {2}, {3}, {4}});
  CHECK(bk::plan_buckets(same, 1000) == B{{0, 1, 2, 3, 4}});
  CHECK(bk::plan_buckets(same, 0) == B{{0}, {1}, {2}, {3}, {4}});
  CHECK(bk::plan_buckets({}, 100).empty());

  // Two dtypes never share a bucket; each keeps its own open bucket.
  std::vector<bk::BucketSlot> mixed{{60, 1}, {8, 2}, {60, 1}, {8, 2}, {8, 1}};
  auto plan = bk::plan_buckets(mixed, 100);
  CHECK(plan == B{{0}, {1, 3}, {2, 4}});
  CHECK(all_once(plan, mixed.size()));
  for (const auto& bucket : plan)
    for (size_t i : bucket) CHECK(mixed[i].kind == mixed[bucket[0]].kind);

  // A larger plan: every index once, no bucket over the limit unless it holds a single tensor.
  std::vector<bk::BucketSlot> many;
  for (size_t i = 0; i < 200; ++i) many.push_back({(i * 7919) % 1000 + 1, static_cast<int>(i % 3)});
  auto big = bk::plan_buckets(many, 2500);
  CHECK(all_once(big, many.size()));
  for (const auto& bucket : big) {
    size_t bytes = 0;
    for (size_t i : bucket) bytes += many[i].bytes;
    CHECK((bucket.size() == 1 || bytes <= 2500));
  }
}

TEST_CASE("launcher: its own flags are removed from the workers' arguments") {
  std::vector<std::string> args{"bert-train", "--nproc-per-node", "4", "--steps=3", "--numa-bind",
                                "--master-port=1234", "in.h5", "--nnodes", "2", "--node-rank=1", "--master-addr",
                                "h", "--dist-timeout", "7", "--", "--nproc-per-node"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  CHECK(bk::strip_launcher_args(static_cast<int>(argv.size()), argv.data()) ==
        std::vector<std::string>{"--steps=3", "in.h5", "--dist-timeout", "7", "--", "--nproc-per-node"});
}

TEST_CASE("launcher: CPU lists and NUMA placement") {
  CHECK(bk::parse_cpu_list("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(bk::parse_cpu_list("5") == std::vector<int>{5});
  CHECK(bk::parse_cpu_list("").empty());
  CHECK_THROWS_AS(bk::parse_cpu_list("3-1"), bk::Error);
  CHECK_THROWS_AS(bk::parse_cpu_list("0-x"), bk::Error);
  // 8 workers on 2 sockets: 0-3 on node 0, 4-7 on node 1 (how GPUs usually hang off the sockets).
  std::vector<int> placed;
  for (int r = 0; r < 8; ++r) placed.push_back(bk::numa_node_for_worker(r, 8, 2));
  CHECK(placed == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(bk::numa_node_for_worker(2, 3, 4) == 2);
  CHECK(bk::numa_node_for_worker(5, 8, 1) == 0);
}
