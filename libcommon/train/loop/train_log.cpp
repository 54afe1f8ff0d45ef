#include "train/loop/train_log.h"

#include "io/input.h"
#include "io/output.h"
#include "util/error.h"
#include "util/tool_name.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace bk {

namespace {

std::string json_string(const std::string& text) { return nlohmann::json(text).dump(); }

std::string human_number(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.4g}", v);
}

std::string duration_text(double seconds) {
  auto s = static_cast<int64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0)
    return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{}", value);  // fmt's shortest round-trip form
}

namespace {

// Keeps the lines of steps up to `step` (and none that is not a whole JSON line: a killed write's tail).
void drop_lines_after(const std::string& path, int64_t step) {
  if (!std::filesystem::exists(path)) return;
  const std::string text = read_file(path);
  std::string kept;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    if (end == std::string::npos) break;
    const std::string_view line(text.data() + at, end - at);
    const nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
    if (json.is_object() && json.contains("step") && json["step"].is_number_integer() &&
        json["step"].get<int64_t>() <= step)
      kept.append(line).push_back('\n');
    at = end + 1;
  }
  if (kept.size() != text.size()) write_file_atomic(path, kept);
}

}  // namespace

TrainLog::TrainLog(TrainLogOptions options)
    : options_(std::move(options)), start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  human_ = options_.human ? options_.human : stderr;
  tty_ = !options_.quiet && ::isatty(STDERR_FILENO);
  if (!options_.log_file.empty()) {
    const std::string& path = options_.log_file;
    if (!options_.append && !options_.overwrite && std::filesystem::exists(path))
      fail("{}: the log file exists (resume appends to it; --force replaces it)", path);
    if (options_.append && options_.resumed_step >= 0) drop_lines_after(path, options_.resumed_step);
    file_ = std::fopen(path.c_str(), options_.append ? "a" : "w");
    if (!file_) fail("{}: cannot open the log file: {}", path, std::strerror(errno));
  }
  if (!options_.tensorboard_dir.empty()) tensorboard_ = std::make_unique<TensorBoardWriter>(options_.tensorboard_dir);
}

TrainLog::~TrainLog() {
  clear_bar();
  if (file_) std::fclose(file_);
}

void TrainLog::write_json_line(const std::string& line) {
  if (!file_) return;
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
    fail("{}: cannot write the log file: {}", options_.log_file, std::strerror(errno));
}

bool TrainLog::human_line_due(int64_t step, bool periodic) {
  const auto now = std::chrono::steady_clock::now();
  if (first_logged_ < 0) first_logged_ = step, first_logged_time_ = now;
  const bool due = !periodic || options_.human_every_seconds <= 0 || last_human_step_ < 0 ||
                   step == options_.total_steps ||
                   std::chrono::duration<double>(now - last_human_).count() >= options_.human_every_seconds;
  if (due && periodic) last_human_step_ = step, last_human_ = now;
  return due;
}

// ", eta 1h02m" from the pace since the first logging step; "" before there is one.
std::string TrainLog::eta_text(int64_t step) const {
  if (options_.total_steps <= 0 || step <= first_logged_ || step >= options_.total_steps) return "";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_logged_time_).count();
  const double per_step = seconds / static_cast<double>(step - first_logged_);
  return ", eta " + duration_text(per_step * static_cast<double>(options_.total_steps - step));
}

void TrainLog::log(int64_t step, const Scalars& fields, bool periodic) {
  std::string line = fmt::format("{{\"step\":{},\"time\":{:.3f}", step, unix_time_now());
  for (const auto& [name, value] : fields) line += fmt::format(",{}:{}", json_string(name), json_number(value));
  line += "}\n";
  write_json_line(line);

  if (tensorboard_) {
    Scalars scalars;
    scalars.reserve(fields.size());
    // Evaluation results (eval_*) go under eval/, everything else under train/.
    for (const auto& [name, value] : fields)
      scalars.emplace_back(name.starts_with("eval_") ? "eval/" + name.substr(5) : "train/" + name, value);
    tensorboard_->add_scalars(step, scalars);
  }

  last_summary_.clear();
  for (const auto& [name, value] : fields)
    if (name == "loss") last_summary_ = "loss " + human_number(value);
  if (options_.quiet) return;
  if (!human_line_due(step, periodic)) {
    draw_bar(step);
    return;
  }
  std::string text = options_.total_steps > 0 ? fmt::format("step {}/{}", step, options_.total_steps)
                                              : fmt::format("step {}", step);
  if (periodic) text += eta_text(step);
  text += ":";
  const auto& hidden = options_.human_hidden;
  for (const auto& [name, value] : fields)
    if (std::find(hidden.begin(), hidden.end(), name) == hidden.end())
      text += fmt::format(" {} {}", name, human_number(value));
  clear_bar();
  std::fprintf(human_, "%s: %s\n", tool_name().c_str(), text.c_str());
  std::fflush(human_);
  draw_bar(step);
}

void TrainLog::note(int64_t step, const std::string& text) {
  write_json_line(fmt::format("{{\"step\":{},\"time\":{:.3f},\"event\":{}}}\n", step, unix_time_now(),
                              json_string(text)));
  if (options_.quiet) return;
  clear_bar();
  std::fprintf(human_, "%s: %s\n", tool_name().c_str(), text.c_str());
  std::fflush(human_);
}

void TrainLog::header(int64_t step, const std::string& header_json) {
  write_json_line(fmt::format("{{\"step\":{},\"time\":{:.3f},\"header\":{}}}\n", step, unix_time_now(), header_json));
}

void TrainLog::progress(int64_t step) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(250)) return;
  draw_bar(step);
}

void TrainLog::draw_bar(int64_t step) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  if (first_step_ < 0) {
    first_step_ = step;
    start_ = now;
  }
  double seconds = std::chrono::duration<double>(now - start_).count();
  double rate = seconds > 0 ? static_cast<double>(step - first_step_) / seconds : 0;
  std::string text;
  if (options_.total_steps > 0) {
    constexpr int kWidth = 24;
    double done = std::clamp(static_cast<double>(step) / static_cast<double>(options_.total_steps), 0.0, 1.0);
    int filled = static_cast<int>(done * kWidth);
    text = fmt::format("[{}{}] {:.1f}% step {}/{}", std::string(static_cast<size_t>(filled), '#'),
                       std::string(static_cast<size_t>(kWidth - filled), '.'), 100 * done, step,
                       options_.total_steps);
    if (rate > 0) text += ", ETA " + duration_text(static_cast<double>(options_.total_steps - step) / rate);
  } else {
    text = fmt::format("step {}", step);
  }
  if (rate > 0) text += fmt::format(", {:.2f} steps/s", rate);
  if (!last_summary_.empty()) text += ", " + last_summary_;
  std::fprintf(stderr, "\r%s: %s\033[K", tool_name().c_str(), text.c_str());
  std::fflush(stderr);
  bar_drawn_ = true;
}

void TrainLog::clear_bar() {
  if (!bar_drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  bar_drawn_ = false;
}

void TrainLog::finish() { clear_bar(); }

}  // namespace bk
