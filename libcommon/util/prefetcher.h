// A background thread that builds items (batches) ahead of their consumer, for any task's data loader. Torch-free.
//
//   Prefetcher<Batch> ahead(4, [&](Batch& b) { return producer.next(b); });
//   Batch b;
//   while (ahead.next(b)) ...;   // false: the producer marked an end of epoch
//
// The producer returns true with an item, or false for an end-of-epoch marker (both are queued in order). Up to
// `depth` results wait in the queue; with depth 0 there is no thread and next() calls the producer itself. An
// exception in the producer is rethrown by next() with its original message, and by every next() after it. The
// destructor stops the thread after the item it is building: a producer that may block for long should poll a
// cancel flag its owner sets before destroying the prefetcher.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace bk {

template <typename Item>
class Prefetcher {
 public:
  using Produce = std::function<bool(Item&)>;

  Prefetcher(size_t depth, Produce produce) : depth_(depth), produce_(std::move(produce)) {
    if (depth_ > 0) thread_ = std::thread([this] { run(); });
  }
  ~Prefetcher() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next item (true) or end-of-epoch marker (false), in the producer's order.
  bool next(Item& out) {
    if (failed_) std::rethrow_exception(failed_);
    if (depth_ == 0) {
      try {
        return produce_(out);
      } catch (...) {
        failed_ = std::current_exception();
        throw;
      }
    }
    Slot slot;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty(); });
      slot = std::move(queue_.front());
      queue_.pop_front();
    }
    changed_.notify_all();
    if (slot.error) {
      failed_ = slot.error;
      std::rethrow_exception(failed_);
    }
    if (slot.has_item) out = std::move(slot.item);
    return slot.has_item;
  }

 private:
  struct Slot {
    Item item{};
    bool has_item = false;
    std::exception_ptr error;
  };

  void run() {
    try {
      for (;;) {
        Slot slot;
        slot.has_item = produce_(slot.item);
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || queue_.size() < depth_; });
        if (stop_) return;
        queue_.push_back(std::move(slot));
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!stop_) queue_.push_back({Item{}, false, std::current_exception()});
      changed_.notify_all();
    }
  }

  const size_t depth_;
  Produce produce_;
  std::exception_ptr failed_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> queue_;
  bool stop_ = false;
};

}  // namespace bk
