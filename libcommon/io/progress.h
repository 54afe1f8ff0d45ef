// Progress and the closing summary line, both on stderr: the one progress layer every tool uses.
//
// The progress line (throttled to ~4 draws a second, rewritten in place with '\r') appears only when stderr is a
// terminal and -q is off; pipes and logs never see it. The summary line ("TOOL: 206 pages, 106 articles, 6.1 MB
// in 0.41 s (14.8 MB/s)") is printed by finish() unless -q, so logs of batch jobs get one line per tool run.
//
// Without a total the line shows the amount done and its rate:
//   wiki-clean: 1234 pages, 612 articles, 1.2 GB (35.0 MB/s)
// With a total (set_total) it shows the share done, the amount of the total, the rate and the time left:
//   mkpretrain: reading 42% 1.2 GB/2.9 GB 35.0 MB/s ETA 0:48, 51234 documents
//   bert-eval: 42% 420/1000 batches 12.3 batches/s ETA 0:47
// The unit of `done` and `total` is bytes (shown as kB/MB/GB) unless set_total names a count ("batches",
// "tensors", "instances"). A stage ("reading", "pass 1/2") names the step of a job that runs in several; each
// stage has its own total and its own clock, so the rate and ETA are the stage's.
//
// Use, in a loop that may run hours:
//   bk::Progress progress(cfg.quiet);
//   progress.set_total(batches, "batches");                  // 0 = unknown: no percentage, no ETA
//   for (uint64_t b = 0; b < batches; ++b) {
//     ...
//     if (progress.wants_update()) progress.update(b + 1, fmt::format("mlm_accuracy {:.4f}", acc));
//   }
//   progress.finish(bytes, "1000 batches, mlm_accuracy 0.7210");   // clears the line, prints the summary
// update() is cheap when it does not draw; wants_update() lets a caller skip formatting `what` as well.
//
// BERTKIT_PROGRESS_MS (environment) sets the least time between draws in milliseconds (default 250); tests set
// it to 0 so that short runs under a pseudo-terminal draw.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bk {

class Progress {
 public:
  explicit Progress(bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a stage: a label shown before the numbers ("" = none), a new total (as set_total) and a new clock.
  void stage(std::string label, uint64_t total = 0, std::string unit = "");
  // The total that update()'s `done` counts towards. unit "" = bytes, else a plural noun for a count.
  void set_total(uint64_t total, std::string unit = "");
  // Draws the line if stderr is a terminal and the last draw is old enough. `what` is the tool's own counts,
  // e.g. "1234 pages"; `done` is in the unit of the total (bytes when there is none).
  void update(uint64_t done, const std::string& what = "");
  bool wants_update();  // cheap check so callers can skip building `what`
  // Prints the summary: "TOOL: <what>, <bytes> in <seconds> (<rate>)".
  void finish(uint64_t bytes, const std::string& what);
  double seconds() const;

  // Whether a progress line can appear at all (stderr is a terminal and -q is off).
  bool on_terminal() const { return tty_; }

 private:
  void clear();

  bool quiet_, tty_;
  bool drawn_ = false;
  std::chrono::milliseconds interval_{250};
  std::chrono::steady_clock::time_point start_, last_, stage_start_;
  std::string stage_, unit_;
  uint64_t total_ = 0;
};

std::string human_bytes(uint64_t bytes);
// A duration for an ETA: "0:48", "12:05", "3:02:17".
std::string clock_text(double seconds);
// The progress line's text after "TOOL: " (no '\r'), as update() draws it; exposed for the unit tests.
std::string progress_text(const std::string& stage, uint64_t done, uint64_t total, const std::string& unit,
                          double seconds, const std::string& what);

}  // namespace bk
