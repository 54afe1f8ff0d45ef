// bert_config.json validation: absurd sizes are refused in one line naming the file and the field, before any
// model is built (bert-train, bert-eval, bert-finetune and ckpt-convert all read configs through it).
#include "../error_of.h"
#include "../scratch_dir.h"
#include "model_config/bert_config.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

namespace {

// BERT-base as Google's bert_config.json spells it, with `key` set to `value` (raw JSON text).
std::string base_json_with(const std::string& key, const std::string& value) {
  nlohmann::json j = bk::BertConfig().to_json();
  j[key] = nlohmann::json::parse(value);
  return j.dump();
}

std::string load_error(const bk_test::ScratchDir& tmp, const std::string& key, const std::string& value) {
  const std::string path = (tmp.path / "bert_config.json").string();
  std::ofstream(path) << base_json_with(key, value);
  return bk_test::error_of([&] { bk::BertConfig::load(path); });
}

}  // namespace

TEST_CASE("bert config: parameter_count is BertForPreTraining's") {
  // HF transformers' BertForPreTraining(bert-base-uncased) has 110,106,428 parameters (decoder tied); ours pads
  // the vocabulary to a multiple of 8 (30522 -> 30528), which adds 6 embedding rows and 6 decoder biases.
  bk::BertConfig base;
  CHECK(base.parameter_count() == 110106428 + 6 * 768 + 6);
  base.vocab_size = 30528;
  CHECK(base.parameter_count() == 110106428 + 6 * 768 + 6);
}

TEST_CASE("bert config: absurd sizes are one-line errors naming the file and the field") {
  bk_test::ScratchDir tmp;
  const std::string file = (tmp.path / "bert_config.json").string();
  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  for (const Case& c : {Case{"hidden_size", "1099511627776", "\"hidden_size\" 1099511627776 is beyond the maximum 65536"},
                        Case{"num_hidden_layers", "1000000000", "\"num_hidden_layers\" 1000000000 is beyond the maximum 1024"},
                        Case{"vocab_size", "9223372036854775807", "\"vocab_size\" 9223372036854775807 is beyond the maximum 16777216"},
                        Case{"intermediate_size", "4294967296", "\"intermediate_size\" 4294967296 is beyond the maximum 262144"},
                        Case{"max_position_embeddings", "1e3", "\"max_position_embeddings\" must be an integer"},
                        Case{"type_vocab_size", "18446744073709551615", "\"type_vocab_size\" 18446744073709551615 is too large"},
                        Case{"layer_norm_eps", "-1e-12", "\"layer_norm_eps\" must be positive and finite, got -1e-12"},
                        Case{"initializer_range", "-0.5", "\"initializer_range\" must be non-negative and finite, got -0.5"}}) {
    CAPTURE(c.key);
    const std::string message = load_error(tmp, c.key, c.value);
    CHECK(message.rfind(file + ": " + c.message, 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("bert config: a shape within the maxima but beyond memory is refused, naming the field that grew") {
  bk::BertConfig c;
  c.validate("base.json", uint64_t{1} << 30);  // 110M parameters = 420 MiB as float32
  CHECK(bk_test::error_of([&] { c.validate("base.json", uint64_t{400} << 20); }) ==
        "base.json: \"vocab_size\" 30522 makes a model of 110111042 parameters (0.4 GiB as float32), more than "
        "this machine's 0.4 GiB of memory");
  c.num_hidden_layers = 1000;
  CHECK(bk_test::error_of([&] { c.validate("wide.json", uint64_t{16} << 30); }) ==
        "wide.json: \"num_hidden_layers\" 1000 makes a model of 7112928578 parameters (26.5 GiB as float32), "
        "more than this machine's 16.0 GiB of memory");
  c.num_hidden_layers = 12;
  c.hidden_size = 65536;
  c.num_attention_heads = 64;
  CHECK(bk_test::error_of([&] { c.validate("huge.json", uint64_t{64} << 30); })
            .rfind("huge.json: \"hidden_size\" 65536 makes a model of ", 0) == 0);
  // The largest shape the maxima allow does not overflow the count.
  c.vocab_size = bk::BertConfig::kMaxVocabSize;
  c.num_hidden_layers = bk::BertConfig::kMaxLayers;
  c.intermediate_size = bk::BertConfig::kMaxIntermediateSize;
  c.max_position_embeddings = bk::BertConfig::kMaxPositions;
  c.type_vocab_size = bk::BertConfig::kMaxTypeVocabSize;
  CHECK(c.parameter_count() > 0);
  CHECK(c.parameter_count() < (int64_t{1} << 46));
  // The shipped presets and the fixture configs still validate on this machine.
  bk::BertConfig::load(std::string(BERTKIT_SOURCE_DIR) + "/configs/bert-large.json");
}
