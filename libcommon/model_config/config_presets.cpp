#include "model_config/config_presets.h"

#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace bk {

namespace fs = std::filesystem;

const std::vector<std::string>& bert_config_presets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out{"bert-base", "bert-large"};
    for (int layers : {2, 4, 6, 8, 10, 12})
      for (int hidden : {128, 256, 512, 768}) out.push_back(fmt::format("bert-L{}-H{}", layers, hidden));
    out.insert(out.end(), {"modernbert-base", "modernbert-large"});
    return out;
  }();
  return names;
}

std::vector<fs::path> bert_config_preset_dirs(const fs::path& executable) {
  const fs::path bin = executable.parent_path();
  // A build tree's tools (BUILD/tools/TOOL, BUILD/tests/TEST) find BUILD/share/bertkit/configs the first way.
  return {
      (bin / ".." / "share" / "bertkit" / "configs").lexically_normal(),       // PREFIX/bin/TOOL
      (bin / ".." / ".." / "share" / "bertkit" / "configs").lexically_normal(),  // PREFIX/libexec/bertkit/TOOL
  };
}

bool names_bert_config_preset(const std::string& name_or_path) {
  std::error_code ec;
  // A directory is not a config: `--output-dir bert-base --config bert-base` still means the preset.
  if (!name_or_path.empty() && fs::exists(name_or_path, ec) && !fs::is_directory(name_or_path, ec)) return false;
  const auto& presets = bert_config_presets();
  return std::find(presets.begin(), presets.end(), name_or_path) != presets.end();
}

std::string resolve_bert_config(const std::string& name_or_path, const std::vector<fs::path>& preset_dirs) {
  std::error_code ec;
  if (!name_or_path.empty() && fs::exists(name_or_path, ec) && !fs::is_directory(name_or_path, ec))
    return name_or_path;
  const auto& presets = bert_config_presets();
  if (!names_bert_config_preset(name_or_path))
    fail("--config '{}': no such file, and not a preset ({})", name_or_path, fmt::join(presets, ", "));
  for (const fs::path& dir : preset_dirs) {
    const fs::path file = dir / (name_or_path + ".json");
    if (fs::is_regular_file(file, ec)) return file.string();
  }
  std::vector<std::string> looked;
  for (const fs::path& dir : preset_dirs) looked.push_back(dir.string());
  fail("--config {}: the preset's file {}.json is in none of {}: is share/bertkit/configs installed?", name_or_path,
       name_or_path, fmt::join(looked, ", "));
}

std::string resolve_bert_config(const std::string& name_or_path) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return resolve_bert_config(name_or_path, ec ? std::vector<fs::path>{} : bert_config_preset_dirs(self));
}

}  // namespace bk
