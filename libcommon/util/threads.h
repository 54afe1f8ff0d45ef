// How many threads a --threads N gets, and starting them so that a failure is one line, never a hang.
#pragma once

#include <functional>
#include <thread>
#include <vector>

namespace bk {

// Number of hardware threads (at least 1); what --threads 0 means.
int hardware_threads();

// More than this many threads per core only wait on one another and on memory.
inline constexpr int kThreadsPerCore = 4;

// --threads N as the tools run it: 0 is every core, and N is kept within kThreadsPerCore x the cores (--threads
// 100000 once started 32,444 threads and took every process id of the machine). The output never depends on it.
int worker_threads(int requested);

// Appends `count` threads running `body` to `threads`. When one cannot be started (the process or the machine has
// no thread to give, or no memory), calls `stop`, which must make every thread in `threads` return (those of earlier
// calls too: a pool's workers and its splitter share the vector), joins them all, and fails with a bk::Error saying
// which thread of `what` could not start: the caller is left with no thread running.
void start_threads(std::vector<std::thread>& threads, int count, const std::function<void()>& body,
                   const std::function<void()>& stop, const char* what);

}  // namespace bk
