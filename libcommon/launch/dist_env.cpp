#include "launch/dist_env.h"

#include "util/error.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>

extern char** environ;

namespace bk {

namespace {

using Env = std::map<std::string, std::string>;

std::optional<std::string> lookup(const Env& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

long long parse_integer(std::string_view text, std::string_view what) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    fail("{}='{}' is not an integer", what, text);
  return value;
}

int env_int(const Env& env, const std::string& name) {
  auto text = lookup(env, name);
  if (!text) fail("environment variable {} is not set", name);
  long long value = parse_integer(*text, "environment variable " + name);
  if (value < 0 || value > 1'000'000'000) fail("environment variable {}={} is out of range", name, value);
  return static_cast<int>(value);
}

int env_int_or(const Env& env, const std::string& name, int fallback) {
  return lookup(env, name) ? env_int(env, name) : fallback;
}

int master_port_or(const Env& env, int fallback) {
  int port = env_int_or(env, "MASTER_PORT", fallback);
  if (port < 1 || port > 65535) fail("environment variable MASTER_PORT={} is not a TCP port", port);
  return port;
}

void check_consistent(const DistEnv& d, const char* rank_var, const char* size_var, const char* local_rank_var,
                      const char* local_size_var) {
  if (d.world_size < 1) fail("{}={}: the world size must be at least 1", size_var, d.world_size);
  if (d.rank >= d.world_size) fail("{}={} is not below {}={}", rank_var, d.rank, size_var, d.world_size);
  if (d.local_world_size < 1 || d.local_world_size > d.world_size)
    fail("{}={} does not fit a world of {}", local_size_var, d.local_world_size, d.world_size);
  if (d.local_rank >= d.local_world_size)
    fail("{}={} is not below {}={}", local_rank_var, d.local_rank, local_size_var, d.local_world_size);
}

// "rack[1-2]-n[3-4]": every bracket group multiplies the names built so far.
void expand_host(std::string_view host, std::vector<std::string>& out, std::string_view whole) {
  std::vector<std::string> names{""};
  size_t pos = 0;
  while (pos < host.size()) {
    size_t open = host.find('[', pos);
    std::string_view literal = host.substr(pos, open == std::string_view::npos ? open : open - pos);
    if (literal.find(']') != std::string_view::npos) fail("Slurm node list '{}': unbalanced ']'", whole);
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    size_t close = host.find(']', open);
    if (close == std::string_view::npos) fail("Slurm node list '{}': unbalanced '['", whole);
    std::string_view inside = host.substr(open + 1, close - open - 1);
    std::vector<std::string> suffixes;
    while (true) {
      size_t comma = inside.find(',');
      std::string_view item = inside.substr(0, comma);
      size_t dash = item.find('-');
      std::string_view lo_text = item.substr(0, dash);
      std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
      std::string what = fmt::format("Slurm node list '{}': range bound", whole);
      long long lo = parse_integer(lo_text, what), hi = parse_integer(hi_text, what);
      if (lo < 0 || hi < lo) fail("Slurm node list '{}': bad range '{}'", whole, item);
      if (hi - lo > 1'000'000) fail("Slurm node list '{}': range '{}' is too large", whole, item);
      for (long long n = lo; n <= hi; ++n) suffixes.push_back(fmt::format("{:0{}}", n, lo_text.size()));
      if (comma == std::string_view::npos) break;
      inside.remove_prefix(comma + 1);
    }
    std::vector<std::string> product;
    product.reserve(names.size() * suffixes.size());
    for (const auto& name : names)
      for (const auto& suffix : suffixes) product.push_back(name + suffix);
    names = std::move(product);
    pos = close + 1;
  }
  for (auto& name : names) out.push_back(std::move(name));
}

// Each reader takes only this process's place (rank, world, local rank) from its launcher's variables and
// checks them; the rendezvous address and port are resolved afterwards, for the launcher that is used only.

std::optional<DistEnv> read_torchrun(const Env& env) {
  bool has_rank = lookup(env, "RANK").has_value(), has_world = lookup(env, "WORLD_SIZE").has_value();
  if (!has_rank && !has_world) return std::nullopt;
  if (!has_rank || !has_world)
    fail("environment variable {} is set but {} is not", has_rank ? "RANK" : "WORLD_SIZE",
         has_rank ? "WORLD_SIZE" : "RANK");
  DistEnv d;
  d.source = "torchrun";
  d.rank = env_int(env, "RANK");
  d.world_size = env_int(env, "WORLD_SIZE");
  // Without the local variables, assume one host (a hand-made single-node launch).
  d.local_rank = env_int_or(env, "LOCAL_RANK", d.rank);
  d.local_world_size = env_int_or(env, "LOCAL_WORLD_SIZE", d.world_size);
  check_consistent(d, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  return d;
}

void rendezvous_torchrun(const Env& env, DistEnv& d) {
  auto addr = lookup(env, "MASTER_ADDR");
  if (!addr && d.world_size > 1) fail("WORLD_SIZE={} but MASTER_ADDR is not set", d.world_size);
  if (addr) d.master_addr = *addr;
  d.master_port = master_port_or(env, kDefaultMasterPort);
}

std::optional<DistEnv> read_slurm(const Env& env) {
  if (!lookup(env, "SLURM_PROCID")) return std::nullopt;
  const char* size_var = lookup(env, "SLURM_NTASKS") ? "SLURM_NTASKS" : "SLURM_NPROCS";
  if (!lookup(env, size_var)) return std::nullopt;  // an allocation, not a task launched by srun
  DistEnv d;
  d.source = "slurm";
  d.rank = env_int(env, "SLURM_PROCID");
  d.world_size = env_int(env, size_var);
  d.local_rank = env_int_or(env, "SLURM_LOCALID", 0);
  const char* local_size_var = "SLURM_NTASKS_PER_NODE";
  if (lookup(env, "SLURM_NTASKS_PER_NODE")) {
    d.local_world_size = env_int(env, "SLURM_NTASKS_PER_NODE");
  } else if (auto tasks = lookup(env, "SLURM_TASKS_PER_NODE")) {
    local_size_var = "SLURM_TASKS_PER_NODE";
    auto counts = expand_slurm_tasks_per_node(*tasks);
    size_t node = static_cast<size_t>(env_int_or(env, "SLURM_NODEID", 0));
    if (node >= counts.size())
      fail("SLURM_NODEID={} but SLURM_TASKS_PER_NODE='{}' lists {} nodes", node, *tasks, counts.size());
    d.local_world_size = counts[node];
  } else {
    d.local_world_size = d.world_size;
  }
  check_consistent(d, "SLURM_PROCID", size_var, "SLURM_LOCALID", local_size_var);
  return d;
}

void rendezvous_slurm(const Env& env, DistEnv& d) {
  if (auto addr = lookup(env, "MASTER_ADDR")) {
    d.master_addr = *addr;
  } else {
    std::optional<std::string> nodelist;
    for (const char* name : {"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST"})
      if ((nodelist = lookup(env, name))) break;
    if (!nodelist && d.world_size > 1)
      fail("Slurm task {} of {}: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set", d.rank, d.world_size);
    if (nodelist) {
      auto hosts = expand_slurm_nodelist(*nodelist);
      if (hosts.empty()) fail("Slurm node list '{}' names no host", *nodelist);
      d.master_addr = hosts.front();
    }
  }
  int fallback_port = kDefaultMasterPort;
  if (auto job = lookup(env, "SLURM_JOB_ID"))
    fallback_port = slurm_default_port(parse_integer(*job, "environment variable SLURM_JOB_ID"));
  d.master_port = master_port_or(env, fallback_port);
}

// An MPI launcher's variables: the rank and size of MPI_COMM_WORLD, and pairs of (local rank, local size)
// variables, the first pair present wins.
struct MpiVars {
  const char* source;  // DistEnv::source
  const char* name;    // for messages
  const char* rank;
  const char* size;
  std::vector<std::pair<const char*, const char*>> local;
  const char* pass_env_hint;  // how to give every rank MASTER_ADDR with this launcher
};

const std::vector<MpiVars>& mpi_launchers() {
  static const std::vector<MpiVars> launchers{
      {"openmpi", "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}},
       "mpirun -x MASTER_ADDR=$(hostname) -x MASTER_PORT=29500 ..."},
      // Hydra (mpiexec/mpirun of Intel MPI and MPICH) sets MPI_LOCALRANKID/MPI_LOCALNRANKS; Cray's PALS and
      // some Hydra versions set PMI_LOCAL_RANK/PMI_LOCAL_SIZE instead.
      {"pmi", "Intel MPI / MPICH", "PMI_RANK", "PMI_SIZE",
       {{"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}, {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"}},
       "mpirun -genv MASTER_ADDR $(hostname) -genv MASTER_PORT 29500 ..."},
      {"mvapich2", "MVAPICH2", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
       {{"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"}},
       "mpirun_rsh -np N HOSTS MASTER_ADDR=FIRST_HOST MASTER_PORT=29500 bert-train ..."},
  };
  return launchers;
}

std::optional<DistEnv> read_mpi(const Env& env, const MpiVars& v) {
  if (!lookup(env, v.rank)) {
    // A launch of several processes whose rank cannot be read: refuse, rather than train N separate jobs.
    std::vector<std::string> seen;
    bool several = false;
    std::vector<const char*> sizes{v.size};
    for (const auto& [local_rank, local_size] : v.local) sizes.push_back(local_size);
    for (const char* name : sizes)
      if (auto text = lookup(env, name)) {
        seen.push_back(fmt::format("{}={}", name, *text));
        if (env_int(env, name) > 1) several = true;
      }
    if (several)
      fail("started by {} ({}) but {} is not set: cannot tell this process's rank", v.name, fmt::join(seen, " "),
           v.rank);
    return std::nullopt;
  }
  DistEnv d;
  d.source = v.source;
  d.rank = env_int(env, v.rank);
  d.world_size = env_int(env, v.size);
  const char* local_rank_var = v.local.front().first;
  const char* local_size_var = v.local.front().second;
  auto pair = std::find_if(v.local.begin(), v.local.end(), [&](const auto& p) {
    return lookup(env, p.first) || lookup(env, p.second);
  });
  if (pair != v.local.end()) {
    local_rank_var = pair->first;
    local_size_var = pair->second;
    d.local_rank = env_int_or(env, local_rank_var, 0);
    d.local_world_size = env_int_or(env, local_size_var, d.world_size);
  } else {
    // No local variables: assume one host, as for torchrun (the GPU is local rank modulo the device count).
    d.local_rank = d.rank;
    d.local_world_size = d.world_size;
  }
  check_consistent(d, v.rank, v.size, local_rank_var, local_size_var);
  return d;
}

void rendezvous_mpi(const Env& env, DistEnv& d, const MpiVars& v) {
  auto addr = lookup(env, "MASTER_ADDR");
  if (!addr && d.world_size > 1)
    fail("started by {} ({} processes) but MASTER_ADDR is not set: pass the first host's address, e.g. {}", v.name,
         d.world_size, v.pass_env_hint);
  if (addr) d.master_addr = *addr;
  d.master_port = master_port_or(env, kDefaultMasterPort);
}

// "Slurm SLURM_PROCID=3 SLURM_NTASKS=8": what a launcher said, for messages.
std::string describe(const Env& env, const DistEnv& d) {
  auto show = [&](std::initializer_list<const char*> names) {
    std::string out;
    for (const char* name : names)
      if (auto text = lookup(env, name)) out += fmt::format(" {}={}", name, *text);
    return out;
  };
  if (d.source == "torchrun") return "torchrun" + show({"RANK", "WORLD_SIZE"});
  if (d.source == "slurm") return "Slurm" + show({"SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS"});
  for (const auto& v : mpi_launchers())
    if (d.source == v.source) return v.name + show({v.rank, v.size});
  return d.source;
}

}  // namespace

std::vector<std::string> expand_slurm_nodelist(std::string_view nodelist) {
  std::vector<std::string> hosts;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= nodelist.size(); ++i) {
    char c = i < nodelist.size() ? nodelist[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0 || depth > 1) fail("Slurm node list '{}': unbalanced brackets", nodelist);
    if (c == ',' && depth == 0) {
      std::string_view host = nodelist.substr(start, i - start);
      if (host.empty()) fail("Slurm node list '{}': empty host name", nodelist);
      expand_host(host, hosts, nodelist);
      start = i + 1;
    }
  }
  if (depth != 0) fail("Slurm node list '{}': unbalanced '['", nodelist);
  return hosts;
}

std::vector<int> expand_slurm_tasks_per_node(std::string_view tasks) {
  std::vector<int> counts;
  while (!tasks.empty()) {
    size_t comma = tasks.find(',');
    std::string_view item = tasks.substr(0, comma);
    long long repeat = 1;
    size_t paren = item.find('(');
    if (paren != std::string_view::npos) {
      if (item.size() < paren + 4 || item.substr(paren, 2) != "(x" || item.back() != ')')
        fail("SLURM_TASKS_PER_NODE='{}': bad item '{}'", tasks, item);
      repeat = parse_integer(item.substr(paren + 2, item.size() - paren - 3), "SLURM_TASKS_PER_NODE repeat");
      item = item.substr(0, paren);
    }
    long long count = parse_integer(item, "SLURM_TASKS_PER_NODE count");
    if (count < 1 || repeat < 1 || repeat > 1'000'000) fail("SLURM_TASKS_PER_NODE='{}': bad item", tasks);
    counts.insert(counts.end(), static_cast<size_t>(repeat), static_cast<int>(count));
    if (comma == std::string_view::npos) break;
    tasks.remove_prefix(comma + 1);
  }
  return counts;
}

int slurm_default_port(long long job_id) { return 12000 + static_cast<int>((job_id < 0 ? -job_id : job_id) % 20000); }

DistEnv detect_dist_env(const std::map<std::string, std::string>& env) {
  // Launchers nest: torchrun (or --nproc-per-node) inside srun or mpirun with one task per node, mpirun inside a
  // Slurm allocation (whose batch step or proxy step leaves SLURM_PROCID behind). The innermost one started
  // this process and knows its rank, so it wins: torchrun, then the MPI launchers, then Slurm.
  std::vector<DistEnv> found;
  if (auto d = read_torchrun(env)) found.push_back(*d);
  std::vector<DistEnv> mpi;
  for (const auto& v : mpi_launchers())
    if (auto d = read_mpi(env, v)) mpi.push_back(*d);
  // MPI launchers are peers (MVAPICH2 under Hydra sets both its own and PMI's variables): they must agree.
  for (size_t i = 1; i < mpi.size(); ++i)
    if (mpi[i].rank != mpi[0].rank || mpi[i].world_size != mpi[0].world_size)
      fail("launchers disagree on this process's rank: {} but {}; unset the stale variables",
           describe(env, mpi[0]), describe(env, mpi[i]));
  found.insert(found.end(), mpi.begin(), mpi.end());
  if (auto d = read_slurm(env)) found.push_back(*d);
  if (found.empty()) return DistEnv{};  // one process: MASTER_ADDR/MASTER_PORT are never used

  DistEnv d = found.front();
  // A single process inside a launch of several is stale variables (an exported RANK=0 WORLD_SIZE=1), or a
  // wrapper that dropped them: refuse rather than run as one of N separate single-process jobs.
  for (size_t i = 1; i < found.size(); ++i)
    if (d.world_size == 1 && found[i].world_size > 1)
      fail("launchers disagree on this process's rank: {} but {}; unset the stale variables", describe(env, d),
           describe(env, found[i]));

  if (d.source == "torchrun") {
    rendezvous_torchrun(env, d);
  } else if (d.source == "slurm") {
    rendezvous_slurm(env, d);
  } else {
    for (const auto& v : mpi_launchers())
      if (d.source == v.source) rendezvous_mpi(env, d, v);
  }
  return d;
}

std::map<std::string, std::string> environment_map() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

DistEnv detect_dist_env() { return detect_dist_env(environment_map()); }

}  // namespace bk
