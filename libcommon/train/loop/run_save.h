// What a run keeps: its checkpoints (weights, optimizer, loss scale, data position, generators, the task's
// description and tokenizer), the best model by evaluation, and with --no-sync-gradients the best worker's weights.
#pragma once

#include <string>

namespace bk {

struct LoopRun;
struct TaskEvaluation;

// Rank 0 writes a checkpoint of the run as it stands; `why` is "periodic", "stop", "end" or "target".
void save_run(LoopRun& run, const std::string& why);
// Rank 0: what an interrupt says from now on: the step, the last checkpoint and how to continue (io/cleanup.h).
void note_where_to_continue(const LoopRun& run);
// Rank 0 writes the model as it stands, with the evaluation's results, to OUTPUT_DIR/best.
void save_best(LoopRun& run, const TaskEvaluation& evaluation);
// With --no-sync-gradients: the weights of the rank with the lowest `final_loss` (the final loss, or minus the final
// evaluation score) end up on every rank.
void keep_best_worker(LoopRun& run, double final_loss);

}  // namespace bk
