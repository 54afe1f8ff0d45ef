// ckpt-convert's run: the canonical tensor set (ckpt/convert.h) written out as native and HF directories, a TF1
// checkpoint with its bert_config.json and vocab.txt, or a torch .pt through a callback.
#include "ckpt/ckpt_convert.h"

#include "ckpt/convert.h"

#include "ckpt/checkpoint_path.h"
#include "ckpt/name_mapping.h"
#include "ckpt/tf_checkpoint_writer.h"
#include "ckpt/tokenizer_files.h"
#include "cli/run_tool.h"
#include "util/error.h"
#include "cli/progress.h"
#include "io/created_dirs.h"
#include "io/input.h"
#include "io/durable.h"
#include "io/output.h"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <signal.h>
#include <csignal>

namespace bk {
namespace fs = std::filesystem;
namespace {

// Blocks every signal for its lifetime: the renames that put an output in place run as one step.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &previous_);
  }
  ~SignalsHeld() { sigprocmask(SIG_SETMASK, &previous_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

// A directory built under a hidden temporary name beside its destination and renamed onto it by commit();
// removed (with whatever was written into it) if commit() is never reached.
class StagedDirectory {
 public:
  StagedDirectory(const std::string& destination, bool overwrite) : destination_(destination) {
    fs::path dest(destination);
    if (dest.filename().empty()) dest = dest.parent_path();
    std::error_code same_ec;
    if (dest.empty() || dest.filename() == "." || dest.filename() == ".." || fs::equivalent(dest, fs::current_path(), same_ec))
      fail("{}: names the current directory (or its parent); give the output directory a name of its own",
           destination);
    if (fs::exists(dest) && !overwrite) fail("{}: already exists; use -f/--force to replace it", destination);
    if (fs::exists(dest) && !fs::is_directory(dest)) fail("{}: exists and is not a directory", destination);
    destination_ = dest.string();
    fs::path parent = dest.parent_path().empty() ? fs::path(".") : dest.parent_path();
    parents_.create(parent);  // missing parents are made, and removed again unless the output is committed
    staging_ = (parent / fmt::format(".{}.partial-{}", dest.filename().string(), ::getpid())).string();
    fs::remove_all(staging_);
    fs::create_directory(staging_);
    // An interrupt removes the staging directory's files, then the directory (registered first: the handler
    // reaches directories after files).
    slots_.push_back(register_cleanup_dir(staging_));
  }
  ~StagedDirectory() {
    std::error_code ignored;
    if (!committed_) fs::remove_all(staging_, ignored);
    for (int slot : slots_) unregister_cleanup(slot);
  }
  std::string file(const char* name) {
    const std::string path = (fs::path(staging_) / name).string();
    slots_.push_back(register_cleanup(path));
    return path;
  }
  // Once the output is in place an interrupt no longer undoes anything: signals are held during the renames and
  // ignored after them, so the run ends as it would have (exit 0, its summary) with the complete output.
  void commit() {
    SignalsHeld held;
    // The files (each already synced by its own commit) and the staging directory's entries reach the disk
    // before the rename that makes them the output, and the rename itself after it (io/durable.h).
    sync_directory_contents(staging_, destination_);
    const std::string parent = fs::path(destination_).parent_path().empty() ? "." : fs::path(destination_).parent_path().string();
    std::error_code ec;
    if (fs::exists(destination_)) {
      // --force: the old directory goes only once the new one is complete.
      std::string old = staging_ + ".old";
      fs::rename(destination_, old, ec);
      if (ec) fail("{}: cannot move the old output aside to replace it: {}", destination_, ec.message());
      fs::rename(staging_, destination_, ec);
      if (ec) {
        std::error_code back;
        fs::rename(old, destination_, back);
        fail("{}: cannot rename into place: {}", destination_, ec.message());
      }
      sync_directory(parent, destination_);
      fs::remove_all(old, ec);
    } else {
      fs::rename(staging_, destination_, ec);
      if (ec) fail("{}: cannot rename into place: {}", destination_, ec.message());
      sync_directory(parent, destination_);
    }
    committed_ = true;
    parents_.commit();
    for (int slot : slots_) unregister_cleanup(slot);
    slots_.clear();
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_IGN);
  }

 private:
  CreatedDirs parents_;  // destroyed after the body of ~StagedDirectory has removed the staging directory
  std::string destination_, staging_;
  bool committed_ = false;
  std::vector<int> slots_;  // cleanup-table slots (cli/run_tool.h)
};

// Files put into an existing directory: each written under a hidden temporary name beside its destination
// (".NAME.partial-PID"), then all renamed into place by commit(), in the order they were asked for. A file
// replaced under --force is moved aside first and only removed once every rename has succeeded; a failed rename
// puts back what was there. Without commit() (an error, an interrupt) the temporaries are removed.
class StagedFiles {
 public:
  explicit StagedFiles(std::string directory) : directory_(std::move(directory)) {}
  ~StagedFiles() {
    std::error_code ignored;
    for (const auto& f : files_)
      if (!committed_) fs::remove(f.temp, ignored);
    for (int slot : slots_) unregister_cleanup(slot);
  }
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  std::string file(const std::string& name) {
    Staged f{(fs::path(directory_) / name).string(),
             (fs::path(directory_) / fmt::format(".{}.partial-{}", name, ::getpid())).string()};
    std::error_code ignored;
    fs::remove(f.temp, ignored);
    slots_.push_back(register_cleanup(f.temp));
    files_.push_back(f);
    return f.temp;
  }

  void commit() {
    SignalsHeld held;
    struct Done {
      std::string destination, aside;
    };
    std::vector<Done> done;
    auto undo = [&] {
      std::error_code ignored;
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        fs::remove(it->destination, ignored);
        if (!it->aside.empty()) fs::rename(it->aside, it->destination, ignored);
      }
    };
    for (const auto& f : files_) {
      std::error_code ec;
      std::string aside;
      if (fs::exists(f.destination, ec)) {
        aside = f.temp + ".old";
        fs::rename(f.destination, aside, ec);
        if (ec) {
          undo();
          fail("{}: cannot move the old file aside to replace it: {}", f.destination, ec.message());
        }
      }
      fs::rename(f.temp, f.destination, ec);
      if (ec) {
        std::error_code ignored;
        if (!aside.empty()) fs::rename(aside, f.destination, ignored);
        undo();
        fail("{}: cannot rename into place: {}", f.destination, ec.message());
      }
      done.push_back({f.destination, aside});
    }
    committed_ = true;
    std::error_code ignored;
    for (const auto& d : done)
      if (!d.aside.empty()) fs::remove(d.aside, ignored);
    for (int slot : slots_) unregister_cleanup(slot);
    slots_.clear();
    // As StagedDirectory::commit: the output is in place, an interrupt no longer undoes anything.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_IGN);
  }

 private:
  struct Staged {
    std::string destination, temp;
  };
  std::string directory_;
  std::vector<Staged> files_;
  std::vector<int> slots_;
  bool committed_ = false;
};

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
                     const std::vector<BesideFile>& beside) {
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
    write_all([&](const std::string& name) { return dir.file(name.c_str()); });
    dir.commit();
  } else {
    if (!fs::is_directory(out.directory, ec)) fail("{}: exists and is not a directory", out.directory);
    StagedFiles files(out.directory);
    write_all([&](const std::string& name) { return files.file(name); });
    files.commit();
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

void run_ckpt_convert(const CkptConvertConfig& cfg) {
  cfg.validate();
  if (cfg.list) {
    Output out("-");
    out.write(list_checkpoint(cfg.input));
    out.commit();
    return;
  }
  if (cfg.to == "pt") check_overwrite(cfg.output, cfg.force);
  std::optional<TfOutput> tf_out;
  if (cfg.to == "tf") {
    tf_out = tf_output(cfg.output);
    for (const std::string& path : {tf_out->prefix + ".index", tf_data_path(tf_out->prefix)})
      if (fs::exists(path) && !cfg.force) fail("{}: already exists; use -f/--force to replace it", path);
  }

  Progress progress(cfg.quiet);
  const std::string input = resolve_checkpoint(cfg.input);
  // The tokenizer travels with the model (hf must have it: transformers would build an empty one without a word).
  const std::string vocab = cfg.vocab.empty() ? vocab_beside_checkpoint(input) : cfg.vocab;
  if (cfg.to == "hf" && vocab.empty())
    fail("{}: no vocab.txt beside it; name the model's vocabulary with --vocab (an HF directory without one "
         "loads a tokenizer that knows no words)", cfg.input);
  LoadOptions load = cfg.load;
  load.progress = &progress;
  LoadedCheckpoint ck = load_checkpoint(input, load);
  progress.stage("writing " + cfg.to);
  std::optional<TokenizerFiles> tokenizer;
  if (cfg.to != "pt" && !vocab.empty()) {
    std::optional<bool> lower;
    if (!cfg.lower_case.empty()) lower = cfg.lower_case == "true";
    tokenizer = read_tokenizer_files(vocab, lower, ck.config.vocab_size, ck.config.max_position_embeddings);
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
      beside.push_back({"vocab.txt", tokenizer->vocab_bytes,
                        [&](const std::string& path) { return read_file(path) == tokenizer->vocab_bytes; },
                        "holds another vocabulary"});
    const std::string state = tf_checkpoint_state(tf_out->name);
    beside.push_back({"checkpoint", state, [&](const std::string& path) { return read_file(path) == state; },
                      "names another checkpoint as the latest"});
    write_tf_output(cfg, *tf_out, to_tf_variables(std::move(ck.model), std::move(ck.optimizer)), beside);
  } else {
    StagedDirectory dir(cfg.output, cfg.force);
    write_safetensors(dir.file("model.safetensors"), ck.model, kPtMetadata);
    nlohmann::json config_json =
        cfg.to == "hf" ? out_config.to_hf_json(head_architecture(ck.head), ck.num_labels) : out_config.to_json();
    write_file_atomic(dir.file("config.json"), config_json.dump(2) + "\n");
    if (cfg.to == "native" && !ck.optimizer.empty())
      write_safetensors(dir.file("optimizer.safetensors"), ck.optimizer, kPtMetadata);
    if (tokenizer) {
      write_file_atomic(dir.file("vocab.txt"), tokenizer->vocab_bytes);
      write_file_atomic(dir.file("tokenizer_config.json"), tokenizer_config_json(*tokenizer));
      write_file_atomic(dir.file("special_tokens_map.json"), special_tokens_map_json());
    }
    dir.commit();
  }
  std::string what = fmt::format("{} tensors ({} parameters)", model_tensors, parameters);
  if (optimizer_tensors) what += fmt::format(", {} optimizer tensors", optimizer_tensors);
  if (ck.head != BertHead::pretraining) what += fmt::format(" of a {}", head_architecture(ck.head));
  if (ck.dropped_training_state) what += fmt::format(", {} training variables dropped", ck.dropped_training_state);
  if (ck.dropped_pooler) what += fmt::format(", {} pooler tensors dropped (no pooler in it)", ck.dropped_pooler);
  if (!ck.unmapped.empty()) what += fmt::format(", {} unmapped dropped", ck.unmapped.size());
  if (tokenizer && cfg.to == "tf") what += fmt::format(", vocab.txt from {}", tokenizer->vocab_path);
  else if (tokenizer) what += fmt::format(", tokenizer from {} ({})", tokenizer->vocab_path, tokenizer->lower_case ? "uncased" : "cased");
  progress.finish(bytes, what + " -> " + cfg.to);
}

}  // namespace bk
