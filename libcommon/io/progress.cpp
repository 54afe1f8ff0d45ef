#include "io/progress.h"

#include "util/tool_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace bk {

std::string human_bytes(uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000 * 1000) return fmt::format("{:.1f} kB", bytes / 1e3);
  if (bytes < 1000ull * 1000 * 1000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.2f} GB", bytes / 1e9);
}

std::string clock_text(double seconds) {
  const uint64_t s = seconds > 0 && std::isfinite(seconds) ? static_cast<uint64_t>(std::llround(seconds)) : 0;
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string progress_text(const std::string& stage, uint64_t done, uint64_t total, const std::string& unit,
                          double seconds, const std::string& what) {
  const bool bytes = unit.empty();
  auto amount = [&](uint64_t n) { return bytes ? human_bytes(n) : fmt::format("{}", n); };
  const double rate = seconds > 0 ? done / seconds : 0;
  const std::string rate_text = bytes        ? human_bytes(static_cast<uint64_t>(rate)) + "/s"
                                : rate < 100 ? fmt::format("{:.1f} {}/s", rate, unit)
                                             : fmt::format("{:.0f} {}/s", rate, unit);
  std::string line = stage;
  auto append = [&line](const std::string& part) {
    if (part.empty()) return;
    if (!line.empty()) line += ' ';
    line += part;
  };
  if (total > 0) {
    const uint64_t shown = std::min(done, total);
    append(fmt::format("{}% {}/{}{}", shown * 100 / total, amount(shown), amount(total), bytes ? "" : " " + unit));
    append(rate_text);
    // The time left at the stage's mean rate so far; none before anything is done.
    append(done > 0 && rate > 0 ? "ETA " + clock_text(static_cast<double>(total - shown) / rate) : "ETA -:--");
    if (!what.empty()) line += ", " + what;
    return line;
  }
  // No total: the tool's counts first, then the amount and its rate, as before totals existed; a stage that has
  // counted nothing yet ("making instances") shows only its label and counts.
  append(what);
  if (done == 0) return line;
  if (!line.empty()) line += ", ";
  line += fmt::format("{}{} ({})", amount(done), bytes ? "" : " " + unit, rate_text);
  return line;
}

Progress::Progress(bool quiet)
    : quiet_(quiet),
      tty_(!quiet && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_(start_),
      stage_start_(start_) {
  if (const char* ms = std::getenv("BERTKIT_PROGRESS_MS"); ms && *ms) {
    char* end = nullptr;
    long value = std::strtol(ms, &end, 10);
    if (end && *end == '\0' && value >= 0) interval_ = std::chrono::milliseconds(value);
  }
}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::stage(std::string label, uint64_t total, std::string unit) {
  stage_ = std::move(label);
  set_total(total, std::move(unit));
  stage_start_ = std::chrono::steady_clock::now();
  last_ = stage_start_ - interval_;  // a new stage is drawn at its first update
}

void Progress::set_total(uint64_t total, std::string unit) {
  total_ = total;
  unit_ = std::move(unit);
}

bool Progress::wants_update() {
  if (!tty_) return false;
  auto now = std::chrono::steady_clock::now();
  return now - last_ >= interval_;
}

void Progress::update(uint64_t done, const std::string& what) {
  if (!wants_update()) return;
  last_ = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(last_ - stage_start_).count();
  const std::string text = progress_text(stage_, done, total_, unit_, s, what);
  std::fprintf(stderr, "\r%s: %s\033[K", tool_name().c_str(), text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish(uint64_t bytes, const std::string& what) {
  clear();
  if (quiet_) return;
  double s = seconds();
  std::fprintf(stderr, "%s: %s, %s in %.2f s (%s/s)\n", tool_name().c_str(), what.c_str(), human_bytes(bytes).c_str(), s,
               human_bytes(static_cast<uint64_t>(s > 0 ? bytes / s : 0)).c_str());
}

}  // namespace bk
