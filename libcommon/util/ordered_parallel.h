// Order-preserving parallel map: the shape of every --threads option.
//
//   ordered_parallel<Batch, Result>(threads,
//       [&](Batch& b) { return read_next_batch(b); },    // producer, on the calling thread; false = done
//       [&](Batch& b) { return process(b); },            // worker, on a pool thread (must not touch shared state)
//       [&](Result& r) { write(r); });                   // consumer, on the calling thread, in input order
//
// With threads <= 1 everything runs inline. At most `4 * threads` batches are in flight, so memory is bounded
// by the batch size, not the input size. A worker's exception is rethrown on the calling thread when its
// batch's turn to be consumed comes, so errors surface in input order, deterministically.
#pragma once

#include "util/threads.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace bk {

// `threads` workers (as worker_threads() bounds them); bk::Error when they cannot all be started.
class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  void submit(std::function<void()> task);

 private:
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> tasks_;
  std::mutex mutex_;
  std::condition_variable ready_;
  bool stopping_ = false;
};

template <typename Batch, typename Result, typename Produce, typename Work, typename Consume>
void ordered_parallel(int threads, Produce&& produce, Work&& work, Consume&& consume) {
  if (threads <= 1) {
    for (;;) {
      Batch batch;
      if (!produce(batch)) return;
      Result result = work(batch);
      consume(result);
    }
  }
  threads = worker_threads(threads);
  ThreadPool pool(threads);
  std::deque<std::future<Result>> in_flight;
  const size_t window = static_cast<size_t>(threads) * 4;
  auto drain_one = [&] {
    Result result = in_flight.front().get();
    in_flight.pop_front();
    consume(result);
  };
  try {
    for (;;) {
      auto batch = std::make_shared<Batch>();
      if (!produce(*batch)) break;
      auto task = std::make_shared<std::packaged_task<Result()>>([batch, &work] { return work(*batch); });
      in_flight.push_back(task->get_future());
      pool.submit([task] { (*task)(); });
      while (in_flight.size() >= window) drain_one();
    }
    while (!in_flight.empty()) drain_one();
  } catch (...) {
    for (auto& f : in_flight) if (f.valid()) f.wait();  // workers reference `work`; let them finish before unwinding
    throw;
  }
}

}  // namespace bk
