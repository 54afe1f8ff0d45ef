#include "train/loop/train_state.h"

#include "util/error.h"
#include "util/json_read.h"

namespace bk {

nlohmann::json TrainingState::to_json() const {
  return {{"step", step},
          {"micro_batch", micro_batch},
          {"schedule_offset", schedule_offset},
          {"data_position", data_position},
          {"generators", generators},
          {"world_size", world_size},
          {"seed", seed},
          {"max_steps", max_steps},
          {"train_batch_size", train_batch_size},
          {"learning_rate", learning_rate},
          {"warmup_proportion", warmup_proportion},
          {"optimizer", optimizer},
          {"precision", precision},
          {"saved_because", saved_because}};
}

TrainingState TrainingState::from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object() || !json.contains("step") || !json.contains("data_position"))
    fail("{}: no step or data position", where);
  TrainingState s;
  try {
    s.step = json.at("step").get<int64_t>();
    s.micro_batch = json.value("micro_batch", int64_t{0});
    s.schedule_offset = json.value("schedule_offset", int64_t{0});
    s.data_position = json.at("data_position");
    s.generators = json.value("generators", nlohmann::json::object());
    s.world_size = json.value("world_size", 1);
    s.seed = json.value("seed", uint64_t{0});
    s.max_steps = json.value("max_steps", int64_t{0});
    s.train_batch_size = json.value("train_batch_size", int64_t{0});
    s.learning_rate = json.value("learning_rate", 0.0);
    s.warmup_proportion = json.value("warmup_proportion", -1.0);
    s.optimizer = json.value("optimizer", std::string());
    s.precision = json.value("precision", std::string());
    s.saved_because = json.value("saved_because", std::string());
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", where, json_error_text(e));
  }
  return s;
}

}  // namespace bk
