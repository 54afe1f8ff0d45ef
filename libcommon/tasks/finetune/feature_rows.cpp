#include "tasks/finetune/feature_rows.h"

#include "tfrecord/example.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"
#include "util/error.h"

#include <fmt/format.h>

#include <climits>
#include <string_view>

namespace bk {

int64_t FeatureRows::length(size_t row) const {
  int64_t n = 0;
  const auto begin = input_mask.begin() + static_cast<ptrdiff_t>(row * static_cast<size_t>(seq_len));
  for (auto it = begin; it != begin + seq_len; ++it) n += *it != 0;
  return n;
}

namespace {

void append_ints(std::vector<int32_t>& out, const Int64List& values, const std::string& where, std::string_view name) {
  for (int64_t v : values) {
    if (v < INT32_MIN || v > INT32_MAX) fail("{}: {} holds {}, outside the int32 range", where, name, v);
    out.push_back(static_cast<int32_t>(v));
  }
}

}  // namespace

FeatureRows read_feature_records(const std::string& path) {
  Input input(path);
  TFRecordReader reader(input);
  FeatureRows rows;
  Example ex;
  std::string_view record;
  bool spans = false, labels = false, ids = false;
  while (reader.next(record)) {
    const std::string where = fmt::format("{}: record {}", path, reader.record_index());
    decode_example(record, ex, where);
    const Int64List& input_ids = ex.int64s("input_ids");
    if (rows.seq_len == 0) {
      if (input_ids.empty()) fail("{}: input_ids is empty", where);
      rows.seq_len = static_cast<int64_t>(input_ids.size());
      spans = ex.find("start_positions") != nullptr;
      labels = ex.find("label_ids") != nullptr;
      ids = ex.find("unique_ids") != nullptr;
    }
    for (const char* name : {"input_ids", "input_mask", "segment_ids"})
      if (static_cast<int64_t>(ex.int64s(name).size()) != rows.seq_len)
        fail("{}: {} has {} values, the first record {}", where, name, ex.int64s(name).size(), rows.seq_len);
    append_ints(rows.input_ids, input_ids, where, "input_ids");
    append_ints(rows.input_mask, ex.int64s("input_mask"), where, "input_mask");
    append_ints(rows.segment_ids, ex.int64s("segment_ids"), where, "segment_ids");
    if (ids) rows.unique_ids.push_back(ex.int64s("unique_ids").at(0));
    if (spans) {
      append_ints(rows.start_positions, ex.int64s("start_positions"), where, "start_positions");
      append_ints(rows.end_positions, ex.int64s("end_positions"), where, "end_positions");
    }
    if (labels) {
      const Feature* f = ex.find("label_ids");
      if (!f) fail("{}: no label_ids, which the first record has", where);
      if (f->is_float()) rows.labels.push_back(f->floats().at(0));
      else rows.labels.push_back(static_cast<float>(f->int64s().at(0)));
    }
    const Feature* real = ex.find("is_real_example");
    rows.real.push_back(real && real->is_int64() && !real->int64s().empty() ? real->int64s()[0] != 0 : 1);
  }
  if (rows.size() == 0) fail("{}: no features", path);
  if (rows.has_spans() && rows.start_positions.size() != rows.size())
    fail("{}: start_positions must hold one value per feature", path);
  return rows;
}

}  // namespace bk
