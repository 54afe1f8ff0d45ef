// ckpt-convert's run: the canonical tensor set (ckpt/convert.h) written out as native and HF directories, a TF1
// checkpoint with its bert_config.json and vocab.txt, or a torch .pt through a callback.
#include "ckpt/ckpt_convert.h"

#include "ckpt/convert.h"

#include "ckpt/checkpoint_path.h"
#include "ckpt/name_mapping.h"
#include "ckpt/tf_checkpoint_writer.h"
#include "ckpt/tokenizer_files.h"
#include "tok/text_tokenizer.h"
#include "tok/tokenizer_json.h"
#include "util/error.h"
#include "io/progress.h"
#include "io/created_dirs.h"
#include "io/input.h"
#include "io/durable.h"
#include "io/output.h"
#include "io/output_over_input.h"
#include "io/staged_output.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <set>

namespace bk {
namespace fs = std::filesystem;
namespace {

// The files a native or HF output directory holds: all that --force may replace.
const std::set<std::string> kModelDirectoryFiles = {"model.safetensors", "optimizer.safetensors", "config.json",
                                                    "vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                                    "special_tokens_map.json"};

// --force replaces a model directory whole: a run's checkpoints, a README or notes in it are refused.
bool is_model_directory_file(const fs::directory_entry& entry) {
  std::error_code ec;
  return kModelDirectoryFiles.count(entry.path().filename().string()) > 0 && entry.is_regular_file(ec);
}
constexpr const char* kModelDirectoryDescription =
    "a model directory (model.safetensors, config.json and the tokenizer files)";

// Where --to tf writes: -o PREFIX as TensorFlow names a checkpoint; an existing directory or a name ending in
// '/' stands for DIR/bert_model.ckpt, Google's name.
struct TfOutput {
  std::string directory;  // "." when PREFIX has no directory part
  std::string name;       // PREFIX's file name: what the `checkpoint` file records
  std::string prefix;
};

TfOutput tf_output(const std::string& output) {
  fs::path p(output);
  std::error_code ec;
  if (output.ends_with('/') || fs::is_directory(p, ec)) p /= "bert_model.ckpt";
  TfOutput out;
  out.name = p.filename().string();
  if (out.name.empty() || out.name == "." || out.name == "..")
    fail("{}: not a checkpoint prefix; give one such as DIR/bert_model.ckpt", output);
  out.directory = p.parent_path().empty() ? "." : p.parent_path().string();
  out.prefix = p.string();
  return out;
}

// A file the TF output puts beside its checkpoint: `contents`, unless the file is there already and `same` says
// it holds the same thing (then it is left as it is); another file there is replaced only under --force.
struct BesideFile {
  std::string name, contents;
  std::function<bool(const std::string& existing_path)> same;
  const char* differs;  // what to say when it is not the same
};

// The TF1 output: PREFIX.data-00000-of-00001 and PREFIX.index, then bert_config.json, vocab.txt and `checkpoint`
// beside them (ckpt-convert(1) gives the rules), all staged and renamed into place together.
void write_tf_output(const CkptConvertConfig& cfg, const TfOutput& out, std::vector<StTensor> variables,
                     const std::vector<BesideFile>& beside, const std::vector<std::string>& inputs) {
  std::vector<const BesideFile*> to_write;
  for (const BesideFile& f : beside) {
    const std::string path = (fs::path(out.directory) / f.name).string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      to_write.push_back(&f);
    } else if (!fs::is_regular_file(path, ec)) {
      fail("{}: exists and is not a file", path);
    } else if (!f.same(path)) {
      if (!cfg.force) fail("{}: {}; use -f/--force to replace it", path, f.differs);
      refuse_output_over_inputs("-o", path, OutputKind::file, inputs);  // -f replaces no file the run reads
      to_write.push_back(&f);
    }
  }
  std::vector<TfTensorView> views;
  views.reserve(variables.size());
  for (const StTensor& t : variables) views.push_back({t.name, kTfFloat, t.shape, t.bytes});

  auto write_all = [&](auto&& staged_path) {
    // Data before index, and the `checkpoint` pointer last, as TensorFlow's Saver orders them.
    const std::string data = staged_path(tf_data_path(out.name));
    const std::string index = staged_path(out.name + ".index");
    write_tf_checkpoint(index, data, std::move(views));
    for (const BesideFile* f : to_write) write_file_atomic(staged_path(f->name), f->contents);
  };
  std::error_code ec;
  if (!fs::exists(out.directory, ec)) {
    // A new directory is built whole under a temporary name and renamed into place.
    StagedDirectory dir(out.directory, false);
    try {
      write_all([&](const std::string& name) { return dir.file(name.c_str()); });
      dir.commit();
    } catch (const Error& e) {
      throw Error(dir.as_destination(e.what()));  // the output as the user knows it, not its staging name
    }
  } else {
    if (!fs::is_directory(out.directory, ec)) fail("{}: exists and is not a directory", out.directory);
    StagedFiles files;
    try {
      write_all([&](const std::string& name) { return files.stage((fs::path(out.directory) / name).string()); });
      files.commit();
    } catch (const Error& e) {
      throw Error(files.as_destination(e.what()));  // the file as the user knows it, not its staging name
    }
  }
}

int64_t count_parameters(const std::vector<StTensor>& tensors) {
  int64_t n = 0;
  for (const auto& t : tensors) n += t.numel();
  return n;
}

uint64_t count_bytes(const std::vector<StTensor>& tensors) {
  uint64_t n = 0;
  for (const auto& t : tensors) n += t.bytes.size();
  return n;
}

const std::map<std::string, std::string> kPtMetadata = {{"format", "pt"}};

// Every file the conversion reads (the checkpoint as resolved and all it holds, a TF prefix's files, its config
// and vocabulary, a run's `latest`) kept apart from what it writes: no output replaces one of them or lands inside
// the checkpoint, and a directory output replaced under --force would take them along.
std::vector<std::string> conversion_inputs(const CkptConvertConfig& cfg, const std::string& input,
                                           const std::string& vocab) {
  // What is read, not how it was named: a run's directory may hold an export (-o RUN/hf) beside its checkpoints.
  std::vector<std::string> inputs = checkpoint_read_paths(input);
  for (const std::string& path : {tf_data_path(input), cfg.load.config_path}) inputs.push_back(path);
  if (!vocab.empty())
    for (const std::string& path : tokenizer_file_paths(vocab)) inputs.push_back(path);
  return inputs;
}

void refuse_output_over_checkpoint(const CkptConvertConfig& cfg, const std::vector<std::string>& inputs) {
  if (cfg.to == "native" || cfg.to == "hf") {
    refuse_output_over_inputs("-o", cfg.output, OutputKind::directory, inputs);
  } else if (cfg.to == "pt") {
    refuse_output_over_inputs("-o", cfg.output, OutputKind::file, inputs);
  } else {
    const TfOutput out = tf_output(cfg.output);
    for (const std::string& path : {out.prefix + ".index", tf_data_path(out.prefix)})
      refuse_output_over_inputs("-o", path, OutputKind::file, inputs);
  }
}

// The labels a fine-tuned checkpoint's task.json names (bert-finetune train writes it), for HF's id2label; none for
// other checkpoints.
std::vector<std::string> task_labels(const std::string& input) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(input, ec) ? fs::path(input) : fs::path(input).parent_path();
  const nlohmann::json task = read_checkpoint_task(dir.empty() ? "." : dir.string());
  std::vector<std::string> labels;
  if (task.is_object() && task.contains("labels") && task["labels"].is_array())
    for (const auto& label : task["labels"])
      if (label.is_string()) labels.push_back(label.get<std::string>());
  return labels;
}

}  // namespace

void CkptConvertConfig::validate() const {
  if (input.empty()) usage_fail("one INPUT checkpoint is required");
  if (list == !to.empty()) usage_fail("give either --list or --to FORMAT");
  if (pad_vocab < 0) usage_fail("--pad-vocab must be >= 0, got {}", pad_vocab);
  if (list) return;
  if (to != "native" && to != "hf" && to != "pt" && to != "tf")
    usage_fail("--to must be native, hf, pt or tf, got '{}'", to);
  if (output.empty()) usage_fail("-o OUT is required with --to");
  if ((to == "native" || to == "tf") && pad_vocab > 1)
    usage_fail("--pad-vocab is for hf and pt output; {} checkpoints hold the true vocabulary size", to);
  if (!lower_case.empty() && lower_case != "true" && lower_case != "false")
    usage_fail("--do-lower-case must be true or false, got '{}'", lower_case);
  if (to == "tf" && !lower_case.empty())
    usage_fail("--do-lower-case is not stored with --to tf (Google's scripts take --do_lower_case when they run)");
  if (to != "native" && to != "tf" && load.keep_optimizer)
    usage_fail("--keep-optimizer needs --to native or tf (hf and pt output hold the model only)");
}

namespace {

// --vocab, and the casing --do-lower-case asserts, against the vocabulary the checkpoint was made with
// (tok/vocab_stamp.h): a converted model must not carry another model's tokenizer.
void check_given_vocabulary(const CkptConvertConfig& cfg, const std::string& input) {
  const std::string named = TokenizerFlags{cfg.vocab, cfg.tokenizer}.path();
  if (named.empty() && cfg.lower_case.empty()) return;
  const auto model_vocab = checkpoint_vocab_stamp(input);
  const std::string vocab = named.empty() ? vocab_beside_checkpoint(input) : named;
  if (!model_vocab || vocab.empty()) return;
  std::optional<bool> lower;
  if (!cfg.lower_case.empty()) lower = cfg.lower_case == "true";
  StampedVocab given = vocab_file_stamp(vocab, lower);
  if (lower) given.where += " with --do-lower-case " + cfg.lower_case;
  check_same_vocabulary(given, *model_vocab, lower.has_value(), cfg.allow_vocab_mismatch);
}

}  // namespace

void run_ckpt_convert(const CkptConvertConfig& cfg) {
  cfg.validate();
  if (cfg.list) {
    Output out("-");
    out.write(list_checkpoint(cfg.input));
    out.commit();
    return;
  }
  const std::string input = resolve_checkpoint(cfg.input);
  // The tokenizer travels with the model (hf must have it: transformers would build an empty one without a word).
  const std::string given = TokenizerFlags{cfg.vocab, cfg.tokenizer}.path();
  const std::string vocab = given.empty() ? vocab_beside_checkpoint(input) : given;
  const std::vector<std::string> inputs = conversion_inputs(cfg, input, vocab);
  refuse_output_over_checkpoint(cfg, inputs);
  check_given_vocabulary(cfg, input);
  if (cfg.to == "pt") check_overwrite(cfg.output, cfg.force);
  std::optional<TfOutput> tf_out;
  if (cfg.to == "tf") {
    tf_out = tf_output(cfg.output);
    for (const std::string& path : {tf_out->prefix + ".index", tf_data_path(tf_out->prefix)})
      if (fs::exists(path) && !cfg.force) fail("{}: already exists; use -f/--force to replace it", path);
  }

  Progress progress(cfg.quiet);
  if (cfg.to == "hf" && vocab.empty())
    fail("{}: no vocab.txt (or byte-level tokenizer.json) beside it; name the model's vocabulary with --vocab or "
         "--tokenizer (an HF directory without one "
         "loads a tokenizer that knows no words)", cfg.input);
  LoadOptions load = cfg.load;
  load.progress = &progress;
  LoadedCheckpoint ck = load_canonical_checkpoint(input, load);
  if (cfg.to == "tf" && ck.config.is_modernbert())
    fail("{}: a ModernBERT model has no TF1 form (google-research/bert's code builds BERT only); convert it --to hf, "
         "native or pt", cfg.input);
  progress.stage("writing " + cfg.to);
  std::optional<TokenizerFiles> tokenizer;
  if (cfg.to != "pt" && !vocab.empty()) {
    std::optional<bool> lower;
    if (!cfg.lower_case.empty()) lower = cfg.lower_case == "true";
    tokenizer = read_tokenizer_files(vocab, lower, ck.config.vocab_size, ck.config.max_position_embeddings);
    if (tokenizer->byte_level && lower)
      usage_fail("--do-lower-case is WordPiece's: {} is a byte-level BPE tokenizer, which keeps the text as it is", vocab);
  }
  BertConfig out_config = ck.config;
  if (cfg.pad_vocab > 1) {
    pad_vocab_rows(ck.model, cfg.pad_vocab);
    out_config.vocab_size = ck.config.padded_vocab_size(cfg.pad_vocab);
  }

  // The summary's counts, taken before --to tf hands the tensors on.
  const size_t model_tensors = ck.model.size(), optimizer_tensors = ck.optimizer.size();
  const int64_t parameters = count_parameters(ck.model);
  const uint64_t bytes = count_bytes(ck.model) + count_bytes(ck.optimizer);
  if (cfg.to == "pt") {
    if (!cfg.write_pt) fail("this build of ckpt-convert cannot write .pt files");
    cfg.write_pt(cfg.output, hf_state_dict(ck.model), cfg.force);
  } else if (cfg.to == "tf") {
    // google-research/bert reads bert_config.json (Google's keys) and vocab.txt beside the checkpoint. Files already
    // there are kept when they describe the same model (a release's bert_config.json lacks layer_norm_eps, and its
    // keys come in another order) or hold the same vocabulary.
    std::vector<BesideFile> beside;
    beside.push_back({"bert_config.json", out_config.to_json().dump(2) + "\n",
                      [&](const std::string& path) {
                        try {
                          return BertConfig::load(path) == out_config;
                        } catch (const Error&) {
                          return false;
                        }
                      },
                      "describes another model"});
    if (tokenizer)
      beside.push_back({tokenizer_file_set(*tokenizer).front().first, tokenizer->vocab_bytes,
                        [&](const std::string& path) { return read_file(path) == tokenizer->vocab_bytes; },
                        "holds another vocabulary"});
    const std::string state = tf_checkpoint_state(tf_out->name);
    beside.push_back({"checkpoint", state, [&](const std::string& path) { return read_file(path) == state; },
                      "names another checkpoint as the latest"});
    write_tf_output(cfg, *tf_out, to_tf_variables(std::move(ck.model), std::move(ck.optimizer)), beside, inputs);
  } else {
    recover_killed_commit(cfg.output);
    if (std::error_code ec; cfg.force && fs::is_directory(cfg.output, ec))
      refuse_foreign_entries(cfg.output, is_model_directory_file, kModelDirectoryDescription);
    StagedDirectory dir(cfg.output, cfg.force);
    dir.replaces_only(is_model_directory_file, kModelDirectoryDescription);
    try {
      write_safetensors(dir.file("model.safetensors"), ck.model, kPtMetadata);
      nlohmann::json config_json =
          // ModernBERT has no Google form: native is HF's too, its task class named so that a QA model reads back
          // as one (ModernBERT's two task classes name their output layer alike).
          cfg.to == "hf" || out_config.is_modernbert()
              ? out_config.to_hf_json(head_architecture(out_config, ck.head), ck.num_labels, task_labels(input))
              : out_config.to_json();
      // BERT's config says padding id 0 ([PAD] in Google's vocabularies); a BPE tokenizer's is its own (<pad> is 1
      // in RoBERTa's), which HF takes as the embedding's padding row.
      if (tokenizer && tokenizer->pad_id >= 0 && !out_config.is_modernbert()) config_json["pad_token_id"] = tokenizer->pad_id;
      write_file_atomic(dir.file("config.json"), config_json.dump(2) + "\n");
      if (cfg.to == "native" && !ck.optimizer.empty())
        write_safetensors(dir.file("optimizer.safetensors"), ck.optimizer, kPtMetadata);
      if (tokenizer)
        for (const auto& [name, bytes] : tokenizer_file_set(*tokenizer)) write_file_atomic(dir.file(name.c_str()), bytes);
      dir.commit();
    } catch (const Error& e) {
      throw Error(dir.as_destination(e.what()));  // the output as the user knows it, not its staging name
    }
  }
  std::string what = fmt::format("{} tensors ({} parameters)", model_tensors, parameters);
  if (optimizer_tensors) what += fmt::format(", {} optimizer tensors", optimizer_tensors);
  if (ck.head != BertHead::pretraining) what += fmt::format(" of a {}", head_architecture(ck.config, ck.head));
  if (ck.dropped_training_state) what += fmt::format(", {} training variables dropped", ck.dropped_training_state);
  if (ck.dropped_pooler) what += fmt::format(", {} pooler tensors dropped (no pooler in it)", ck.dropped_pooler);
  if (!ck.unmapped.empty()) what += fmt::format(", {} unmapped dropped", ck.unmapped.size());
  if (tokenizer && cfg.to == "tf")
    what += fmt::format(", {} from {}", tokenizer_file_set(*tokenizer).front().first, tokenizer->vocab_path);
  else if (tokenizer)
    what += fmt::format(", tokenizer from {} ({})", tokenizer->vocab_path,
                        tokenizer->byte_level ? "byte-level BPE" : tokenizer->lower_case ? "uncased" : "cased");
  progress.finish(bytes, what + " -> " + cfg.to);
}

}  // namespace bk
