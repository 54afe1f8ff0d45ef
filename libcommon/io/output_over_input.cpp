#include "io/output_over_input.h"

#include "util/error.h"
#include "util/printable.h"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

namespace bk {
namespace fs = std::filesystem;
namespace {

struct FileId {
  dev_t device;
  ino_t inode;
  bool directory;
  bool operator==(const FileId& o) const { return device == o.device && inode == o.inode; }
};

std::optional<FileId> file_id(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino, S_ISDIR(st.st_mode)};
}

// Whether `path` (existing or not) lies strictly inside the directory `dir`: one of the existing directories above
// it is `dir`. Symbolic links on the way are followed as the kernel would follow them.
bool lies_inside(const std::string& path, const FileId& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return false;
  for (fs::path up = p.parent_path(); !up.empty(); up = up.parent_path()) {
    if (const auto id = file_id(up); id && *id == dir) return true;
    if (up == up.root_path()) break;
  }
  return false;
}

std::string shown(const std::string& path) { return printable_excerpt(path, 400); }

}  // namespace

bool is_or_lies_inside(const std::string& path, const std::string& dir) {
  const auto d = file_id(dir), p = file_id(path);
  return d && p && (*p == *d || (d->directory && lies_inside(path, *d)));
}

void refuse_output_over_inputs(const char* flag, const std::string& output, OutputKind kind,
                               const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return;
  const auto out = file_id(output);
  for (const std::string& input : inputs) {
    if (input.empty() || input == "-") continue;
    const auto in = file_id(input);
    if (!in) continue;
    if (out && *out == *in)
      usage_fail("{} {}: is the input {}; write the output elsewhere", flag, shown(output), shown(input));
    if (in->directory && lies_inside(output, *in))
      usage_fail("{} {}: lies inside the input {}; write the output elsewhere", flag, shown(output), shown(input));
    if (kind == OutputKind::directory && out && out->directory && lies_inside(input, *out))
      usage_fail("{} {}: holds the input {}, which the output would replace; write the output elsewhere", flag,
                 shown(output), shown(input));
  }
}

}  // namespace bk
