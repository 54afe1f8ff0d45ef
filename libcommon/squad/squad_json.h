// Reading the fields of a SQuAD JSON file with errors that say where: "FILE: data[3].paragraphs[1].qas[0]:
// missing "id"". Shared by the examples' reader (squad_examples.h) and the scorers' (squad_scoring.h).
#pragma once

#include "util/error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace bk::squad_json {

using json = nlohmann::json;

// Where a field sits in the file, for messages: data[3].paragraphs[1].qas[0].
struct Place {
  const std::string& file;
  std::string path;
  Place at(std::string_view key) const { return {file, fmt::format("{}.{}", path, key)}; }
  Place at(size_t index) const { return {file, fmt::format("{}[{}]", path, index)}; }
};

inline const json& member(const json& object, const char* key, const Place& place) {
  if (!object.is_object()) fail("{}: {}: expected a JSON object, found {}", place.file, place.path, object.type_name());
  auto it = object.find(key);
  if (it == object.end()) fail("{}: {}: missing \"{}\"", place.file, place.path, key);
  return *it;
}

inline const json& array_member(const json& object, const char* key, const Place& place) {
  const json& value = member(object, key, place);
  if (!value.is_array()) fail("{}: {}.{}: expected an array, found {}", place.file, place.path, key, value.type_name());
  return value;
}

inline const std::string& string_member(const json& object, const char* key, const Place& place) {
  const json& value = member(object, key, place);
  if (!value.is_string()) fail("{}: {}.{}: expected a string, found {}", place.file, place.path, key, value.type_name());
  return value.get_ref<const std::string&>();
}

}  // namespace bk::squad_json
