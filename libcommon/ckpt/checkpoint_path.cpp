#include "ckpt/checkpoint_path.h"

#include "tok/tokenizer_json.h"

#include "io/input.h"
#include "util/error.h"
#include "util/json_read.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace bk {
namespace {

std::string read_first_line(const fs::path& path) {
  std::string name = read_file(path.string());
  const size_t end = name.find_first_of("\r\n");
  if (end != std::string::npos) name.resize(end);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

// The run directory a checkpoint path sits in: OUT for OUT/checkpoints/step-N, OUT/checkpoints and OUT.
fs::path run_dir_of(const fs::path& path) {
  if (path.parent_path().filename() == "checkpoints") return path.parent_path().parent_path();
  if (path.filename() == "checkpoints") return path.parent_path();
  return path;
}

}  // namespace

namespace {

// step-NNNNNNNN, as bert-train names a step directory.
bool is_step_name(std::string_view name) {
  return name.size() == 13 && name.starts_with("step-") &&
         std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The directories under OUTPUT_DIR/checkpoints whose names `wanted` accepts, sorted.
std::vector<std::string> checkpoint_entries(const std::string& output_dir, bool (*wanted)(std::string_view)) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(output_dir) / "checkpoints", ec))
    if (wanted(entry.path().filename().string()) && entry.is_directory(ec)) dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());  // fixed-width step numbers sort as numbers
  return dirs;
}

}  // namespace

std::vector<std::string> checkpoint_step_dirs(const std::string& output_dir) {
  return checkpoint_entries(output_dir, is_step_name);
}

std::vector<std::string> checkpoint_step_temporaries(const std::string& output_dir) {
  std::vector<std::string> out = checkpoint_entries(output_dir, [](std::string_view name) {
    return name.size() == 13 + 11 && is_step_name(name.substr(0, 13)) && name.substr(13, 5) == ".tmp.";
  });
  // `latest` is written under a temporary name too (io/output.h): latest.tmp.XXXXXX, a file.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(output_dir) / "checkpoints", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 17 && name.starts_with("latest.tmp.") && entry.is_regular_file(ec))
      out.push_back(entry.path().string());
  }
  return out;
}

std::optional<std::string> latest_checkpoint(const std::string& output_dir) {
  const fs::path root = fs::path(output_dir) / "checkpoints";
  if (!fs::exists(root / "latest")) {
    const std::vector<std::string> dirs = checkpoint_step_dirs(output_dir);
    if (dirs.empty()) return std::nullopt;
    return dirs.back();
  }
  // bert-train writes `latest` as a one-line file; a symbolic link to the step directory names it just as well.
  std::error_code ec;
  std::string name;
  if (fs::is_symlink(root / "latest", ec)) {
    fs::path target = fs::read_symlink(root / "latest", ec).lexically_normal();
    if (target.filename().empty()) target = target.parent_path();  // "step-00000010/"
    name = target.filename().string();
  } else {
    name = read_first_line(root / "latest");
  }
  if (name.empty() || name.find('/') != std::string::npos || !fs::is_directory(root / name))
    fail("{}: names '{}', which is not a checkpoint directory", (root / "latest").string(), name);
  return (root / name).string();
}

std::string tf_prefix_in(const std::filesystem::path& dir) {
  std::error_code ec;
  std::string prefix;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= 6 || !name.ends_with(".index") || !entry.is_regular_file(ec)) continue;
    if (!prefix.empty()) return "";  // two checkpoints: the user names one
    prefix = (dir / name.substr(0, name.size() - 6)).string();
  }
  return prefix;
}

std::string resolve_checkpoint(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  // Nothing of that name (nor a TF1 prefix's index): said first, before any other flag is looked for beside it.
  if (!fs::exists(p, ec) && !fs::exists(path + ".index", ec))
    fail("{}: no such checkpoint directory or file", path);
  if (!fs::is_directory(p, ec) || fs::exists(p / "model.safetensors", ec)) return path;
  if (std::string prefix = tf_prefix_in(p); !prefix.empty()) return prefix;
  fs::path run;
  if (fs::is_directory(p / "checkpoints", ec)) run = p;
  else if (fs::exists(p / "latest", ec) || p.filename() == "checkpoints" ||
           (p.filename().empty() && p.parent_path().filename() == "checkpoints"))
    run = p.filename().empty() ? p.parent_path().parent_path() : p.parent_path();
  else
    return path;  // not a run: the loader says what is missing
  if (run.empty()) run = ".";
  const std::optional<std::string> latest = latest_checkpoint(run.string());
  if (!latest) fail("{}: a training run's directory with no complete checkpoint yet", path);
  return *latest;
}

std::string vocab_beside_checkpoint(const std::string& resolved) {
  const fs::path p(resolved);
  std::error_code ec;
  const fs::path dir = fs::is_directory(p, ec) ? p : (p.parent_path().empty() ? fs::path(".") : p.parent_path());
  // vocab.txt first; a tokenizer.json only when it is byte-level BPE (an HF BERT directory's is WordPiece's)
  for (const fs::path& folder : {dir, run_dir_of(dir)}) {
    if (fs::is_regular_file(folder / "vocab.txt", ec)) return (folder / "vocab.txt").string();
    for (const char* name : {"tokenizer.json", "vocab.json"})
      if (is_byte_level_tokenizer_file((folder / name).string())) return (folder / name).string();
  }
  return "";
}

std::vector<std::string> checkpoint_read_paths(const std::string& resolved) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(resolved, ec), ec);  // "step-N/", a link to it: what it names
  if (p.filename().empty()) p = p.parent_path();
  std::vector<std::string> paths = {resolved};
  if (!fs::is_directory(p, ec)) {
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    // A TF prefix's files (the data file's name as Google's single-shard checkpoints have it) and the configs read
    // beside a prefix or a weights file.
    for (const std::string& path : {resolved + ".index", resolved + ".data-00000-of-00001",
                                    (dir / "bert_config.json").string(), (dir / "config.json").string()})
      paths.push_back(path);
  } else if (const fs::path parent = p.parent_path(); parent.filename() == "checkpoints") {
    paths.push_back(parent.string());  // what the run's next reader lists: `latest` and the step directories
    paths.push_back((parent / "latest").string());
  }
  if (const std::string vocab = vocab_beside_checkpoint(resolved); !vocab.empty()) {
    for (const std::string& path : tokenizer_file_paths(vocab)) paths.push_back(path);
    paths.push_back((fs::path(vocab).parent_path() / "tokenizer_config.json").string());
  }
  return paths;
}

std::optional<bool> tokenizer_lower_case(const std::string& vocab_path) {
  const fs::path path = fs::path(vocab_path).parent_path() / "tokenizer_config.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  const nlohmann::json json = parse_json(read_file(path.string()), path.string());
  if (!json.is_object() || !json.contains("do_lower_case") || !json["do_lower_case"].is_boolean()) return std::nullopt;
  return json["do_lower_case"].get<bool>();
}

nlohmann::json read_checkpoint_task(const std::string& dir) {
  const fs::path path = fs::path(dir) / "task.json";
  if (!fs::exists(path)) return nullptr;
  return parse_json(read_file(path.string()), path.string());
}

}  // namespace bk
