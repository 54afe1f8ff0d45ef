#include "util/threads.h"

#include "util/error.h"

#include <algorithm>
#include <system_error>

namespace bk {

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int worker_threads(int requested) {
  const int cap = kThreadsPerCore * hardware_threads();
  return requested <= 0 ? hardware_threads() : std::min(requested, cap);
}

void start_threads(std::vector<std::thread>& threads, int count, const std::function<void()>& body,
                   const std::function<void()>& stop, const char* what) {
  const size_t before = threads.size();
  auto stop_all = [&] {
    stop();
    for (std::thread& t : threads) t.join();
    threads.clear();
  };
  try {
    threads.reserve(before + static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) threads.emplace_back(body);
  } catch (const std::system_error& e) {
    const size_t started = threads.size() - before;
    stop_all();
    fail("cannot start {} thread {} of {}: {}; try a lower --threads", what, started + 1, count, e.code().message());
  } catch (...) {
    stop_all();
    throw;
  }
}

}  // namespace bk
