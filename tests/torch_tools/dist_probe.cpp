// dist_probe: exercises the distributed layer (train/dist/, launch/) for tests/cli/dist.sh.
//
// Every rank prints "rank R: ..." lines with the values it holds after each collective; the test computes the
// expected values itself from the rule that made the inputs:
//   tensor k, element i on rank r = (r + 1) * (k + 1) + i        (all-reduce inputs)
//   parameter k, element i on rank r = 100 * r + 10 * k + i      (broadcast inputs)
//   overlap: d loss / d w_k[i] = (r + 1) * (i + 1) per micro-batch, two micro-batches accumulated
// Failure drills: --exit-rank R --exit-step S makes rank R exit with status 3 at step S without a word to the
// others; --hang-rank makes it stop answering (sleeps) instead.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "train/dist/dist.h"
#include "launch/dist_env.h"
#include "train/dist/dist_sync.h"
#include "launch/launcher.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace {

struct Config {
  int timeout = 300;
  int steps = 3;
  int exit_rank = -1, hang_rank = -1, fail_step = 0;
  long long bucket_bytes = 16;
  int bench_mib = 0;
};


void say(int rank, const std::string& text) {
  fmt::print("rank {}: {}\n", rank, text);
  std::fflush(stdout);
}

// --bench-mib N: N MiB of float gradients in 200 tensors, all-reduced in 25 MiB buckets and then one tensor per
// message; prints the milliseconds of each (median of 5) so the gain of bucketing is measured in one run.
void bench(bk::Dist& dist, int mib) {
  int64_t total = static_cast<int64_t>(mib) << 18;  // floats
  std::vector<at::Tensor> grads;
  for (int i = 0; i < 200; ++i) grads.push_back(at::ones({total / 200}));
  for (size_t bucket : {bk::kDefaultBucketBytes, size_t{0}}) {
    std::vector<double> times;
    for (int rep = 0; rep < 5; ++rep) {
      dist.barrier();
      auto start = std::chrono::steady_clock::now();
      dist.allreduce_gradients(grads, /*average=*/true, bucket);
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    say(dist.rank(), fmt::format("bench {} MiB, {}: {:.1f} ms", mib,
                                 bucket ? "25 MiB buckets" : "one tensor per all-reduce", times[2]));
  }
}

std::string values(const at::Tensor& t) {
  auto flat = t.to(at::kDouble).contiguous().view({-1});
  std::string out;
  for (int64_t i = 0; i < flat.numel(); ++i) out += fmt::format("{}{:g}", i ? " " : "", flat[i].item<double>());
  return out;
}

// The all-reduce inputs: small tensors of mixed shapes and dtypes, and one larger one.
std::vector<at::Tensor> reduce_inputs(int rank) {
  std::vector<std::vector<int64_t>> shapes = {{3}, {2, 3}, {5}, {1000}};
  std::vector<at::ScalarType> types = {at::kFloat, at::kFloat, at::kDouble, at::kFloat};
  std::vector<at::Tensor> out;
  for (size_t k = 0; k < shapes.size(); ++k) {
    auto t = at::arange(c10::multiply_integers(shapes[k]), at::TensorOptions().dtype(types[k]))
                 .add_((rank + 1) * static_cast<double>(k + 1))
                 .view(shapes[k]);
    out.push_back(t);
  }
  return out;
}

void report_reduced(int rank, const char* label, const std::vector<at::Tensor>& ts) {
  for (size_t k = 0; k + 1 < ts.size(); ++k) say(rank, fmt::format("{} t{}: {}", label, k, values(ts[k])));
  say(rank, fmt::format("{} t{} sum: {:.1f}", label, ts.size() - 1, ts.back().sum().item<double>()));
}

void overlap_check(bk::Dist& dist, const Config& cfg) {
  int r = dist.rank();
  std::vector<at::Tensor> weights;
  for (int64_t n : {4, 6, 5}) weights.push_back(torch::zeros({n}, at::TensorOptions().requires_grad(true)));
  bk::GradientSynchronizer sync(dist, weights, /*average=*/true, static_cast<size_t>(cfg.bucket_bytes));
  for (int micro = 0; micro < 2; ++micro) {
    sync.prepare(/*sync=*/micro == 1);
    at::Tensor loss = at::zeros({});
    for (auto& w : weights) loss = loss + (w * at::arange(1, w.numel() + 1, at::kFloat) * (r + 1)).sum();
    torch::autograd::backward({loss});
    sync.finish();
  }
  for (size_t k = 0; k < weights.size(); ++k) say(r, fmt::format("overlap w{}: {}", k, values(weights[k].grad())));
  say(r, fmt::format("overlap buckets: {} started in backward: {}", sync.bucket_count(),
                     sync.buckets_started_in_backward()));
}

int probe(const Config& cfg) {
  bk::DistEnv env = bk::detect_dist_env();
  auto dist = bk::Dist::create(env, at::Device(at::kCPU), std::chrono::seconds(cfg.timeout));
  int r = dist->rank();
  say(r, fmt::format("env source={} rank={} world={} local={}/{} backend={}", env.source, env.rank, env.world_size,
                     env.local_rank, env.local_world_size, dist->backend()));

  auto sums = reduce_inputs(r);
  dist->allreduce_gradients(sums, /*average=*/false, static_cast<size_t>(cfg.bucket_bytes));
  report_reduced(r, "sum", sums);
  auto means = reduce_inputs(r);
  dist->allreduce_gradients(means, /*average=*/true);  // default 25 MiB buckets: one per dtype
  report_reduced(r, "mean", means);

  std::vector<at::Tensor> params;
  for (int k = 0; k < 3; ++k) params.push_back(at::arange(4, at::kFloat).add_(100.0 * r + 10.0 * k));
  dist->broadcast_parameters(params);
  for (int k = 0; k < 3; ++k) say(r, fmt::format("broadcast p{}: {}", k, values(params[k])));

  say(r, fmt::format("scalar sum={:g} max={:g} min={:g}", dist->allreduce_scalar(r + 1.0),
                     dist->allreduce_scalar(r + 1.0, bk::ReduceOp::Max),
                     dist->allreduce_scalar(r + 1.0, bk::ReduceOp::Min)));
  overlap_check(*dist, cfg);
  if (cfg.bench_mib > 0) bench(*dist, cfg.bench_mib);

  for (int step = 1; step <= cfg.steps; ++step) {
    if (step == cfg.fail_step && r == cfg.exit_rank) {
      say(r, fmt::format("exiting at step {}", step));
      std::fflush(stderr);
      _exit(3);  // like a crash: no goodbye to the peers
    }
    if (step == cfg.fail_step && r == cfg.hang_rank) {
      say(r, fmt::format("hanging at step {} pid {}", step, getpid()));
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::vector<at::Tensor> grads{at::ones({1000}), at::full({10}, static_cast<double>(r), at::kDouble)};
    dist->allreduce_gradients(grads, /*average=*/false, static_cast<size_t>(cfg.bucket_bytes));
  }
  dist->barrier();
  say(r, fmt::format("done {} steps", cfg.steps));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("dist_probe", argc, argv, [](int argc, char** argv) {
    Config cfg;
    bk::LaunchOptions launch;
    bk::Options opts("dist_probe", "[options]", "Check the distributed layer: collectives with known inputs.");
    bk::add_launcher_options(opts, launch);
    opts.add()
      ("steps", bk::po::value<int>(&cfg.steps)->default_value(3), "extra all-reduce rounds")
      ("bucket-bytes", bk::po::value<long long>(&cfg.bucket_bytes)->default_value(16), "bucket size in bytes")
      ("exit-rank", bk::po::value<int>(&cfg.exit_rank)->default_value(-1), "this rank exits at --fail-step")
      ("hang-rank", bk::po::value<int>(&cfg.hang_rank)->default_value(-1), "this rank stops at --fail-step")
      ("fail-step", bk::po::value<int>(&cfg.fail_step)->default_value(0), "step of the failure drill")
      ("bench-mib", bk::po::value<int>(&cfg.bench_mib)->default_value(0), "time all-reduces of this many MiB");
    if (!opts.parse(argc, argv)) return 0;
    if (launch.launch()) return bk::run_local_workers(launch, argc, argv);
    cfg.timeout = launch.dist_timeout_seconds;
    return probe(cfg);
  });
}
