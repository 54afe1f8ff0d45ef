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

}  // namespace bk
