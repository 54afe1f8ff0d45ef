// The SQuAD logits file: what a span model gives each feature, saved so that predictions can be made (and
// remade with other settings) without the model. `bert-finetune predict --save-logits` writes it; the
// prediction step (squad_predictions.h) reads it.
//
// JSON lines, one per feature in feature order (SquadFeatures::features()):
//   {"unique_id": 1000000000, "start_logits": [1.25, -0.5, ...], "end_logits": [...]}
// with max_seq_length numbers in each list, the padding positions included (run_squad.py's RawResult holds
// them too). Each number is a float32 logit written as Python's repr(float(x)), so Python's json reads back the
// very double run_squad.py would compute with, and so do we. The line is what Python's json.dumps writes for
// that dict. Only finite numbers: a model that gives inf or NaN has nothing to predict with.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bk {

class Output;

// Every feature's logits, in file order.
struct SquadLogits {
  std::string name = "<memory>";    // where they came from, for messages
  size_t positions = 0;             // numbers per list (max_seq_length); the same on every line
  std::vector<int64_t> unique_ids;  // per feature
  std::vector<double> start, end;   // feature i: [i * positions, (i + 1) * positions)

  size_t size() const { return unique_ids.size(); }
  std::span<const double> start_logits(size_t i) const { return std::span(start).subspan(i * positions, positions); }
  std::span<const double> end_logits(size_t i) const { return std::span(end).subspan(i * positions, positions); }
  // Appends one feature (both spans as long as `positions`, which the first feature sets if still 0).
  void add(int64_t unique_id, std::span<const double> start_logits, std::span<const double> end_logits);
};

// Reads a logits file ("-" = stdin; gzip and bzip2 are undone). A line that is not such an object, a number
// list of another length, or a blank line is a bk::Error naming the file and the line.
SquadLogits read_squad_logits(const std::string& path);

// Writes the lines, one feature at a time.
class SquadLogitsWriter {
 public:
  explicit SquadLogitsWriter(Output& out) : out_(out) {}
  // bk::Error if a logit is not finite (naming the feature) or the lists differ in length.
  void write(int64_t unique_id, std::span<const float> start_logits, std::span<const float> end_logits);
  void write(int64_t unique_id, std::span<const double> start_logits, std::span<const double> end_logits);

 private:
  Output& out_;
  std::string line_;
};

}  // namespace bk
