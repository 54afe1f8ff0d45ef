// libFuzzer target for the GLUE TSV reader (bert-finetune --task cola|sst-2|mrpc|...): any bytes, read as every
// task's train, dev and test set, must give examples or a bk::Error, never a crash or a sanitizer report; label
// ids must be in the task's range and line numbers in the file's.
#include "glue/glue_tasks.h"
#include "util/error.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const uint64_t lines = static_cast<uint64_t>(std::count(bytes.begin(), bytes.end(), '\n')) + 1;
  for (const bk::GlueTask& task : bk::glue_tasks()) {
    for (bk::GlueSplit split : {bk::GlueSplit::train, bk::GlueSplit::dev, bk::GlueSplit::test}) {
      const std::string name = task.name == "mnli" ? "fuzz/dev_mismatched.tsv" : "fuzz/dev.tsv";
      try {
        bk::GlueExamples ex = bk::parse_glue_examples(task, bytes, name, split);
        for (const auto& e : ex.examples) {
          if (e.line == 0 || e.line > lines) std::abort();
          if (!task.regression() && (e.label_id < 0 || static_cast<size_t>(e.label_id) >= task.labels.size()))
            std::abort();
        }
      } catch (const bk::Error&) {
      }
    }
  }
  return 0;
}
