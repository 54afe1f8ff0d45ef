#include "launch/launcher.h"

#include "util/error.h"
#include "util/tool_name.h"
#include "launch/dist_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace bk {

namespace {

// Flags the launcher consumes; the workers never see them.
const std::vector<std::string> kValueFlags = {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr",
                                              "--master-port"};
const std::vector<std::string> kSwitchFlags = {"--numa-bind"};

// ------------------------------------------------------------------------------------- signals to the workers
// The handler only reads this table and calls kill(), both async-signal-safe.
constexpr int kMaxWorkers = 1024;
pid_t g_worker_pids[kMaxWorkers];
volatile sig_atomic_t g_worker_count = 0;
volatile sig_atomic_t g_signal = 0;

void forward_signal(int sig) {
  g_signal = sig;
  for (int i = 0; i < g_worker_count; ++i)
    if (g_worker_pids[i] > 0) kill(g_worker_pids[i], sig);
}

struct SignalForwarding {
  struct sigaction old_int {}, old_term {};
  SignalForwarding() {
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR so the loop notices
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

// ------------------------------------------------------------------------------------- settings from the env
std::string getenv_or(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

int env_number(const std::map<std::string, std::string>& env, const char* name, int fallback) {
  std::string text = getenv_or(env, name);
  if (text.empty()) return fallback;
  try {
    size_t used = 0;
    int value = std::stoi(text, &used);
    if (used != text.size() || value < 0) throw std::invalid_argument(name);
    return value;
  } catch (const std::exception&) {
    fail("environment variable {}='{}' is not a non-negative integer", name, text);
  }
}

// A port nobody listens on now. Another process may take it before rank 0 binds it; rare enough for one host.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail("cannot open a socket to find a free port: {}", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    close(fd);
    fail("cannot find a free port: {}", std::strerror(err));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

struct Plan {
  int nnodes = 1, node_rank = 0;
  std::string master_addr;
  int master_port = 0;
};

Plan resolve(const LaunchOptions& launch) {
  auto env = environment_map();
  Plan plan;
  bool slurm = !getenv_or(env, "SLURM_NNODES").empty();
  plan.nnodes = launch.nnodes > 0 ? launch.nnodes
                                  : env_number(env, "NNODES", slurm ? env_number(env, "SLURM_NNODES", 1) : 1);
  plan.node_rank = launch.node_rank >= 0
                       ? launch.node_rank
                       : env_number(env, "NODE_RANK", slurm ? env_number(env, "SLURM_NODEID", 0) : 0);
  if (plan.nnodes < 1) usage_fail("--nnodes must be positive, got {}", plan.nnodes);
  if (plan.node_rank >= plan.nnodes) usage_fail("--node-rank {} is not below --nnodes {}", plan.node_rank, plan.nnodes);
  plan.master_addr = launch.master_addr.empty() ? getenv_or(env, "MASTER_ADDR") : launch.master_addr;
  if (plan.master_addr.empty() && slurm) {
    std::string nodelist = getenv_or(env, "SLURM_JOB_NODELIST");
    if (!nodelist.empty()) plan.master_addr = expand_slurm_nodelist(nodelist).at(0);
  }
  if (plan.master_addr.empty()) {
    if (plan.nnodes > 1) usage_fail("--nnodes {} needs --master-addr (or MASTER_ADDR): node 0's address", plan.nnodes);
    plan.master_addr = "127.0.0.1";
  }
  plan.master_port = launch.master_port > 0 ? launch.master_port : env_number(env, "MASTER_PORT", 0);
  if (plan.master_port == 0) {
    std::string job = getenv_or(env, "SLURM_JOB_ID");
    if (plan.nnodes == 1) plan.master_port = free_port();
    else if (!job.empty()) plan.master_port = slurm_default_port(env_number(env, "SLURM_JOB_ID", 0));
    else plan.master_port = kDefaultMasterPort;
  }
  if (plan.master_port > 65535) usage_fail("--master-port {} is not a TCP port", plan.master_port);
  return plan;
}

// ------------------------------------------------------------------------------------- NUMA
struct NumaNode {
  int id;
  std::vector<int> cpus;
};

std::vector<NumaNode> numa_nodes() {
  std::vector<NumaNode> nodes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 ||
        !std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    std::ifstream in(entry.path() / "cpulist");
    std::string text;
    std::getline(in, text);
    auto cpus = parse_cpu_list(text);
    if (!cpus.empty()) nodes.push_back({std::stoi(name.substr(4)), std::move(cpus)});  // skip memory-only nodes
  }
  std::sort(nodes.begin(), nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Everything a child needs, built before fork so the child only makes system calls.
struct WorkerSpec {
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  bool bind = false;
  cpu_set_t cpus{};
  std::vector<unsigned long> node_mask;
};

[[noreturn]] void exec_worker(const WorkerSpec& spec, char** worker_argv, pid_t launcher) {
  // Die with the launcher, even if it is SIGKILLed.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) _exit(143);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (spec.bind) {
    if (sched_setaffinity(0, sizeof spec.cpus, &spec.cpus) != 0) {
      const char msg[] = "numa-bind: sched_setaffinity failed\n";
      (void)!write(2, msg, sizeof msg - 1);
    }
    constexpr int kMpolBind = 2;  // MPOL_BIND from <numaif.h>, which needs libnuma's headers
    if (syscall(SYS_set_mempolicy, kMpolBind, spec.node_mask.data(), spec.node_mask.size() * 64 + 1) != 0) {
      const char msg[] = "numa-bind: set_mempolicy failed\n";
      (void)!write(2, msg, sizeof msg - 1);
    }
  }
  execve("/proc/self/exe", worker_argv, spec.envp.data());
  const char msg[] = "launcher: cannot execute /proc/self/exe\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(127);
}

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

}  // namespace

void add_launcher_options(Options& options, LaunchOptions& launch) {
  const LaunchOptions d;  // the defaults, written once in LaunchOptions' initialisers
  options.add()
    ("nproc-per-node",
     po::value<int>(&launch.nproc_per_node)->default_value(d.nproc_per_node)->notifier([](int n) {
       if (n < 1 || n > kMaxWorkers) usage_fail("--nproc-per-node must be in [1, {}], got {}", kMaxWorkers, n);
     }),
     "start this many worker processes on this host (data parallel)")
    ("nnodes", po::value<int>(&launch.nnodes)->default_value(d.nnodes),
     "hosts in the job (default: NNODES, SLURM_NNODES, or 1)")
    ("node-rank", po::value<int>(&launch.node_rank)->default_value(d.node_rank),
     "this host's index in the job (default: NODE_RANK, SLURM_NODEID, or 0)")
    ("master-addr", po::value<std::string>(&launch.master_addr),
     "address of node 0's rendezvous (default: MASTER_ADDR, first Slurm host, or 127.0.0.1)")
    ("master-port", po::value<int>(&launch.master_port)->default_value(d.master_port),
     "port of the rendezvous (default: MASTER_PORT, else a free port on one host, else 29500)")
    ("numa-bind", po::bool_switch(&launch.numa_bind), "pin each worker's CPUs and memory to one NUMA node")
    ("dist-timeout",
     po::value<int>(&launch.dist_timeout_seconds)->default_value(d.dist_timeout_seconds)->notifier([](int s) {
       if (s < 1) usage_fail("--dist-timeout must be positive, got {}", s);
     }),
     "seconds to wait for the other processes at the rendezvous and in each collective");
}

std::vector<std::string> strip_launcher_args(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (; i < argc; ++i) out.emplace_back(argv[i]);
      break;
    }
    bool dropped = false;
    for (const auto& flag : kValueFlags) {
      if (arg == flag) {
        ++i;  // and its value
        dropped = true;
      } else if (arg.rfind(flag + "=", 0) == 0) {
        dropped = true;
      }
    }
    for (const auto& flag : kSwitchFlags) dropped = dropped || arg == flag;
    if (!dropped) out.push_back(std::move(arg));
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  size_t pos = 0;
  std::string list = text.substr(0, text.find_last_not_of(" \n\t") + 1);
  while (pos < list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = item.find('-');
    try {
      size_t used = 0;
      int lo = std::stoi(item.substr(0, dash), &used);
      int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
      if (used != (dash == std::string::npos ? item.size() : dash) || lo < 0 || hi < lo) throw std::invalid_argument(item);
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    } catch (const std::exception&) {
      fail("bad CPU list '{}' at '{}'", text, item);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

int numa_node_for_worker(int local_rank, int nproc, int nodes) {
  if (nodes <= 1 || nproc <= 0) return 0;
  return static_cast<int>(static_cast<long long>(local_rank) * nodes / nproc);
}

int bind_self_to_numa(int local_rank, int local_world_size, int preferred_node) {
  const std::vector<NumaNode> nodes = numa_nodes();
  if (nodes.size() <= 1) {
    fmt::print(stderr, "{}: warning: --numa-bind: this host has {} NUMA node with CPUs; worker {} is not pinned\n",
               tool_name(), nodes.size(), local_rank);
    return 0;
  }
  const int count = static_cast<int>(nodes.size());
  int index = numa_node_for_worker(local_rank, local_world_size, count);
  for (int i = 0; i < count; ++i)
    if (nodes[static_cast<size_t>(i)].id == preferred_node) index = i;
  const NumaNode& node = nodes[static_cast<size_t>(index)];
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : node.cpus)
    if (cpu < CPU_SETSIZE) CPU_SET(cpu, &cpus);
  if (sched_setaffinity(0, sizeof cpus, &cpus) != 0) {
    fmt::print(stderr, "{}: warning: --numa-bind: cannot pin worker {} to NUMA node {}: {}\n", tool_name(), local_rank,
               node.id, std::strerror(errno));
    return 0;
  }
  std::vector<unsigned long> mask(static_cast<size_t>(node.id / 64 + 1), 0);
  mask[static_cast<size_t>(node.id / 64)] |= 1UL << (node.id % 64);
  constexpr int kMpolBind = 2;  // MPOL_BIND
  if (syscall(SYS_set_mempolicy, kMpolBind, mask.data(), mask.size() * 64 + 1) != 0)
    fmt::print(stderr, "{}: warning: --numa-bind: worker {}'s memory is not bound to NUMA node {}: {}\n", tool_name(),
               local_rank, node.id, std::strerror(errno));
  int sharing = 0;
  for (int other = 0; other < local_world_size; ++other) sharing += numa_node_for_worker(other, local_world_size, count) == index;
  return std::max(1, static_cast<int>(node.cpus.size()) / std::max(1, sharing));
}

int run_local_workers(const LaunchOptions& launch, int argc, char** argv) {
  int n = launch.nproc_per_node;
  if (n < 1 || n > kMaxWorkers) usage_fail("--nproc-per-node must be in [1, {}], got {}", kMaxWorkers, n);
  Plan plan = resolve(launch);
  int world = plan.nnodes * n;

  std::vector<NumaNode> nodes;
  if (launch.numa_bind) {
    nodes = numa_nodes();
    if (nodes.size() <= 1) {
      fmt::print(stderr, "{}: note: --numa-bind: this host has {} NUMA node; workers are not pinned\n", tool_name(),
                 nodes.size());
      nodes.clear();
    }
  }

  // Arguments: this binary's argv[0] and the rest without the launcher's flags.
  std::vector<std::string> args = strip_launcher_args(argc, argv);
  args.insert(args.begin(), argv[0]);
  std::vector<char*> worker_argv;
  for (auto& a : args) worker_argv.push_back(a.data());
  worker_argv.push_back(nullptr);

  auto base_env = environment_map();
  bool omp_set = base_env.count("OMP_NUM_THREADS") > 0;
  std::vector<WorkerSpec> specs(n);
  for (int local = 0; local < n; ++local) {
    WorkerSpec& spec = specs[local];
    auto env = base_env;
    env["RANK"] = std::to_string(plan.node_rank * n + local);
    env["WORLD_SIZE"] = std::to_string(world);
    env["LOCAL_RANK"] = std::to_string(local);
    env["LOCAL_WORLD_SIZE"] = std::to_string(n);
    env["GROUP_RANK"] = std::to_string(plan.node_rank);
    env["MASTER_ADDR"] = plan.master_addr;
    env["MASTER_PORT"] = std::to_string(plan.master_port);
    int threads = std::max(1, cpus_available() / n);
    if (!nodes.empty()) {
      int node_index = numa_node_for_worker(local, n, static_cast<int>(nodes.size()));
      const NumaNode& node = nodes[node_index];
      spec.bind = true;
      CPU_ZERO(&spec.cpus);
      for (int cpu : node.cpus)
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &spec.cpus);
      spec.node_mask.assign(static_cast<size_t>(node.id / 64 + 1), 0);
      spec.node_mask[node.id / 64] |= 1UL << (node.id % 64);
      int sharing = 0;
      for (int other = 0; other < n; ++other)
        sharing += numa_node_for_worker(other, n, static_cast<int>(nodes.size())) == node_index;
      threads = std::max(1, static_cast<int>(node.cpus.size()) / std::max(1, sharing));
    }
    if (!omp_set) env["OMP_NUM_THREADS"] = std::to_string(threads);
    for (const auto& [key, value] : env) spec.env_strings.push_back(key + "=" + value);
    for (auto& s : spec.env_strings) spec.envp.push_back(s.data());
    spec.envp.push_back(nullptr);
  }

  std::fflush(stdout);
  std::fflush(stderr);
  SignalForwarding forwarding;
  g_signal = 0;
  g_worker_count = 0;
  pid_t self = getpid();
  std::vector<pid_t> pids(n, 0);
  for (int local = 0; local < n; ++local) {
    pid_t pid = fork();
    if (pid < 0) {
      int err = errno;
      forward_signal(SIGTERM);
      g_signal = 0;
      while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
      }
      fail("cannot start worker {}: {}", local, std::strerror(err));
    }
    if (pid == 0) exec_worker(specs[local], worker_argv.data(), self);
    pids[local] = pid;
    g_worker_pids[local] = pid;
    g_worker_count = local + 1;
  }

  using Clock = std::chrono::steady_clock;
  int alive = n, result = 0;
  bool stopping = false, killed = false;
  Clock::time_point deadline{};
  auto stop_all = [&](int sig) {
    for (int i = 0; i < n; ++i)
      if (pids[i] > 0) kill(pids[i], sig);
  };
  while (alive > 0) {
    if (g_signal != 0 && !stopping) {  // the handler has already passed the signal on
      stopping = true;
      deadline = Clock::now() + std::chrono::seconds(launch.grace_seconds);
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      if (stopping && !killed && Clock::now() >= deadline) {
        stop_all(SIGKILL);
        killed = true;
      }
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (pid < 0) break;  // ECHILD: nothing left
    auto it = std::find(pids.begin(), pids.end(), pid);
    if (it == pids.end()) continue;
    int local = static_cast<int>(it - pids.begin());
    *it = -1;
    g_worker_pids[local] = -1;
    --alive;
    int code = status_code(status);
    if (code != 0 && !stopping) {
      fmt::print(stderr, "{}: worker {} (local rank {}, pid {}) {}; stopping the other {} worker{}\n", tool_name(),
                 plan.node_rank * n + local, local, pid, describe_status(status), alive, alive == 1 ? "" : "s");
      result = code;
      stopping = true;
      deadline = Clock::now() + std::chrono::seconds(launch.grace_seconds);
      stop_all(SIGTERM);
    }
  }
  g_worker_count = 0;
  if (g_signal != 0 && result == 0) return 128 + g_signal;
  return result;
}

int run_local_workers(int nproc_per_node, int argc, char** argv) {
  LaunchOptions launch;
  launch.nproc_per_node = nproc_per_node;
  return run_local_workers(launch, argc, argv);
}

}  // namespace bk
