// ckpt-convert's run: the canonical tensor set (ckpt/convert.h) written out as native and HF directories, or as a
// torch .pt through a callback.
#include "ckpt/ckpt_convert.h"

#include "ckpt/convert.h"

#include "ckpt/name_mapping.h"
#include "cli/run_tool.h"
#include "util/error.h"
#include "cli/progress.h"
#include "io/durable.h"
#include "io/output.h"

#include <unistd.h>

#include <filesystem>
#include <signal.h>
#include <csignal>

namespace bk {
namespace fs = std::filesystem;
namespace {

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
    if (!fs::is_directory(parent)) fail("{}: parent directory does not exist", destination);
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
    sigset_t all, previous;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &previous);
    struct Restore {
      sigset_t* previous;
      ~Restore() { sigprocmask(SIG_SETMASK, previous, nullptr); }
    } restore{&previous};
    // The files (each already synced by its own commit) and the staging directory's entries reach the disk
    // before the rename that makes them the output, and the rename itself after it (io/durable.h).
    sync_directory_contents(staging_, destination_);
    const std::string parent = fs::path(destination_).parent_path().string();
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
    for (int slot : slots_) unregister_cleanup(slot);
    slots_.clear();
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_IGN);
  }

 private:
  std::string destination_, staging_;
  bool committed_ = false;
  std::vector<int> slots_;  // cleanup-table slots (cli/run_tool.h)
};

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
  if (to != "native" && to != "hf" && to != "pt") usage_fail("--to must be native, hf or pt, got '{}'", to);
  if (output.empty()) usage_fail("-o OUT is required with --to");
  if (to == "native" && pad_vocab > 1)
    usage_fail("--pad-vocab is for hf and pt output; native checkpoints hold the true vocabulary size");
  if (to != "native" && load.keep_optimizer)
    usage_fail("--keep-optimizer needs --to native (hf and pt output hold the model only)");
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

  Progress progress(cfg.quiet);
  LoadedCheckpoint ck = load_checkpoint(cfg.input, cfg.load);
  BertConfig out_config = ck.config;
  if (cfg.pad_vocab > 1) {
    pad_vocab_rows(ck.model, cfg.pad_vocab);
    out_config.vocab_size = ck.config.padded_vocab_size(cfg.pad_vocab);
  }

  if (cfg.to == "pt") {
    if (!cfg.write_pt) fail("this build of ckpt-convert cannot write .pt files");
    cfg.write_pt(cfg.output, hf_state_dict(ck.model), cfg.force);
  } else {
    StagedDirectory dir(cfg.output, cfg.force);
    write_safetensors(dir.file("model.safetensors"), ck.model, kPtMetadata);
    nlohmann::json config_json =
        cfg.to == "hf" ? out_config.to_hf_json(head_architecture(ck.head), ck.num_labels) : out_config.to_json();
    write_file_atomic(dir.file("config.json"), config_json.dump(2) + "\n");
    if (cfg.to == "native" && !ck.optimizer.empty())
      write_safetensors(dir.file("optimizer.safetensors"), ck.optimizer, kPtMetadata);
    dir.commit();
  }
  std::string what = fmt::format("{} tensors ({} parameters)", ck.model.size(), count_parameters(ck.model));
  if (!ck.optimizer.empty()) what += fmt::format(", {} optimizer tensors", ck.optimizer.size());
  if (ck.head != BertHead::pretraining) what += fmt::format(" of a {}", head_architecture(ck.head));
  if (ck.dropped_training_state) what += fmt::format(", {} training variables dropped", ck.dropped_training_state);
  if (ck.dropped_pooler) what += fmt::format(", {} pooler tensors dropped (no pooler in it)", ck.dropped_pooler);
  if (!ck.unmapped.empty()) what += fmt::format(", {} unmapped dropped", ck.unmapped.size());
  progress.finish(count_bytes(ck.model) + count_bytes(ck.optimizer), what + " -> " + cfg.to);
}

}  // namespace bk
