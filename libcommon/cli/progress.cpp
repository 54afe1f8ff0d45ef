#include "cli/progress.h"

#include "cli/run_tool.h"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace bk {

std::string human_bytes(uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000 * 1000) return fmt::format("{:.1f} kB", bytes / 1e3);
  if (bytes < 1000ull * 1000 * 1000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.2f} GB", bytes / 1e9);
}

Progress::Progress(bool quiet)
    : quiet_(quiet), tty_(!quiet && ::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Progress::wants_update() {
  if (!tty_) return false;
  auto now = std::chrono::steady_clock::now();
  return now - last_ >= std::chrono::milliseconds(250);
}

void Progress::update(uint64_t bytes, const std::string& what) {
  if (!wants_update()) return;
  last_ = std::chrono::steady_clock::now();
  double s = seconds();
  std::fprintf(stderr, "\r%s: %s, %s (%s/s)\033[K", tool_name().c_str(), what.c_str(), human_bytes(bytes).c_str(),
               human_bytes(static_cast<uint64_t>(s > 0 ? bytes / s : 0)).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish(uint64_t bytes, const std::string& what) {
  if (drawn_) std::fputs("\r\033[K", stderr);
  if (quiet_) return;
  double s = seconds();
  std::fprintf(stderr, "%s: %s, %s in %.2f s (%s/s)\n", tool_name().c_str(), what.c_str(), human_bytes(bytes).c_str(), s,
               human_bytes(static_cast<uint64_t>(s > 0 ? bytes / s : 0)).c_str());
}

}  // namespace bk
