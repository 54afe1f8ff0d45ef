// MLCommons' training log (`:::MLLOG {...}` lines, as the mlperf-logging package's mllog writes them and its
// compliance checker reads them): what a run writes with --mlperf-log. Rank 0 only. Torch-free.
//
// Each line: :::MLLOG {"namespace": "", "time_ms": MS_SINCE_EPOCH, "event_type": "POINT_IN_TIME" |
// "INTERVAL_START" | "INTERVAL_END", "key": KEY, "value": VALUE, "metadata": {"file": TOOL, "lineno": 0, ...}}
// flushed as it is written, so a killed run leaves every event up to its end.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace bk {

class MlperfLog {
 public:
  // Creates (or truncates) the file; bk::Error naming it if that fails.
  MlperfLog(const std::string& path, std::string tool);
  ~MlperfLog();
  MlperfLog(const MlperfLog&) = delete;
  MlperfLog& operator=(const MlperfLog&) = delete;

  void event(const std::string& key, const nlohmann::json& value = nullptr, const nlohmann::json& metadata = {});
  // time_ms: when the interval began, if not now (milliseconds since the epoch).
  void start(const std::string& key, const nlohmann::json& metadata = {}, int64_t time_ms = -1);
  void end(const std::string& key, const nlohmann::json& metadata = {});

 private:
  void write(const char* type, const std::string& key, const nlohmann::json& value, const nlohmann::json& metadata,
             int64_t time_ms = -1);
  std::string path_, tool_;
  std::FILE* file_ = nullptr;
};

// Milliseconds since the epoch, MLLOG's clock.
int64_t mlperf_now_ms();

// What the MLPerf BERT rules require a run's log to open with, as the run resolved it.
struct MlperfRunHeader {
  std::string benchmark;  // submission_benchmark ("bert")
  std::string platform;   // "8xGPU"
  uint64_t seed = 0;
  int64_t global_batch = 0, accumulation = 1;
  std::string optimizer;
  double learning_rate = 0;  // scaled for the world, as the run uses it
  double epsilon = 0, beta1 = 0, beta2 = 0, weight_decay = 0, poly_power = 0;
  int64_t training_steps = 0, warmup_steps = 0;
  int64_t eval_samples = 0;
  int64_t first_sample = 0;   // samples trained before this run (a resumed run's first block starts there)
  int64_t init_start_ms = 0;  // when the run's setup began
};

// The log's opening: submission fields, the hyperparameters, init start and stop, run start, the first block.
// The run's own events (evaluations, run_stop) follow from the loop.
void write_run_header(MlperfLog& log, const MlperfRunHeader& header);

}  // namespace bk
