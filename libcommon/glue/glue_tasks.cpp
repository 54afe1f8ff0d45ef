#include "glue/glue_tasks.h"

#include "io/input.h"
#include "util/utf8.h"
#include "tok/vocab.h"
#include "util/error.h"
#include "util/printable.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

namespace bk {
namespace {

constexpr std::string_view kGoogle = "google-research/bert run_classifier.py";
constexpr std::string_view kHf = "HF transformers glue.py";

std::vector<GlueTask> make_tasks() {
  std::vector<GlueTask> tasks;
  // name, processor, labels, {text_a, text_b, label}, test {text_a, text_b, label}
  GlueTask cola{"cola", kGoogle, {"0", "1"}, {3, -1, 1}, {1, -1, -1}};
  cola.header = false;  // ColaProcessor: "Only the test set has a header"
  tasks.push_back(cola);
  GlueTask mnli{"mnli", kGoogle, {"contradiction", "entailment", "neutral"}, {8, 9, -1}, {8, 9, -1}};
  mnli.guid_from_first_column = true;
  tasks.push_back(mnli);
  tasks.push_back(GlueTask{"mrpc", kGoogle, {"0", "1"}, {3, 4, 0}, {3, 4, -1}});
  tasks.push_back(GlueTask{"sst-2", kHf, {"0", "1"}, {0, -1, 1}, {1, -1, -1}});
  GlueTask stsb{"sts-b", kHf, {}, {7, 8, -1}, {7, 8, -1}};
  stsb.guid_from_first_column = true;
  tasks.push_back(stsb);
  GlueTask qqp{"qqp", kHf, {"0", "1"}, {3, 4, 5}, {1, 2, -1}};
  qqp.guid_from_first_column = true;
  qqp.skip_short_rows = true;
  tasks.push_back(qqp);
  for (std::string_view name : {"qnli", "rte"}) {
    GlueTask t{name, kHf, {"entailment", "not_entailment"}, {1, 2, -1}, {1, 2, -1}};
    t.guid_from_first_column = true;
    tasks.push_back(t);
  }
  GlueTask wnli{"wnli", kHf, {"0", "1"}, {1, 2, -1}, {1, 2, -1}};
  wnli.guid_from_first_column = true;
  tasks.push_back(wnli);
  return tasks;
}

// The set_type part of the guid, as each processor names its sets.
std::string set_type(const GlueTask& task, GlueSplit split, std::string_view name) {
  const bool mismatched = task.name == "mnli" && std::filesystem::path(name).filename().string().find("mismatched") !=
                                                    std::string::npos;
  switch (split) {
    case GlueSplit::train: return "train";
    case GlueSplit::dev: return task.name == "mnli" ? (mismatched ? "dev_mismatched" : "dev_matched") : "dev";
    case GlueSplit::test: return mismatched ? "test_mismatched" : "test";  // Google's MNLI test guids are "test-"
  }
  return "";
}

// Python's float(text) for the decimal forms GLUE files hold (surrounding whitespace allowed, no hex).
bool parse_python_float(std::string_view text, double& value) {
  text = python_strip(text);
  if (text.starts_with('+')) text.remove_prefix(1);
  if (text.empty() || text.starts_with('+')) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string join_labels(const GlueTask& task) {
  std::string out;
  for (auto label : task.labels) {
    if (!out.empty()) out += ", ";
    out += label;
  }
  return out;
}

}  // namespace

const std::vector<GlueTask>& glue_tasks() {
  static const std::vector<GlueTask> tasks = make_tasks();
  return tasks;
}

const GlueTask* find_glue_task(std::string_view name) {
  for (const auto& task : glue_tasks())
    if (task.name == name) return &task;
  return nullptr;
}

std::string glue_task_names() {
  std::string out;
  for (const auto& task : glue_tasks()) {
    if (!out.empty()) out += ' ';
    out += task.name;
  }
  return out;
}

GlueSplit glue_split(std::string_view path, bool train) {
  if (train) return GlueSplit::train;
  return std::filesystem::path(path).filename().string().starts_with("test") ? GlueSplit::test : GlueSplit::dev;
}

GlueExamples parse_glue_examples(const GlueTask& task, std::string_view bytes, const std::string& name,
                                 GlueSplit split) {
  GlueExamples out;
  out.split = split;
  const bool test = split == GlueSplit::test;
  const GlueColumns& columns = test ? task.test_columns : task.columns;
  const bool header = test ? task.test_header : task.header;
  const std::string prefix = set_type(task, split, name);
  const int needed = std::max({columns.text_a, columns.text_b, test ? -1 : columns.label}) + 1;

  std::string line;
  std::vector<std::string_view> fields;
  uint64_t row = 0;  // the reference's enumerate index: 0-based, header included
  for (size_t pos = 0; pos < bytes.size(); ++row) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) nl = bytes.size();
    // tf.gfile's text mode drops every '\r', not only those before '\n'.
    line.clear();
    for (char c : bytes.substr(pos, nl - pos))
      if (c != '\r') line.push_back(c);
    pos = nl + 1;
    const uint64_t line_number = row + 1;
    if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
      fail("{}: line {}: invalid UTF-8 at byte {} of the line", name, line_number, bad + 1);
    if (row == 0 && header) continue;

    fields.clear();
    if (!line.empty())  // csv.reader gives an empty line no field at all
      for (size_t start = 0;;) {
        const size_t tab = line.find('\t', start);
        fields.push_back(std::string_view(line).substr(start, tab == std::string::npos ? std::string::npos : tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
      }
    const auto count = static_cast<int>(fields.size());
    if (count < needed) {
      // HF's QqpProcessor reads column 0 (the guid) first and skips a row that lacks any other column.
      if (task.skip_short_rows && count > 0) {
        ++out.skipped;
        continue;
      }
      fail("{}: line {}: {} needs at least {} tab-separated columns, the row has {}", name, line_number, task.name,
           needed, count);
    }

    GlueExample& example = out.examples.emplace_back();
    example.line = line_number;
    example.guid = prefix + "-" + (task.guid_from_first_column ? std::string(fields[0]) : std::to_string(row));
    example.text_a = fields[static_cast<size_t>(columns.text_a)];
    if (columns.text_b >= 0) example.text_b = fields[static_cast<size_t>(columns.text_b)];
    if (test) continue;  // no label: id 0 (value 0 for a regression)
    const std::string_view label = columns.label < 0 ? fields.back() : fields[static_cast<size_t>(columns.label)];
    if (task.regression()) {
      double value = 0;
      // float() also reads nan and inf, which no similarity score is and which would poison the loss.
      if (!parse_python_float(label, value) || !std::isfinite(value))
        fail("{}: line {}: the {} label '{}' is not a finite number", name, line_number, task.name,
             printable_excerpt(label));
      example.label_value = static_cast<float>(value);
    } else {
      const auto it = std::find(task.labels.begin(), task.labels.end(), label);
      if (it == task.labels.end())
        fail("{}: line {}: unknown label '{}' (the labels of {} are {})", name, line_number, printable_excerpt(label), task.name,
             join_labels(task));
      example.label_id = static_cast<int32_t>(it - task.labels.begin());
    }
  }
  return out;
}

GlueExamples read_glue_examples(const GlueTask& task, const std::string& path, GlueSplit split) {
  const std::string bytes = read_file(path);
  return parse_glue_examples(task, bytes, path == "-" ? std::string("<stdin>") : path, split);
}

}  // namespace bk
