// libFuzzer target for the SQuAD readers (bert-finetune --task squad: the training/prediction examples, and the
// gold answers the scorer reads): any bytes must give examples or a bk::Error, never a crash or a sanitizer
// report; the examples must keep their promises (a paragraph that exists, answer spans inside its tokens).
#include "squad/squad_examples.h"
#include "squad/squad_scoring.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  for (int variant = 0; variant < 4; ++variant) {
    bk::SquadReadOptions options;
    options.is_training = variant & 1;
    options.version_2_with_negative = variant & 2;
    try {
      bk::SquadExamples ex = bk::parse_squad_examples(json, "fuzz/squad.json", options);
      for (const auto& e : ex.examples) {
        if (e.paragraph >= ex.documents.size()) std::abort();
        const auto& doc = ex.doc_tokens(e);
        const int32_t tokens = static_cast<int32_t>(doc.size());
        for (size_t i = 0; i < doc.size(); ++i) (void)doc[i];
        if (e.start_position >= tokens || e.end_position >= tokens) std::abort();
        if (options.is_training && !e.is_impossible && e.start_position >= 0 && e.end_position >= 0 &&
            e.start_position > e.end_position)
          std::abort();
      }
    } catch (const bk::Error&) {
    }
  }
  try {
    (void)bk::parse_squad_gold(json, "fuzz/squad.json");
  } catch (const bk::Error&) {
  }
  return 0;
}
