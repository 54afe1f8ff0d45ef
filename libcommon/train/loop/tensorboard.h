// TensorBoard event files, written natively (no protobuf library, no TensorFlow): scalars that TensorBoard's
// own reader (EventAccumulator) shows as charts.
//
// An event file is a TFRecord file (tfrecord/tfrecord.h framing and CRCs) named
// events.out.tfevents.<unix time>.<hostname> in the log directory. Each record is one serialized
// tensorboard.Event (tensorboard/compat/proto/event.proto), encoded here by hand:
//   Event:         wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5 (Summary)
//   Summary:       value = 1 (repeated Value)
//   Summary.Value: tag = 1 (string), simple_value = 2 (float)
// The first record is Event{wall_time, file_version: "brain.Event:2"}; then one Event{wall_time, step,
// summary{value{tag, simple_value}}} per scalar, as TensorFlow's and PyTorch's writers do. Records are
// written with one write(2) per flush, so a reader polling the file (TensorBoard does) never sees half a step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bk {

using Scalars = std::vector<std::pair<std::string, double>>;

// The serialized Event protos (record payloads, before TFRecord framing).
std::string encode_file_version_event(double wall_time);
std::string encode_scalar_event(double wall_time, int64_t step, const std::string& tag, float value);

class TensorBoardWriter {
 public:
  // Creates log_dir (with parents) if needed and a new event file in it; writes the file_version event.
  // If a file of that name exists (two writers started in the same second), ".<pid>" and a counter are
  // appended, so nothing is ever overwritten. bk::Error names the directory or file on failure.
  explicit TensorBoardWriter(const std::string& log_dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // One event per scalar at `step`, then flush().
  void add_scalars(int64_t step, const Scalars& scalars);
  // Buffers one scalar event; written at the next flush().
  void add_scalar(const std::string& tag, double value, int64_t step);
  void flush();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::string pending_;
};

// Seconds since the Unix epoch, with sub-second precision (the events' wall_time).
double unix_time_now();

}  // namespace bk
