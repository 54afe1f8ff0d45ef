// What a run is about to do, resolved: the model, the data, the processes and batches, the schedule, where it
// starts. bert-train and bert-finetune print it as their start banner (stderr, rank 0) and, with --dry-run, as the
// whole output (stdout); log.jsonl opens with it as a header record (train_log.h).
#pragma once

#include <string>
#include <vector>

namespace bk {

struct LoopRun;

// Where the run starts: a fresh model, --init-checkpoint, or the checkpoint --resume continues.
struct RunStart {
  std::string checkpoint;  // empty: the task's initial weights
  int64_t step = 0;        // > 0: resumed
};

// The banner's lines, without the tool's name.
std::vector<std::string> run_plan_lines(const LoopRun& run, const RunStart& start);

// The header record's JSON object: tool, version, arguments, the resolved loop settings, the model config, the
// data and the processes.
std::string run_header_json(const LoopRun& run, const RunStart& start);

}  // namespace bk
