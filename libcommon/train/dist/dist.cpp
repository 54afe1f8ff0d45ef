#include "train/dist/dist.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Logging.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/cuda.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>

namespace bk {

at::Tensor flatten_tensors(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const auto& t : tensors) views.push_back(t.reshape({-1}));
  return at::cat(views);
}

void unflatten_into(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  int64_t offset = 0;
  for (const auto& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

namespace {

// ------------------------------------------------------------------------------------------------ one process
class SingleDist final : public Dist {
 public:
  SingleDist(DistEnv env, std::chrono::seconds timeout) : Dist(std::move(env), timeout) {}
  std::string backend() const override { return "single"; }
  void broadcast_parameters(std::vector<at::Tensor>&) override {}
  void allreduce_gradients(std::vector<at::Tensor>&, bool, size_t, at::ScalarType) override {}
  double allreduce_scalar(double value, ReduceOp) override { return value; }
  void allreduce(at::Tensor&, ReduceOp) override {}
  void barrier() override {}
  std::unique_ptr<Pending> start_allreduce(at::Tensor&) override {
    struct Done final : Pending {
      void wait() override {}
    };
    return std::make_unique<Done>();
  }
};

// ------------------------------------------------------------------------------------------------ c10d group
// c10::Error's what() carries a C++ backtrace; users need the first line of the reason only.
std::string reason_of(const std::exception& e) {
  std::string text;
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    text = c10_error->what_without_backtrace();
  else
    text = e.what();
  auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> needles) {
  for (const char* needle : needles)
    if (text.find(needle) != std::string::npos) return true;
  return false;
}

bool is_loopback(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "::1";
}

// Raises c10's log threshold to FATAL for a scope, unless the user chose a level with TORCH_CPP_LOG_LEVEL.
struct QuietC10Log {
  int saved = FLAGS_caffe2_log_level;
  bool active = std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr;
  QuietC10Log() {
    if (active) FLAGS_caffe2_log_level = 3;
  }
  ~QuietC10Log() {
    if (active) FLAGS_caffe2_log_level = saved;
  }
};

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return c10d::ReduceOp(c10d::ReduceOp::MAX);
    case ReduceOp::Min: return c10d::ReduceOp(c10d::ReduceOp::MIN);
    case ReduceOp::Sum: break;
  }
  return c10d::ReduceOp(c10d::ReduceOp::SUM);
}

class GroupDist final : public Dist {
 public:
  GroupDist(DistEnv env, at::Device device, std::chrono::seconds timeout)
      : Dist(std::move(env), timeout), device_(device) {
    connect();
  }

  std::string backend() const override { return backend_name_; }

  void broadcast_parameters(std::vector<at::Tensor>& params) override {
    at::NoGradGuard no_grad;
    for (const auto& bucket : plan(params, kDefaultBucketBytes)) {
      std::vector<at::Tensor> members;
      for (size_t i : bucket) members.push_back(params[i]);
      std::vector<at::Tensor> flat{flatten_tensors(members)};
      c10d::BroadcastOptions opts;
      opts.rootRank = 0;
      finish(run([&] { return group_->broadcast(flat, opts); }, "broadcast"), "broadcast");
      if (rank() != 0) unflatten_into(flat[0], members);
    }
  }

  void allreduce_gradients(std::vector<at::Tensor>& grads, bool average, size_t bucket_bytes,
                           at::ScalarType wire) override {
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined()) fail("allreduce_gradients: gradient {} of {} is undefined", i, grads.size());
    struct InFlight {
      std::vector<at::Tensor> members;
      at::Tensor flat;
      bool in_place;
      std::unique_ptr<Pending> pending;
    };
    // Start every bucket, then wait: Gloo's worker threads overlap the transfers with the flattening.
    std::vector<InFlight> flights;
    for (const auto& bucket : plan(grads, bucket_bytes)) {
      InFlight f;
      for (size_t i : bucket) f.members.push_back(grads[i]);
      const bool convert = wire != at::ScalarType::Undefined && wire != f.members[0].scalar_type();
      f.in_place = !convert && f.members.size() == 1 && f.members[0].is_contiguous();
      f.flat = f.in_place ? f.members[0].view({-1}) : flatten_tensors(f.members);
      if (convert) f.flat = f.flat.to(wire);
      f.pending = start_allreduce(f.flat);
      flights.push_back(std::move(f));
    }
    for (auto& f : flights) {
      f.pending->wait();
      if (average) f.flat.div_(world());
      if (!f.in_place) unflatten_into(f.flat, f.members);
    }
  }

  double allreduce_scalar(double value, ReduceOp op) override {
    auto t = at::full({1}, value, at::TensorOptions().dtype(at::kDouble).device(device_));
    allreduce(t, op);
    return t.item<double>();
  }

  void allreduce(at::Tensor& tensor, ReduceOp op) override {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions opts;
    opts.reduceOp = to_c10d(op);
    finish(run([&] { return group_->allreduce(tensors, opts); }, "all-reduce"), "all-reduce");
  }

  // An all-reduce of one number rather than the backend's barrier: NCCL's barrier has to guess a device.
  void barrier() override { allreduce_scalar(0.0, ReduceOp::Sum); }

  std::unique_ptr<Pending> start_allreduce(at::Tensor& tensor) override {
    struct InFlight final : Pending {
      const GroupDist* owner;
      c10::intrusive_ptr<c10d::Work> work;
      void wait() override { owner->finish(work, "gradient all-reduce"); }
    };
    auto pending = std::make_unique<InFlight>();
    pending->owner = this;
    std::vector<at::Tensor> tensors{tensor};
    pending->work = run([&] { return group_->allreduce(tensors); }, "gradient all-reduce");
    return pending;
  }

 private:
  std::vector<std::vector<size_t>> plan(const std::vector<at::Tensor>& tensors, size_t bucket_bytes) const {
    std::vector<BucketSlot> slots;
    slots.reserve(tensors.size());
    for (const auto& t : tensors)
      slots.push_back({static_cast<size_t>(t.numel()) * t.element_size(), static_cast<int>(t.scalar_type())});
    return plan_buckets(slots, bucket_bytes);
  }

  template <typename Start>
  c10::intrusive_ptr<c10d::Work> run(Start&& start, const char* what) const {
    try {
      return start();
    } catch (const std::exception& e) {
      lost(what, e);
    }
  }

  void finish(const c10::intrusive_ptr<c10d::Work>& work, const char* what) const {
    try {
      work->wait();
    } catch (const std::exception& e) {
      lost(what, e);
    }
  }

  [[noreturn]] void lost(const char* what, const std::exception& e) const {
    std::string reason = reason_of(e);
    std::string meaning = "a peer process failed";
    if (contains_any(reason, {"imed out", "imeout"}))
      meaning = fmt::format("no answer from a peer within the {} s timeout", timeout_.count());
    else if (contains_any(reason, {"closed", "reset", "Broken pipe", "EOF", "refused"}))
      // With two ranks the lost peer is the other one; beyond that Gloo's message only has an address.
      meaning = world() == 2 ? fmt::format("lost the connection to rank {} (it exited or was killed)", 1 - rank())
                             : std::string("lost the connection to a peer process (it exited or was killed)");
    fail("{} failed on rank {} of {} ({}): {}: {}", what, rank(), world(), backend_name_, meaning, reason);
  }

  void connect() {
    const auto& env = env_;
    c10d::TCPStoreOptions store_opts;
    store_opts.port = static_cast<uint16_t>(env.master_port);
    store_opts.isServer = env.rank == 0;
    store_opts.numWorkers = env.world_size;
    store_opts.waitWorkers = true;
    store_opts.timeout = timeout_;
    try {
      QuietC10Log quiet;  // the client logs every retry with a backtrace; the failure is reported below
      auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_opts);
      store_ = c10::make_intrusive<c10d::PrefixStore>("bertkit", tcp);
    } catch (const std::exception& e) {
      fail("rank {} of {} ({}): rendezvous at {}:{} failed within {} s: {}{}", env.rank, env.world_size,
           env.source, env.master_addr, env.master_port, timeout_.count(), reason_of(e),
           env.rank == 0 ? "" : " (is rank 0 running, and is the address reachable from here?)");
    }
    try {
      if (device_.is_cuda()) {
        connect_nccl();
      } else {
        auto opts = c10d::ProcessGroupGloo::Options::create(timeout_);
        opts->devices.push_back(gloo_device(env.master_addr));
        opts->threads = 2;
        group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, env.rank, env.world_size, opts);
        backend_name_ = "gloo";
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail("rank {} of {}: cannot build the {} process group through {}:{} within {} s: {}", env.rank,
           env.world_size, device_.is_cuda() ? "NCCL" : "Gloo", env.master_addr, env.master_port, timeout_.count(),
           reason_of(e));
    }
  }

  // GLOO_SOCKET_IFNAME picks the interface, as in PyTorch. With a loopback master every rank is on this host, so
  // bind there too (no hostname lookup, which fails in some containers); else the address this host's name has.
  static std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    if (is_loopback(master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname(master_addr);
    return c10d::ProcessGroupGloo::createDefaultDevice();
  }

  void connect_nccl() {
#ifdef USE_C10D_NCCL
    if (!torch::cuda::is_available()) fail("a CUDA device was asked for but CUDA is not available");
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    // NCCL's watchdog enforces this: a collective stuck longer aborts the communicator and ends the process
    // with its own report, since a hung kernel cannot be interrupted from here.
    opts->timeout = timeout_;
    group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, env_.rank, env_.world_size, opts);
    backend_name_ = "nccl";
#else
    fail("this build has no NCCL support; run on the CPU (Gloo)");
#endif
  }

  at::Device device_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> group_;
  std::string backend_name_ = "gloo";
};

}  // namespace

std::unique_ptr<Dist> Dist::create(const DistEnv& env, at::Device device, std::chrono::seconds timeout) {
  if (timeout.count() <= 0) usage_fail("the distributed timeout must be positive, got {} s", timeout.count());
  if (env.world_size <= 1) return std::make_unique<SingleDist>(env, timeout);
  return std::make_unique<GroupDist>(env, device, timeout);
}

}  // namespace bk
