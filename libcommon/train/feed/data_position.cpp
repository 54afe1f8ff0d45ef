#include "train/feed/data_position.h"

#include "util/error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace bk {

std::string DataPosition::to_json() const {
  // The fingerprint is a string: JSON readers that hold numbers as doubles would round a 64-bit value.
  return nlohmann::json{{"epoch", epoch}, {"batch", batch}, {"fingerprint", fmt::format("{:016x}", fingerprint)}}
      .dump();
}

DataPosition DataPosition::from_json(const std::string& text) {
  DataPosition p;
  try {
    auto json = nlohmann::json::parse(text);
    p.epoch = json.at("epoch").get<int64_t>();
    p.batch = json.at("batch").get<int64_t>();
    p.fingerprint = std::stoull(json.at("fingerprint").get<std::string>(), nullptr, 16);
  } catch (const std::exception& e) {
    fail("not a data loader position: {}", e.what());
  }
  return p;
}

}  // namespace bk
