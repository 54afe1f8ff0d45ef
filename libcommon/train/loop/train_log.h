// The training log of the loop (loop.h): what each logging step reports, in three forms.
//   - the log file (--log-file): one JSON object per line, {"step": N, "time": unix seconds, then the trainer's
//     fields in the order given (loss, the task's loss terms and metrics, lr, grad_norm, seq_per_s,
//     tokens_per_s, loss_scale, ..., mfu)}; each line is written and flushed at once, so a crash loses nothing already logged, and
//     a resumed run appends to the same file. Integral values are written as integers, NaN and inf as null.
//   - stderr: a human line ("TOOL: step 100/7038, eta 1h02m: loss 7.123 lr 0.0006 ...") for the first logging
//     step, the last, and in between at most one every human_every_seconds (a file or a terminal alike), unless
//     quiet; evaluations always;
//   - a progress bar on stderr between those lines, only when stderr is a terminal (bk::Progress style).
// And, with a TensorBoard directory, every field as a scalar "train/<name>", and evaluation results
// ("eval_<name>") as "eval/<name>" (train/loop/tensorboard.h).
#pragma once

#include "train/loop/tensorboard.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bk {

struct TrainLogOptions {
  std::string log_file;          // JSON lines; "" = none
  std::string tensorboard_dir;   // "" = none
  bool append = false;           // resume: append to an existing log file
  int64_t resumed_step = -1;     // append: the step resumed from; the lines of later steps (a stopped run's past
                                 // its last checkpoint) are dropped first, so that each step has one line
  bool overwrite = false;        // without append: replace an existing log file (else it is an error)
  bool quiet = false;            // no human lines, no progress bar
  int64_t total_steps = 0;       // for "step N/M" and the bar; 0 = unknown
  std::FILE* human = nullptr;    // where human lines go; nullptr = stderr (the bar only ever goes to a TTY stderr)
  double human_every_seconds = 0;  // at most one human line per this many seconds; 0 = every logging step
  std::vector<std::string> human_hidden;  // fields left out of the human line (fp16's on other runs)
};

class TrainLog {
 public:
  explicit TrainLog(TrainLogOptions options);
  ~TrainLog();
  TrainLog(const TrainLog&) = delete;
  TrainLog& operator=(const TrainLog&) = delete;

  // One logging step: the JSON line (flushed), the human line when due (always unless `periodic`: an
  // evaluation's), the TensorBoard scalars (flushed).
  void log(int64_t step, const Scalars& fields, bool periodic = true);
  // Called every step: redraws the progress bar at most four times a second (TTY stderr only).
  void progress(int64_t step);
  // A line for events such as checkpoints ("saved checkpoint ckpt/step_1000"): to the human stream unless
  // quiet, and to the log file as {"step": N, "time": .., "event": text}.
  void note(int64_t step, const std::string& text);
  // The run's header record, the first line a run (or a resumed run) writes: {"step": N, "time": .., "header":
  // {...}} with the tool's version, its arguments and the resolved configuration. Not shown on stderr.
  void header(int64_t step, const std::string& header_json);
  // Clears the progress bar.
  void finish();

  const TrainLogOptions& options() const { return options_; }

 private:
  void clear_bar();
  void draw_bar(int64_t step);
  void write_json_line(const std::string& line);
  bool human_line_due(int64_t step, bool periodic);
  std::string eta_text(int64_t step) const;

  TrainLogOptions options_;
  std::FILE* file_ = nullptr;
  std::FILE* human_ = nullptr;
  bool tty_ = false, bar_drawn_ = false;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::string last_summary_;  // "loss 7.123" for the bar
  int64_t first_step_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
  int64_t first_logged_ = -1, last_human_step_ = -1;  // for the human lines' cadence and ETA
  std::chrono::steady_clock::time_point first_logged_time_, last_human_;
};

// A value as the JSON log writes it: integers without a fraction, "null" for NaN and infinities, otherwise
// the shortest text that reads back to the same double.
std::string json_number(double value);

}  // namespace bk
