// Progress and the closing summary line, both on stderr.
//
// The progress line (throttled, rewritten with '\r') appears only when stderr is a terminal and -q is off.
// The summary line ("TOOL: 206 pages, 106 articles, 6.1 MB in 0.41 s (14.8 MB/s)") is printed by finish()
// unless -q, so logs of batch jobs get one line per tool run.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bk {

class Progress {
 public:
  explicit Progress(bool quiet);
  // Called often; draws at most ~4 times a second. `what` is the current counts, e.g. "1234 pages".
  void update(uint64_t bytes, const std::string& what);
  bool wants_update();  // cheap check so callers can skip building `what`
  // Prints the summary: "TOOL: <what>, <bytes> in <seconds> (<rate>)".
  void finish(uint64_t bytes, const std::string& what);
  double seconds() const;

 private:
  bool quiet_, tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

std::string human_bytes(uint64_t bytes);

}  // namespace bk
