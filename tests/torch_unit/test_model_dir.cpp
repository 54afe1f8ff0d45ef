#include "torch_doctest.h"

#include "../error_of.h"
#include "util/error.h"
#include "model/model_dir.h"
#include "model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

fs::path model_temp_dir() {
  static struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("bertkit-torch-unit-model-" + std::to_string(::getpid()));
    ~Scratch() { std::error_code ec; fs::remove_all(dir, ec); }
  } scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

bk::BertConfig small_config() {
  bk::BertConfig c;
  c.vocab_size = 30;
  c.hidden_size = 8;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 12;
  return c;
}

using bk_test::error_of;

}  // namespace

TEST_CASE("safetensors <-> torch: dtypes, shapes and values survive") {
  const auto path = (model_temp_dir() / "mixed.safetensors").string();
  std::map<std::string, at::Tensor> t{
      {"f32", at::arange(6, at::kFloat).view({2, 3}) / 3},
      {"bf16", at::tensor({1.5f, -2.25f}).to(at::kBFloat16)},
      {"f16", at::tensor({0.5f}).to(at::kHalf)},
      {"i64", at::tensor(std::vector<int64_t>{-5, int64_t{1} << 40}, at::kLong)},
      {"i32", at::tensor({7}, at::kInt)},
      {"i8", at::tensor({-3}, at::kChar)},
      {"u8", at::tensor({200}, at::kByte)},
      {"bool", at::tensor({1, 0, 1}).to(at::kBool)},
      {"strided", at::arange(12, at::kFloat).view({3, 4}).t()},
  };
  bk::save_safetensors(path, t);
  bk::SafetensorsReader reader(path);
  CHECK(reader.metadata().at("format") == "pt");
  CHECK((reader.find("bf16")->dtype == bk::StDtype::BF16));
  const auto back = bk::load_safetensors(path);
  REQUIRE(back.size() == t.size());
  for (const auto& [name, tensor] : t) {
    CAPTURE(name);
    CHECK((back.at(name).scalar_type() == tensor.scalar_type()));
    CHECK(at::equal(back.at(name), tensor.contiguous()));
  }
}

TEST_CASE("model directory: save, load, same outputs; config.json has HF's and Google's keys") {
  at::manual_seed(11);
  bk::BertForPreTraining model(small_config());
  model.eval();
  const auto dir = (model_temp_dir() / "m1").string();
  bk::save_model_dir(dir, model);
  CHECK_THROWS_WITH_AS(bk::save_model_dir(dir, model), doctest::Contains("already exists"), bk::Error);
  CHECK_NOTHROW(bk::save_model_dir(dir, model, true));

  const auto json = nlohmann::json::parse(std::ifstream(fs::path(dir) / "config.json"));
  CHECK(json.at("model_type") == "bert");
  CHECK(json.at("vocab_size") == 30);
  CHECK((bk::SafetensorsReader(dir + "/model.safetensors").find("bert.embeddings.word_embeddings.weight")->shape ==
         std::vector<int64_t>{30, 8}));

  auto loaded = bk::load_model_dir(dir);
  loaded->eval();
  const at::Tensor ids = at::tensor({1, 4, 5, 2, 6, 2}, at::kLong).view({1, 6});
  const at::Tensor seg = at::tensor({0, 0, 0, 0, 1, 1}, at::kLong).view({1, 6});
  const auto a = model.forward(ids, seg, at::ones_like(ids));
  const auto b = loaded->forward(ids, seg, at::ones_like(ids));
  CHECK(at::equal(a.mlm_logits, b.mlm_logits));
  CHECK(at::equal(a.nsp_logits, b.nsp_logits));
  // A bare file with --config.
  auto from_file = bk::load_model_dir(dir + "/model.safetensors", dir + "/config.json");
  CHECK(at::equal(from_file->state_dict().at("cls.predictions.bias"), model.state_dict().at("cls.predictions.bias")));
}

TEST_CASE("model directory: clear errors") {
  const auto root = model_temp_dir();
  CHECK(error_of([&] { bk::load_model_dir((root / "nothing").string()); }).find("no such checkpoint") != std::string::npos);
  fs::create_directories(root / "empty");
  CHECK(error_of([&] { bk::load_model_dir((root / "empty").string()); }).find("no model.safetensors") != std::string::npos);

  at::manual_seed(12);
  bk::BertForPreTraining model(small_config());
  const auto dir = (root / "m2").string();
  bk::save_model_dir(dir, model);
  // A config that disagrees with the weights: the error names the tensor.
  bk::BertConfig other = small_config();
  other.intermediate_size = 20;
  std::ofstream(root / "other.json") << other.to_json().dump();
  const std::string err = error_of([&] { bk::load_model_dir(dir, (root / "other.json").string()); });
  CAPTURE(err);
  CHECK(err.find("model.safetensors: tensor bert.encoder.layer.0.intermediate.dense.weight has shape [16, 8], but the "
                 "config needs [20, 8]") != std::string::npos);
  // Missing keys are listed, naming the file.
  auto sd = model.state_dict();
  sd.erase("bert.pooler.dense.weight");
  bk::save_safetensors(dir + "/model.safetensors", sd, {}, true);
  const std::string missing = error_of([&] { bk::load_model_dir(dir); });
  CHECK(missing.find("missing keys (1): bert.pooler.dense.weight") != std::string::npos);
  // TF-style LayerNorm names are renamed as transformers does.
  std::map<std::string, at::Tensor> old_names;
  for (auto& [k, v] : model.state_dict()) {
    std::string key = k;
    if (key.ends_with("LayerNorm.weight")) key.replace(key.size() - 6, 6, "gamma");
    if (key.ends_with("LayerNorm.bias")) key.replace(key.size() - 4, 4, "beta");
    old_names[key] = v;
  }
  bk::save_safetensors(dir + "/model.safetensors", old_names, {}, true);
  CHECK_NOTHROW(bk::load_model_dir(dir));
}
