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
  SUBCASE("wins over Open MPI") {
    env["OMPI_COMM_WORLD_RANK"] = "0";
    env["OMPI_COMM_WORLD_SIZE"] = "2";
    CHECK(bk::detect_dist_env(env).source == "slurm");
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
