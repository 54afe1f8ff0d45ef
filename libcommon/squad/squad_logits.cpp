#include "squad/squad_logits.h"

#include "io/input.h"
#include "io/output.h"
#include "util/error.h"
#include "util/json_read.h"
#include "util/py_json.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace bk {
namespace {

using json = nlohmann::json;

// Appends a list of numbers to `values`; returns how many.
size_t read_numbers(const json& line, const char* key, std::vector<double>& values, const std::string& where) {
  const auto it = line.find(key);
  if (it == line.end()) fail("{}: missing \"{}\"", where, key);
  if (!it->is_array()) fail("{}: \"{}\" must be a list of numbers, found {}", where, key, it->type_name());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& x = (*it)[i];
    if (!x.is_number()) fail("{}: {}[{}] must be a number, found {}", where, key, i, x.type_name());
    values.push_back(x.get<double>());
  }
  return it->size();
}

template <typename T>
void append_list(std::string& line, int64_t unique_id, const char* name, std::span<const T> values) {
  line += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = static_cast<double>(values[i]);  // Python's float(x) of a float32: exact
    if (!std::isfinite(x))
      fail("feature {}: {}[{}] is {}; a logits file holds finite numbers only", unique_id, name, i, py_float_repr(x));
    if (i > 0) line += ", ";
    append_py_float_repr(line, x);
  }
  line += ']';
}

template <typename T>
void write_line(Output& out, std::string& line, int64_t unique_id, std::span<const T> start, std::span<const T> end) {
  if (start.size() != end.size())
    fail("feature {}: {} start logits but {} end logits", unique_id, start.size(), end.size());
  // The line json.dumps writes for {"unique_id": ..., "start_logits": [...], "end_logits": [...]}.
  line = "{\"unique_id\": " + std::to_string(unique_id) + ", \"start_logits\": ";
  append_list(line, unique_id, "start_logits", start);
  line += ", \"end_logits\": ";
  append_list(line, unique_id, "end_logits", end);
  line += "}\n";
  out.write(line);
}

}  // namespace

void SquadLogits::add(int64_t unique_id, std::span<const double> start_logits, std::span<const double> end_logits) {
  if (unique_ids.empty() && positions == 0) positions = start_logits.size();
  if (start_logits.size() != positions || end_logits.size() != positions)
    fail("feature {}: {} start and {} end logits, expected {} each", unique_id, start_logits.size(),
         end_logits.size(), positions);
  unique_ids.push_back(unique_id);
  start.insert(start.end(), start_logits.begin(), start_logits.end());
  end.insert(end.end(), end_logits.begin(), end_logits.end());
}

SquadLogits read_squad_logits(const std::string& path) {
  Input input(path);
  LineReader reader(input);
  SquadLogits out;
  out.name = input.name();
  std::string_view text;
  while (reader.next(text)) {
    const std::string where = fmt::format("{}:{}", input.name(), reader.line_number());
    if (text.empty()) fail("{}: a blank line (one JSON object per feature expected)", where);
    const json line = parse_json(text, where);
    if (!line.is_object()) fail("{}: expected a JSON object, found {}", where, line.type_name());
    const auto id = line.find("unique_id");
    if (id == line.end()) fail("{}: missing \"unique_id\"", where);
    if (!id->is_number_integer()) fail("{}: \"unique_id\" must be an integer, found {}", where, id->type_name());
    const size_t starts = read_numbers(line, "start_logits", out.start, where);
    const size_t ends = read_numbers(line, "end_logits", out.end, where);
    if (starts != ends) fail("{}: {} start logits but {} end logits", where, starts, ends);
    if (out.unique_ids.empty()) out.positions = starts;
    else if (starts != out.positions)
      fail("{}: {} logits per list, but the lines before have {}", where, starts, out.positions);
    out.unique_ids.push_back(id->get<int64_t>());
  }
  return out;
}

void SquadLogitsWriter::write(int64_t unique_id, std::span<const float> start_logits, std::span<const float> end_logits) {
  write_line(out_, line_, unique_id, start_logits, end_logits);
}

void SquadLogitsWriter::write(int64_t unique_id, std::span<const double> start_logits,
                              std::span<const double> end_logits) {
  write_line(out_, line_, unique_id, start_logits, end_logits);
}

}  // namespace bk
