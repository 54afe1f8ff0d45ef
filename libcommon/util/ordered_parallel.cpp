#include "util/ordered_parallel.h"

namespace bk {

ThreadPool::ThreadPool(int threads) {
  auto stop = [this] {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    ready_.notify_all();
  };
  start_threads(workers_, worker_threads(threads), [this] {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }, stop, "worker");
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
}

}  // namespace bk
