// The training state a checkpoint carries (trainer_state.json): where the run stands and the settings it was
// started with. One type, its keys written once, in to_json() and from_json(). Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace bk {

struct TrainingState {
  int64_t step = 0;          // optimizer steps done (skipped fp16 steps included)
  int64_t micro_batch = 0;   // micro-batches consumed
  int64_t schedule_offset = 0;  // optimizer steps taken before this run's schedule began (--init-optimizer)
  nlohmann::json data_position = nlohmann::json::object();  // the task's (a DataPosition, train/feed/)
  nlohmann::json generators = nlohmann::json::object();     // random-generator states (train/loop/generator_state.h)
  int world_size = 1;
  // The run's settings, for the record.
  uint64_t seed = 0;
  int64_t max_steps = 0, train_batch_size = 0;
  double learning_rate = 0;
  double warmup_proportion = -1;  // -1: not recorded (a state written before it was)
  std::string optimizer, precision;
  // "periodic", "stop" (--stop-after), "interrupted" (SIGINT or SIGTERM), "end" or "target" (an evaluation
  // reached the target).
  std::string saved_because;

  nlohmann::json to_json() const;
  // `where` names the file in errors; a state without step or data position is an error, other keys default.
  static TrainingState from_json(const nlohmann::json& json, const std::string& where);
};

}  // namespace bk
