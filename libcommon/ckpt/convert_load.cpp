// Reading any supported checkpoint into the canonical tensor set (ckpt/convert.h).
#include "ckpt/convert.h"
#include "ckpt/checkpoint_path.h"

#include "ckpt/name_mapping.h"
#include "ckpt/tf_checkpoint.h"
#include "ckpt/torch_save.h"
#include "io/progress.h"
#include "util/error.h"
#include "util/json_read.h"
#include "io/input.h"
#include "util/printable.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

namespace bk {
namespace fs = std::filesystem;
namespace {

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    int shift = 0;
    while (!(mant & 0x400)) {
      mant <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mant & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Converts `count` elements of a floating-point type to float32 bytes; `what` names the tensor for errors.
std::string to_f32(std::string_view bytes, StDtype dtype, int64_t count, const std::string& what) {
  if (dtype == StDtype::F32) return std::string(bytes);
  std::string out(static_cast<size_t>(count) * 4, '\0');
  auto* dst = reinterpret_cast<float*>(out.data());
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == StDtype::F16 || dtype == StDtype::BF16) {
      uint16_t v;
      std::memcpy(&v, bytes.data() + 2 * i, 2);
      if (dtype == StDtype::F16) {
        dst[i] = half_to_float(v);
      } else {
        uint32_t bits = uint32_t(v) << 16;
        std::memcpy(&dst[i], &bits, 4);
      }
    } else if (dtype == StDtype::F64) {
      double d;
      std::memcpy(&d, bytes.data() + 8 * i, 8);
      dst[i] = static_cast<float>(d);
    } else {
      fail("{}: dtype {} is not a floating-point type; model weights must be", what, st_dtype_name(dtype));
    }
  }
  return out;
}

bool tf_to_st_dtype(int dtype, StDtype& out) {
  switch (dtype) {
    case kTfFloat: out = StDtype::F32; return true;
    case kTfHalf: out = StDtype::F16; return true;
    case kTfBfloat16: out = StDtype::BF16; return true;
    case kTfDouble: out = StDtype::F64; return true;
    case kTfInt64: out = StDtype::I64; return true;
    case kTfInt32: out = StDtype::I32; return true;
    case kTfInt16: out = StDtype::I16; return true;
    case kTfInt8: out = StDtype::I8; return true;
    case kTfUint8: out = StDtype::U8; return true;
    case kTfBool: out = StDtype::BOOL; return true;
    default: return false;
  }
}

std::string transpose_f32(const std::string& bytes, int64_t rows, int64_t cols) {
  std::string out(bytes.size(), '\0');
  const auto* src = reinterpret_cast<const float*>(bytes.data());
  auto* dst = reinterpret_cast<float*>(out.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  return out;
}

std::string find_config(const std::string& input, bool is_dir, const std::string& given) {
  if (!given.empty()) return given;
  fs::path dir = is_dir ? fs::path(input) : fs::path(input).parent_path();
  if (dir.empty()) dir = ".";
  const char* names[] = {"bert_config.json", "config.json"};
  if (is_dir) std::swap(names[0], names[1]);
  for (const char* n : names)
    if (fs::is_regular_file(dir / n)) return (dir / n).string();
  fail("{}: no bert_config.json or config.json beside it; name one with --config", input);
}

// Where each canonical tensor comes from, decided from names and shapes before any data is read.
struct Source {
  std::string source_name;   // the name in the input
  std::vector<int64_t> shape;  // HF layout as stored (rows may be padded)
  bool transpose = false;
  const void* handle = nullptr;  // TfTensorInfo or StEntry
};

// Checks a source shape against the expected one; vocab tensors may carry padded rows (cut off later).
void check_shape(const std::vector<int64_t>& got, const ExpectedTensor& want, const BertConfig& config,
                 const std::string& file, const std::string& source_name, const std::string& config_path,
                 const std::vector<int64_t>& as_stored) {
  bool ok = got == want.shape;
  if (!ok && is_vocab_tensor(want.name) && got.size() == want.shape.size() && !got.empty() &&
      got[0] == config.padded_vocab_size(8) && std::equal(got.begin() + 1, got.end(), want.shape.begin() + 1))
    ok = true;
  if (!ok) {
    std::vector<int64_t> stored_want = want.shape;
    if (got != as_stored) std::reverse(stored_want.begin(), stored_want.end());
    fail("{}: tensor {}: shape {} does not match the config {} (vocab_size {}, hidden_size {}, "
         "intermediate_size {}), which needs {}", file, source_name, format_tf_shape(as_stored), config_path,
         config.vocab_size, config.hidden_size, config.intermediate_size, format_tf_shape(stored_want));
  }
}

// Cuts padded vocabulary rows down to the true vocabulary.
void trim_vocab(StTensor& t, int64_t vocab) {
  if (t.shape.empty() || t.shape[0] <= vocab) return;
  int64_t row = t.numel() / t.shape[0];
  t.bytes.resize(static_cast<size_t>(vocab * row) * st_dtype_size(t.dtype));
  t.shape[0] = vocab;
}

void order_and_check(LoadedCheckpoint& ck, const std::vector<ExpectedTensor>& expected,
                     std::map<std::string, StTensor>& weights, std::map<std::string, StTensor>& moments,
                     const std::string& input) {
  std::vector<std::string> missing;
  for (const auto& e : expected) {
    auto it = weights.find(e.name);
    if (it == weights.end()) {
      missing.push_back(e.name);
      continue;
    }
    ck.model.push_back(std::move(it->second));
    for (TfRole role : {TfRole::kAdamM, TfRole::kAdamV}) {
      auto m = moments.find(adam_state_name(e.name, role));
      if (m != moments.end()) ck.optimizer.push_back(std::move(m->second));
    }
  }
  if (!missing.empty())
    fail("{}: {} of {} model tensors missing: {}{}", input, missing.size(), expected.size(), missing.front(),
         missing.size() > 1 ? fmt::format(" (and {} more)", missing.size() - 1) : "");
}

void report_unmapped(const LoadedCheckpoint& ck, const std::string& input, bool allow) {
  if (ck.unmapped.empty() || allow) return;
  std::string list;
  for (size_t i = 0; i < ck.unmapped.size() && i < 8; ++i) list += (i ? ", " : "") + printable_excerpt(ck.unmapped[i]);
  if (ck.unmapped.size() > 8) list += fmt::format(" (and {} more)", ck.unmapped.size() - 8);
  fail("{}: {} unmapped tensor(s): {}; --allow-unmapped drops them", input, ck.unmapped.size(), list);
}

LoadedCheckpoint load_tf(const std::string& input, const LoadOptions& options) {
  TfCheckpointReader reader(input);
  LoadedCheckpoint ck;
  ck.config_path = find_config(reader.prefix(), false, options.config_path);
  ck.config = BertConfig::load(ck.config_path);
  // The head: run_squad.py's or run_classifier.py's variables make a fine-tuned checkpoint.
  for (const auto& t : reader.index().tensors) {
    if (t.name == "cls/squad/output_weights") ck.head = BertHead::span;
    if (t.name == "output_weights" && !t.shape.empty()) {
      ck.head = BertHead::classifier;
      ck.num_labels = t.shape[0];
    }
  }
  auto expected = bert_tensors(ck.config, ck.head, ck.num_labels);
  auto names = expected_names(expected);
  std::map<std::string, const ExpectedTensor*> by_name;
  for (const auto& e : expected) by_name[e.name] = &e;

  struct Planned {
    const TfTensorInfo* info;
    MappedTfName mapped;
  };
  std::vector<Planned> plan;
  std::map<std::string, std::string> claimed;  // output name -> TF name
  for (const auto& t : reader.index().tensors) {
    MappedTfName m = map_tf_name(t.name, names);
    if (ck.head == BertHead::span && t.name.starts_with("bert/pooler/")) {
      ++ck.dropped_pooler;  // BertForQuestionAnswering has no pooler
      continue;
    }
    if (m.role == TfRole::kUnmapped) {
      ck.unmapped.push_back(t.name);
      continue;
    }
    if (m.role == TfRole::kTraining || (m.role != TfRole::kWeight && !options.keep_optimizer)) {
      ++ck.dropped_training_state;
      continue;
    }
    std::string out_name = m.role == TfRole::kWeight ? m.hf_name : adam_state_name(m.hf_name, m.role);
    auto [it, fresh] = claimed.emplace(out_name, t.name);
    if (!fresh)
      fail("{}: tensors {} and {} both map to {}", reader.index_path(), printable_excerpt(it->second),
           printable_excerpt(t.name), out_name);
    std::vector<int64_t> hf_shape = t.shape;
    if (m.transpose) {
      if (t.shape.size() != 2)
        fail("{}: tensor {}: a kernel must be 2-D, got {}", reader.index_path(), printable_excerpt(t.name),
             format_tf_shape(t.shape));
      std::reverse(hf_shape.begin(), hf_shape.end());
    }
    check_shape(hf_shape, *by_name.at(m.hf_name), ck.config, reader.index_path(), printable_excerpt(t.name),
                ck.config_path, t.shape);
    plan.push_back({&t, std::move(m)});
  }
  report_unmapped(ck, reader.index_path(), options.allow_unmapped);

  std::map<std::string, StTensor> weights, moments;
  if (options.progress) options.progress->stage("reading", plan.size(), "tensors");
  for (const auto& p : plan) {
    if (options.progress) options.progress->update(weights.size() + moments.size());
    const TfTensorInfo& t = *p.info;
    StTensor out;
    out.name = p.mapped.role == TfRole::kWeight ? p.mapped.hf_name : adam_state_name(p.mapped.hf_name, p.mapped.role);
    StDtype dtype;
    if (!tf_to_st_dtype(t.dtype, dtype))
      fail("{}: tensor {}: dtype {} is not supported", reader.index_path(), printable_excerpt(t.name),
           tf_dtype_name(t.dtype));
    std::string raw = reader.read(t);
    out.bytes = to_f32(raw, dtype, t.num_elements(),
                       fmt::format("{}: tensor {}", reader.index_path(), printable_excerpt(t.name)));
    out.shape = t.shape;
    if (p.mapped.transpose) {
      out.bytes = transpose_f32(out.bytes, t.shape[0], t.shape[1]);
      std::reverse(out.shape.begin(), out.shape.end());
    }
    if (is_vocab_tensor(p.mapped.hf_name)) trim_vocab(out, ck.config.vocab_size);
    (p.mapped.role == TfRole::kWeight ? weights : moments)[out.name] = std::move(out);
  }
  order_and_check(ck, expected, weights, moments, reader.index_path());
  return ck;
}

// The tensors of one file under HF names: listed first (every name and shape is checked before any data is read),
// then read one at a time. A safetensors file reads lazily; a torch .pt file is read whole by its reader.
struct NamedTensors {
  std::string path;
  std::vector<StEntry> entries;
  std::function<StTensor(const StEntry&)> read;
};

NamedTensors safetensors_source(const std::shared_ptr<SafetensorsReader>& reader) {
  return {reader->path(), reader->entries(), [reader](const StEntry& e) { return reader->read(e); }};
}

// An HF-named model (and optionally the moments beside it) into the canonical set: the head from the tensors
// present, tied copies and constant buffers dropped, shapes checked, dtypes converted, padded vocabularies cut.
LoadedCheckpoint load_hf_named(LoadedCheckpoint ck, const NamedTensors& model, const NamedTensors* optimizer,
                               const LoadOptions& options) {
  // transformers' BertModel (bare names, no heads): nothing to convert its heads from, and no weights are invented.
  const auto named = [&](std::string_view prefix) {
    return std::any_of(model.entries.begin(), model.entries.end(), [&](const StEntry& e) { return e.name.starts_with(prefix); });
  };
  if (ck.config.is_modernbert() && !named("model.") && named("layers."))
    fail("{}: a bare ModernBertModel (no \"model.\" prefix, no masked-LM head), whose head would have to be invented; "
         "as an HF directory bert-train --init-checkpoint takes it, initialising the head", model.path);
  if (!named("bert.") && named("encoder.layer."))
    fail("{}: a bare BertModel (transformers' BertModel: no \"bert.\" prefix, no pretraining heads), whose heads "
         "would have to be invented; as an HF directory (save_pretrained's model.safetensors and config.json) "
         "bert-train --init-checkpoint and bert-finetune train take it, initialising the heads it lacks", model.path);
  for (const auto& e : model.entries) {
    if (ck.config.is_modernbert()) {
      // Both of ModernBERT's task classes name their output layer classifier: which one, the checkpoint says.
      if (e.name == "classifier.weight" && !e.shape.empty()) {
        ck.head = modernbert_checkpoint_is_spans(model.path, ck.config_path) ? BertHead::span : BertHead::classifier;
        ck.num_labels = ck.head == BertHead::span ? 0 : e.shape[0];
      }
      continue;
    }
    if (e.name == "qa_outputs.weight") ck.head = BertHead::span;
    if (e.name == "classifier.weight" && !e.shape.empty()) {
      ck.head = BertHead::classifier;
      ck.num_labels = e.shape[0];
    }
  }
  auto expected = bert_tensors(ck.config, ck.head, ck.num_labels);
  std::map<std::string, const ExpectedTensor*> by_name;
  for (const auto& e : expected) by_name[e.name] = &e;

  std::map<std::string, StTensor> weights, moments;
  std::vector<const StEntry*> wanted;
  for (const auto& e : model.entries) {
    if (e.name == "cls.predictions.decoder.weight" || e.name == "cls.predictions.decoder.bias" ||
        e.name == "bert.embeddings.position_ids" || (ck.config.is_modernbert() && e.name == "decoder.weight")) {
      ++ck.dropped_training_state;  // copies of tied tensors and a constant buffer
      continue;
    }
    if (ck.head == BertHead::span && e.name.starts_with("bert.pooler.")) {
      ++ck.dropped_pooler;
      continue;
    }
    auto it = by_name.find(e.name);
    if (it == by_name.end()) {
      ck.unmapped.push_back(e.name);
      continue;
    }
    check_shape(e.shape, *it->second, ck.config, model.path, e.name, ck.config_path, e.shape);
    wanted.push_back(&e);
  }
  report_unmapped(ck, model.path, options.allow_unmapped);
  auto load_into = [&](const NamedTensors& source, const StEntry& e, std::map<std::string, StTensor>& into) {
    StTensor t = source.read(e);
    t.bytes = to_f32(t.bytes, t.dtype, t.numel(), fmt::format("{}: tensor {}", source.path, e.name));
    t.dtype = StDtype::F32;
    std::string param = e.name;
    for (const char* suffix : {".exp_avg_sq", ".exp_avg"})
      if (param.ends_with(suffix)) param.resize(param.size() - std::strlen(suffix));
    if (is_vocab_tensor(param)) trim_vocab(t, ck.config.vocab_size);
    into[t.name] = std::move(t);
  };
  if (options.progress) options.progress->stage("reading", wanted.size(), "tensors");
  for (const StEntry* e : wanted) {
    if (options.progress) options.progress->update(weights.size());
    load_into(model, *e, weights);
  }

  if (optimizer != nullptr) {
    for (const auto& e : optimizer->entries) {
      bool known = false;
      for (TfRole role : {TfRole::kAdamM, TfRole::kAdamV})
        for (const auto& x : expected)
          if (e.name == adam_state_name(x.name, role)) {
            check_shape(e.shape, x, ck.config, optimizer->path, e.name, ck.config_path, e.shape);
            known = true;
          }
      if (known) load_into(*optimizer, e, moments);
      else ++ck.dropped_training_state;  // other optimizer state (step counts, LAMB norms)
    }
  }
  order_and_check(ck, expected, weights, moments, model.path);
  return ck;
}

LoadedCheckpoint load_dir(const std::string& input, const LoadOptions& options) {
  LoadedCheckpoint ck;
  ck.config_path = find_config(input, true, options.config_path);
  ck.config = BertConfig::load(ck.config_path);
  const NamedTensors model =
      safetensors_source(std::make_shared<SafetensorsReader>((fs::path(input) / "model.safetensors").string()));
  const std::string optimizer_path = (fs::path(input) / "optimizer.safetensors").string();
  if (options.keep_optimizer && fs::exists(optimizer_path)) {
    const NamedTensors optimizer = safetensors_source(std::make_shared<SafetensorsReader>(optimizer_path));
    return load_hf_named(std::move(ck), model, &optimizer, options);
  }
  return load_hf_named(std::move(ck), model, nullptr, options);
}

// A torch.save file: NVIDIA's checkpoints ({'model': state dict, 'optimizer': ...}, names from its modeling.py),
// HF's pytorch_model.bin, our own --to pt, a bare state dict (ckpt/torch_save.h reads it); here its names become
// HF's: a DistributedDataParallel "module." prefix goes, and NVIDIA's LinearActivation modules
// (intermediate.dense_act, pooler.dense_act, transform.dense_act) are HF's dense layers with the activation after.
LoadedCheckpoint load_pt(const std::string& input, const LoadOptions& options) {
  LoadedCheckpoint ck;
  if (options.config) {
    ck.config = *options.config;
    ck.config_path = options.config_path.empty() ? "--config" : options.config_path;
  } else {
    ck.config_path = find_config(input, false, options.config_path);
    ck.config = BertConfig::load(ck.config_path);
  }
  auto tensors = std::make_shared<std::vector<StTensor>>(read_torch_save_state_dict(input));
  NamedTensors model{input, {}, {}};
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < tensors->size(); ++i) {
    StTensor& t = (*tensors)[i];
    if (t.name.starts_with("module.")) t.name.erase(0, 7);
    for (size_t at; (at = t.name.find(".dense_act.")) != std::string::npos;) t.name.replace(at, 11, ".dense.");
    if (!index.emplace(t.name, i).second) fail("{}: two tensors are named {} once NVIDIA's names are mapped", input, t.name);
    StEntry e;
    e.name = t.name;
    e.dtype = t.dtype;
    e.shape = t.shape;
    model.entries.push_back(std::move(e));
  }
  model.read = [tensors, index](const StEntry& e) { return (*tensors)[index.at(e.name)]; };
  return load_hf_named(std::move(ck), model, nullptr, options);
}

}  // namespace

bool modernbert_checkpoint_is_spans(const std::string& checkpoint, const std::string& config_path) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(checkpoint, ec) ? fs::path(checkpoint) : fs::path(checkpoint).parent_path();
  const nlohmann::json task = read_checkpoint_task(dir.empty() ? "." : dir.string());
  if (task.is_object() && task.contains("task") && task["task"].is_string())
    return task["task"] == "squad" || task["task"] == "squad2";
  if (!fs::is_regular_file(config_path, ec)) return false;  // a config given in memory (--config) says nothing
  const nlohmann::json config = parse_json(read_file(config_path), config_path);
  return config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
         config["architectures"][0] == "ModernBertForQuestionAnswering";
}

bool is_torch_save_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  std::error_code ec;
  return (ext == ".pt" || ext == ".pth" || ext == ".bin") && fs::is_regular_file(path, ec);
}

std::string config_beside_file(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  for (const char* name : {"bert_config.json", "config.json"})
    if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
  return "";
}

LoadedCheckpoint load_canonical_checkpoint(const std::string& named, const LoadOptions& options) {
  const std::string input = resolve_checkpoint(named);
  if (fs::is_directory(input)) {
    if (!fs::exists(fs::path(input) / "model.safetensors"))
      fail("{}: a directory without model.safetensors: not a native or HF checkpoint", input);
    return load_dir(input, options);
  }
  if (is_torch_save_file(input)) return load_pt(input, options);
  if (!is_tf_checkpoint(input))
    fail("{}: neither a TF checkpoint prefix ({}.index not found) nor a checkpoint directory", input, input);
  return load_tf(input, options);
}

std::string list_checkpoint(const std::string& named) {
  const std::string input = resolve_checkpoint(named);
  std::string out;
  int64_t total = 0;
  BertHead head = BertHead::pretraining;  // from the task heads listed
  auto line = [&](const std::string& name, const char* dtype, const std::vector<int64_t>& shape, int64_t numel) {
    out += fmt::format("{} ({}) {}\n", name, dtype, format_tf_shape(shape));
    total += numel;
    if (name == "qa_outputs.weight") head = BertHead::span;
    if (name == "classifier.weight") head = BertHead::classifier;
  };
  if (fs::is_directory(input)) {
    SafetensorsReader reader((fs::path(input) / "model.safetensors").string());
    std::vector<const StEntry*> entries;
    for (const auto& e : reader.entries()) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->name < b->name; });
    for (const StEntry* e : entries) line(e->name, st_dtype_name(e->dtype), e->shape, e->numel());
  } else if (is_torch_save_file(input)) {
    std::vector<StTensor> tensors = read_torch_save_state_dict(input);
    std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const StTensor& t : tensors) line(t.name, st_dtype_name(t.dtype), t.shape, t.numel());
  } else {
    if (!is_tf_checkpoint(input))
      fail("{}: neither a TF checkpoint prefix ({}.index not found), a torch.save file nor a checkpoint directory",
           input, input);
    TfCheckpointReader reader(input);
    for (const auto& t : reader.index().tensors) line(t.name, tf_dtype_name(t.dtype), t.shape, t.num_elements());
  }
  out += fmt::format("\n# Total number of params: {}\n", total);
  // The architecture, from the config beside a directory or a torch.save file, when there is one that reads (a TF1
  // prefix is BERT's, and its listing stays inspect_checkpoint's byte for byte).
  const std::string config = fs::is_directory(input)     ? (fs::path(input) / "config.json").string()
                             : is_torch_save_file(input) ? config_beside_file(input)
                                                         : "";
  std::error_code ec;
  if (!config.empty() && fs::is_regular_file(config, ec)) try {
      const BertConfig c = BertConfig::load(config);
      if (c.is_modernbert() && head == BertHead::classifier && modernbert_checkpoint_is_spans(input, config))
        head = BertHead::span;
      out += fmt::format("# Architecture: {}, from {}\n", head_architecture(c, head), config);
    } catch (const Error&) {
    }
  return out;
}

void pad_vocab_rows(std::vector<StTensor>& tensors, int64_t multiple) {
  if (multiple <= 1) return;
  for (auto& t : tensors) {
    std::string param = t.name;
    for (const char* suffix : {".exp_avg_sq", ".exp_avg"})
      if (param.ends_with(suffix)) param.resize(param.size() - std::string_view(suffix).size());
    if (!is_vocab_tensor(param) || t.shape.empty()) continue;
    int64_t rows = t.shape[0], padded = (rows + multiple - 1) / multiple * multiple;
    int64_t row_bytes = rows ? static_cast<int64_t>(t.bytes.size()) / rows : 0;
    t.bytes.resize(static_cast<size_t>(padded * row_bytes), '\0');
    t.shape[0] = padded;
  }
}

std::vector<StTensor> hf_state_dict(const std::vector<StTensor>& model) {
  std::vector<StTensor> out;
  out.reserve(model.size() + 2);
  const StTensor* word = nullptr;
  const StTensor* bias = nullptr;
  for (const auto& t : model) {
    if (t.name == "bert.embeddings.word_embeddings.weight") word = &t;
    if (t.name == "cls.predictions.bias") bias = &t;
  }
  if (!word) {  // ModernBertForMaskedLM: state_dict() holds the tied decoder.weight after decoder.bias
    bool task_model = false;  // its task classes have no decoder
    for (const auto& t : model) {
      out.push_back(t);
      if (t.name == "model.embeddings.tok_embeddings.weight") word = &t;
      task_model = task_model || t.name.starts_with("classifier.");
    }
    if (word && !task_model) {
      StTensor w = *word;
      w.name = "decoder.weight";
      out.push_back(std::move(w));
    }
    return out;
  }
  for (const auto& t : model) {
    out.push_back(t);
    // The tied decoder copies follow cls.predictions.bias (load_state_dict does not care about order).
    if (&t == bias && word) {
      StTensor w = *word;
      w.name = "cls.predictions.decoder.weight";
      out.push_back(std::move(w));
      StTensor b = *bias;
      b.name = "cls.predictions.decoder.bias";
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::vector<StTensor> to_tf_variables(std::vector<StTensor> model, std::vector<StTensor> optimizer) {
  std::vector<StTensor> out;
  out.reserve(model.size() + optimizer.size());
  auto convert = [&](StTensor& t, const std::string& param, TfRole role) {
    MappedHfName m = map_hf_name(param, role);
    if (m.tf_name.empty()) fail("tensor {}: no google-research/bert variable has this name", t.name);
    if (t.dtype != StDtype::F32) fail("tensor {}: {} where float32 is expected", t.name, st_dtype_name(t.dtype));
    if (m.transpose) {
      if (t.shape.size() != 2) fail("tensor {}: a Linear weight must be 2-D, got {}", t.name, format_tf_shape(t.shape));
      t.bytes = transpose_f32(t.bytes, t.shape[0], t.shape[1]);
      std::reverse(t.shape.begin(), t.shape.end());
    }
    t.name = std::move(m.tf_name);
    out.push_back(std::move(t));
  };
  for (StTensor& t : model) convert(t, t.name, TfRole::kWeight);
  for (StTensor& t : optimizer) {
    std::string param = t.name;
    TfRole role = TfRole::kUnmapped;
    if (param.ends_with(".exp_avg_sq")) {
      param.resize(param.size() - 11);
      role = TfRole::kAdamV;
    } else if (param.ends_with(".exp_avg")) {
      param.resize(param.size() - 8);
      role = TfRole::kAdamM;
    } else {
      fail("tensor {}: optimizer state other than Adam's moments has no TF name", t.name);
    }
    convert(t, param, role);
  }
  model.clear();
  optimizer.clear();
  return out;
}

}  // namespace bk
