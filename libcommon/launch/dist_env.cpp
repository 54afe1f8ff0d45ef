#include "launch/dist_env.h"

#include "util/error.h"

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

std::optional<DistEnv> from_torchrun(const Env& env) {
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
  auto addr = lookup(env, "MASTER_ADDR");
  if (!addr && d.world_size > 1) fail("WORLD_SIZE={} but MASTER_ADDR is not set", d.world_size);
  if (addr) d.master_addr = *addr;
  d.master_port = master_port_or(env, kDefaultMasterPort);
  return d;
}

std::optional<DistEnv> from_slurm(const Env& env) {
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
  return d;
}

std::optional<DistEnv> from_openmpi(const Env& env) {
  if (!lookup(env, "OMPI_COMM_WORLD_RANK")) return std::nullopt;
  DistEnv d;
  d.source = "openmpi";
  d.rank = env_int(env, "OMPI_COMM_WORLD_RANK");
  d.world_size = env_int(env, "OMPI_COMM_WORLD_SIZE");
  d.local_rank = env_int_or(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
  d.local_world_size = env_int_or(env, "OMPI_COMM_WORLD_LOCAL_SIZE", d.world_size);
  check_consistent(d, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                   "OMPI_COMM_WORLD_LOCAL_SIZE");
  auto addr = lookup(env, "MASTER_ADDR");
  if (!addr && d.world_size > 1)
    fail("started by Open MPI ({} processes) but MASTER_ADDR is not set: pass the first host's address, "
         "e.g. mpirun -x MASTER_ADDR=$(hostname) -x MASTER_PORT=29500 ...",
         d.world_size);
  if (addr) d.master_addr = *addr;
  d.master_port = master_port_or(env, kDefaultMasterPort);
  return d;
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
  if (auto d = from_torchrun(env)) return *d;
  if (auto d = from_slurm(env)) return *d;
  if (auto d = from_openmpi(env)) return *d;
  return DistEnv{};  // one process: MASTER_ADDR/MASTER_PORT are never used
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
