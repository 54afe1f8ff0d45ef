#include "train/loop/mlperf_log.h"

#include "util/error.h"

#include <cerrno>
#include <chrono>
#include <cstring>

namespace bk {

MlperfLog::MlperfLog(const std::string& path, std::string tool) : path_(path), tool_(std::move(tool)) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) fail("{}: cannot write the MLPerf log: {}", path, std::strerror(errno));
}

MlperfLog::~MlperfLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void MlperfLog::event(const std::string& key, const nlohmann::json& value, const nlohmann::json& metadata) {
  write("POINT_IN_TIME", key, value, metadata);
}

void MlperfLog::start(const std::string& key, const nlohmann::json& metadata, int64_t time_ms) {
  write("INTERVAL_START", key, nullptr, metadata, time_ms);
}

void MlperfLog::end(const std::string& key, const nlohmann::json& metadata) {
  write("INTERVAL_END", key, nullptr, metadata);
}

int64_t mlperf_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void MlperfLog::write(const char* type, const std::string& key, const nlohmann::json& value,
                      const nlohmann::json& metadata, int64_t time_ms) {
  const int64_t ms = time_ms >= 0 ? time_ms : mlperf_now_ms();
  nlohmann::ordered_json line;
  line["namespace"] = "";
  line["time_ms"] = ms;
  line["event_type"] = type;
  line["key"] = key;
  line["value"] = value;
  nlohmann::ordered_json meta;
  meta["file"] = tool_;
  meta["lineno"] = 0;
  if (metadata.is_object())
    for (const auto& [name, v] : metadata.items()) meta[name] = v;
  line["metadata"] = meta;
  const std::string text = ":::MLLOG " + line.dump() + "\n";
  if (std::fputs(text.c_str(), file_) < 0 || std::fflush(file_) != 0)
    fail("{}: cannot write the MLPerf log: {}", path_, std::strerror(errno));
}

void write_run_header(MlperfLog& m, const MlperfRunHeader& h) {
  m.event("submission_benchmark", h.benchmark);
  m.event("submission_division", "open");
  m.event("submission_org", "bertkit");
  m.event("submission_platform", h.platform);
  m.event("submission_status", "onprem");
  m.event("cache_clear", true);
  m.start("init_start", {}, h.init_start_ms);
  m.event("seed", h.seed);
  m.event("global_batch_size", h.global_batch);
  m.event("gradient_accumulation_steps", h.accumulation);
  m.event("opt_name", h.optimizer);
  m.event("opt_base_learning_rate", h.learning_rate);
  m.event("opt_lamb_epsilon", h.epsilon);
  m.event("opt_lamb_beta_1", h.beta1);
  m.event("opt_lamb_beta_2", h.beta2);
  m.event("opt_lamb_weight_decay_rate", h.weight_decay);
  m.event("opt_lamb_learning_rate_decay_poly_power", h.poly_power);
  m.event("opt_learning_rate_training_steps", h.training_steps);
  m.event("opt_learning_rate_warmup_steps", h.warmup_steps);
  m.event("num_warmup_steps", h.warmup_steps);
  m.event("start_warmup_step", 0);
  m.event("train_samples", h.training_steps * h.global_batch);
  m.event("eval_samples", h.eval_samples);
  m.end("init_stop");
  m.start("run_start");
  m.start("block_start", {{"samples_count", h.first_sample}});
}

}  // namespace bk
