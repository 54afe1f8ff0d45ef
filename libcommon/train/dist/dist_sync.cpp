#include "train/dist/dist_sync.h"

#include "util/error.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <mutex>

namespace bk {

struct GradientSynchronizer::State {
  Dist& dist;
  std::vector<at::Tensor> params;
  bool average;
  std::vector<std::vector<size_t>> buckets;  // parameter indices, in launch order
  std::vector<size_t> bucket_of;             // parameter -> bucket

  std::mutex mutex;
  bool armed = false;
  std::vector<size_t> waiting;      // per bucket: gradients not yet accumulated this step
  std::vector<char> arrived;        // per parameter
  std::vector<at::Tensor> flats;    // per bucket, once started
  std::vector<std::unique_ptr<Dist::Pending>> pendings;
  size_t next_to_start = 0;
  size_t started_in_backward = 0;
  std::exception_ptr error;

  at::ScalarType wire = at::ScalarType::Undefined;
  State(Dist& d, std::vector<at::Tensor> p, bool avg) : dist(d), params(std::move(p)), average(avg) {}

  // The gradient a parameter contributes: zeros if autograd never reached it on this rank.
  at::Tensor grad_of(size_t i) const {
    const at::Tensor& g = params[i].grad();
    return g.defined() ? g : at::zeros_like(params[i]);
  }

  void start(size_t b) {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> grads;
    for (size_t i : buckets[b]) grads.push_back(grad_of(i));
    flats[b] = flatten_tensors(grads);
    if (wire != at::ScalarType::Undefined && wire != flats[b].scalar_type()) flats[b] = flats[b].to(wire);
    pendings[b] = dist.start_allreduce(flats[b]);
  }

  // Starts buckets in order, as far as they are complete. Called with the mutex held.
  void start_ready(bool in_backward) {
    while (next_to_start < buckets.size() && waiting[next_to_start] == 0 && !error) {
      try {
        start(next_to_start);
        if (in_backward) ++started_in_backward;
      } catch (...) {
        error = std::current_exception();  // rethrown by finish(), not inside autograd's engine
      }
      ++next_to_start;
    }
  }

  void on_accumulated(size_t i) {
    std::lock_guard lock(mutex);
    if (!armed || arrived[i]) return;
    arrived[i] = 1;
    --waiting[bucket_of[i]];
    start_ready(true);
  }
};

namespace {

struct AccumulatedHook final : torch::autograd::PostAccumulateGradHook {
  std::weak_ptr<GradientSynchronizer::State> state;
  size_t index;
  AccumulatedHook(std::weak_ptr<GradientSynchronizer::State> s, size_t i) : state(std::move(s)), index(i) {}
  void operator()(const torch::autograd::Variable&) override {
    if (auto s = state.lock()) s->on_accumulated(index);
  }
};

}  // namespace

GradientSynchronizer::GradientSynchronizer(Dist& dist, std::vector<at::Tensor> params, bool average,
                                           size_t bucket_bytes, at::ScalarType wire)
    : state_(std::make_shared<State>(dist, std::move(params), average)) {
  state_->wire = wire;
  if (dist.world() <= 1) return;  // nothing to synchronise: no hooks at all
  auto& s = *state_;
  std::vector<BucketSlot> slots;
  std::vector<size_t> order;  // reverse parameter order, the order gradients tend to become ready
  for (size_t k = s.params.size(); k-- > 0;) {
    const auto& p = s.params[k];
    if (!p.requires_grad()) fail("GradientSynchronizer: parameter {} does not require a gradient", k);
    if (!p.is_leaf()) fail("GradientSynchronizer: parameter {} is not a leaf tensor", k);
    order.push_back(k);
    slots.push_back({static_cast<size_t>(p.numel()) * p.element_size(), static_cast<int>(p.scalar_type())});
  }
  s.buckets = plan_buckets(slots, bucket_bytes);
  s.bucket_of.assign(s.params.size(), 0);
  for (size_t b = 0; b < s.buckets.size(); ++b)
    for (auto& member : s.buckets[b]) {
      member = order[member];
      s.bucket_of[member] = b;
    }
  for (size_t k = 0; k < s.params.size(); ++k)
    torch::autograd::impl::set_post_acc_grad_hooks(s.params[k], std::make_unique<AccumulatedHook>(state_, k));
}

GradientSynchronizer::~GradientSynchronizer() {
  if (state_->dist.world() <= 1) return;
  for (auto& p : state_->params) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

void GradientSynchronizer::prepare(bool sync) {
  auto& s = *state_;
  if (s.dist.world() <= 1) return;
  std::lock_guard lock(s.mutex);
  s.armed = sync;
  if (!sync) return;
  s.waiting.assign(s.buckets.size(), 0);
  for (size_t b = 0; b < s.buckets.size(); ++b) s.waiting[b] = s.buckets[b].size();
  s.arrived.assign(s.params.size(), 0);
  s.flats.assign(s.buckets.size(), at::Tensor());
  s.pendings.clear();
  s.pendings.resize(s.buckets.size());
  s.next_to_start = 0;
  s.started_in_backward = 0;
  s.error = nullptr;
}

void GradientSynchronizer::finish() {
  auto& s = *state_;
  if (s.dist.world() <= 1) return;
  std::lock_guard lock(s.mutex);
  if (!s.armed) return;
  s.armed = false;
  std::fill(s.waiting.begin(), s.waiting.end(), 0);  // whatever did not arrive goes as it is (or zeros)
  s.start_ready(false);
  if (s.error) std::rethrow_exception(s.error);
  at::NoGradGuard no_grad;
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    s.pendings[b]->wait();
    if (s.average) s.flats[b].div_(s.dist.world());
    int64_t offset = 0;
    for (size_t i : s.buckets[b]) {
      at::Tensor& p = s.params[i];
      auto reduced = s.flats[b].narrow(0, offset, p.numel()).view(p.sizes());
      offset += p.numel();
      if (p.grad().defined())
        p.mutable_grad().copy_(reduced);
      else
        p.mutable_grad() = reduced.to(p.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
    }
  }
  s.flats.assign(s.buckets.size(), at::Tensor());
  s.pendings.clear();
}

size_t GradientSynchronizer::bucket_count() const { return state_->buckets.size(); }

size_t GradientSynchronizer::buckets_started_in_backward() const { return state_->started_in_backward; }

}  // namespace bk
