// bert_config.json validation: absurd sizes are refused in one line naming the file and the field, before any
// model is built (bert-train, bert-eval, bert-finetune and ckpt-convert all read configs through it).
#include "../error_of.h"
#include "../scratch_dir.h"
#include "model_config/bert_config.h"

#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

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

namespace {

// A ModernBERT config.json (transformers 5.x keys) with `edit` applied, loaded; "" when it loads, else the error.
std::string modernbert_error(const bk_test::ScratchDir& tmp, const std::function<void(nlohmann::json&)>& edit) {
  bk::BertConfig c = bk::BertConfig::load((tmp.path / "base.json").string());
  nlohmann::json j = c.to_hf_json();
  edit(j);
  const std::string path = (tmp.path / "config.json").string();
  std::ofstream(path) << j.dump();
  return bk_test::error_of([&] { bk::BertConfig::load(path); });
}

}  // namespace

TEST_CASE("modernbert config: both generations of HF's keys, defaults as transformers', written back as 5.x") {
  bk_test::ScratchDir tmp;
  // What ModernBERT's releases hold (transformers 4.x): the layer pattern and thetas as three keys.
  std::ofstream((tmp.path / "v4.json").string()) << R"({"model_type": "modernbert", "hidden_size": 64,
      "num_hidden_layers": 5, "num_attention_heads": 4, "intermediate_size": 96, "global_attn_every_n_layers": 2,
      "global_rope_theta": 80000.0, "local_rope_theta": 5000.0, "local_attention": 64, "vocab_size": 1000,
      "pad_token_id": 0})";
  const bk::BertConfig v4 = bk::BertConfig::load((tmp.path / "v4.json").string());
  CHECK(v4.is_modernbert());
  CHECK(v4.modern.layer_types == std::vector<std::string>{"full_attention", "sliding_attention", "full_attention",
                                                          "sliding_attention", "full_attention"});
  CHECK(v4.modern.global_rope_theta == 80000.0);
  CHECK(v4.modern.local_rope_theta == 5000.0);
  // Absent keys: ModernBertConfig's defaults.
  CHECK(v4.max_position_embeddings == 8192);
  CHECK(v4.layer_norm_eps == 1e-5);
  CHECK(v4.hidden_act == "gelu");
  CHECK_FALSE(v4.modern.norm_bias);
  CHECK(v4.modern.decoder_bias);
  CHECK(v4.attention_probs_dropout_prob == 0.0);
  CHECK(v4.modern.cls_token_id == 50281);
  // Written back in 5.x's form (layer_types, rope_parameters), which reads back the same.
  const nlohmann::json hf = v4.to_hf_json();
  CHECK(hf["model_type"] == "modernbert");
  CHECK(hf["architectures"] == nlohmann::json{"ModernBertForMaskedLM"});
  CHECK(hf["rope_parameters"]["full_attention"]["rope_theta"] == 80000.0);
  CHECK(hf["rope_parameters"]["sliding_attention"]["rope_type"] == "default");
  CHECK_FALSE(hf.contains("global_attn_every_n_layers"));
  CHECK(hf["layer_types"].size() == 5);
  CHECK(bk::BertConfig::from_json(hf, "back") == v4);
  CHECK(v4.to_json() == hf);  // no Google form: the checkpoint's config.json is HF's
  // HF's ModernBertForMaskedLM() has 149,655,232 parameters, with hidden 1024, intermediate 2624, 28 layers and
  // 16 heads 395,881,664 (transformers 5.23, decoder tied; 50,368 is a multiple of 8, so no padding rows).
  nlohmann::json base = hf;
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                          "vocab_size", "layer_types", "local_attention", "pad_token_id", "rope_parameters",
                          "max_position_embeddings"})
    base.erase(key);
  CHECK(bk::BertConfig::from_json(base, "default").parameter_count() == 149655232);
  base.update({{"hidden_size", 1024}, {"intermediate_size", 2624}, {"num_hidden_layers", 28},
               {"num_attention_heads", 16}});
  CHECK(bk::BertConfig::from_json(base, "large").parameter_count() == 395881664);
}

TEST_CASE("modernbert config: a bad key is one line naming the file and the key, before anything is allocated") {
  bk_test::ScratchDir tmp;
  std::ofstream((tmp.path / "base.json").string()) << R"({"model_type": "modernbert", "hidden_size": 64,
      "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 96, "vocab_size": 1000,
      "max_position_embeddings": 512, "pad_token_id": 0})";
  CHECK(modernbert_error(tmp, [](nlohmann::json&) {}).empty());
  auto check_error = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& expected) {
    const std::string message = modernbert_error(tmp, edit);
    CAPTURE(message);
    CHECK(message.find((tmp.path / "config.json: ").string()) == 0);
    CHECK(message.find(expected) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  };
  check_error([](auto& j) { j["layer_types"].erase(0); }, "\"layer_types\" lists 2 layers, but \"num_hidden_layers\" is 3");
  check_error([](auto& j) { j["layer_types"][1] = "chunked_attention"; }, "\"layer_types\"[1] \"chunked_attention\"");
  check_error([](auto& j) { j["local_attention"] = 0; }, "\"local_attention\" 0 must be from 2 to max_position_embeddings 512");
  check_error([](auto& j) { j["local_attention"] = 1024; }, "\"local_attention\" 1024");
  check_error([](auto& j) { j["rope_parameters"]["full_attention"]["rope_theta"] = -1.0; },
              "\"rope_parameters.full_attention.rope_theta (global_rope_theta)\" must be positive and finite");
  check_error([](auto& j) { j["rope_parameters"]["sliding_attention"]["rope_type"] = "yarn"; },
              "\"rope_parameters.sliding_attention.rope_type\" \"yarn\" is not supported");
  check_error([](auto& j) { j["hidden_activation"] = "swish2"; }, "\"hidden_activation\" \"swish2\" is not supported");
  check_error([](auto& j) { j["classifier_pooling"] = "max"; }, "\"classifier_pooling\" \"max\"");
  check_error([](auto& j) { j["tie_word_embeddings"] = false; }, "\"tie_word_embeddings\" false is not supported");
  check_error([](auto& j) { j["num_attention_heads"] = 64; }, "the head size 1 (hidden_size / num_attention_heads) must be even");
  check_error([](auto& j) { j["pad_token_id"] = 5000; }, "\"pad_token_id\" 5000 is outside the vocabulary of 1000");
  check_error([](auto& j) { j["norm_bias"] = 1; }, "\"norm_bias\" must be true or false");
  check_error([](auto& j) { j["cls_token_id"] = -5; }, "\"cls_token_id\" must be a token id or null, got -5");
  // The file's own key names, where ModernBERT names a shared field otherwise.
  check_error([](auto& j) { j["attention_dropout"] = 1.5; }, "\"attention_dropout\" must be in [0, 1)");
  check_error([](auto& j) { j["norm_eps"] = 0.0; }, "\"norm_eps\" must be positive and finite");
  // A v4.x file's layer count is checked before its layer pattern is built from it.
  check_error([](auto& j) { j.erase("layer_types"); j["num_hidden_layers"] = int64_t{1} << 40; },
              "\"num_hidden_layers\" 1099511627776 is beyond the maximum 1024");
  // v4.x's pattern key, as bad as 5.x's list.
  check_error([](auto& j) { j.erase("layer_types"); j["global_attn_every_n_layers"] = 0; },
              "\"global_attn_every_n_layers\" must be positive");
}

TEST_CASE("bert config: changes_to names each changed key, nested ones dotted") {
  bk::BertConfig short_phase;
  short_phase.vocab_size = 100;
  short_phase.hidden_size = 32;
  short_phase.num_hidden_layers = 2;
  short_phase.num_attention_heads = 2;
  short_phase.intermediate_size = 64;
  short_phase.max_position_embeddings = 128;
  CHECK(short_phase.changes_to(short_phase).empty());
  bk::BertConfig longer = short_phase;
  longer.max_position_embeddings = 512;
  longer.hidden_dropout_prob = 0.0;
  CHECK(short_phase.changes_to(longer) ==
        std::vector<std::string>{"hidden_dropout_prob 0.1 -> 0.0", "max_position_embeddings 128 -> 512"});
}
