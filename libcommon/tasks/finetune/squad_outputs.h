// The files bert-finetune predict writes for SQuAD (torch-free): run_squad.py's predictions.json,
// nbest_predictions.json and (v2.0) null_odds.json in OUTPUT_DIR, and --save-logits. All or nothing: every name is
// checked before the model runs, and the files are put in place together (io/staged_output.h).
#pragma once

#include <string>
#include <vector>

namespace bk {

struct SquadLogits;
struct SquadPredictions;

struct SquadOutputs {
  std::string output_dir;
  std::string save_logits;  // empty: none; "-": stdout
  bool v2 = false;          // null_odds.json too
  bool force = false;
  // What the run reads (the predict file, the vocabulary, the checkpoint): never written over or into.
  std::vector<std::string> inputs;

  std::vector<std::string> prediction_paths() const;
};

// Before the model runs: bk::UsageError when an output is one of the inputs or --save-logits names a prediction
// file; bk::Error when a file exists and --force is not given.
void check_squad_outputs(const SquadOutputs& outputs);

// The logits (when asked for) and the prediction files, put in place together.
void write_squad_outputs(const SquadOutputs& outputs, const SquadPredictions& predictions, const SquadLogits& logits);

}  // namespace bk
