// CPU seconds (user + system) of the calling thread or of the whole process, from getrusage: what bench helpers
// and bin4's reading thread report so that a projection can tell serial work from work spread over threads.
#pragma once

#include <sys/resource.h>

namespace bk {

// who: RUSAGE_THREAD (the calling thread) or RUSAGE_SELF (every thread of the process, joined ones too).
inline double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace bk
