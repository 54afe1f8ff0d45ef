#include "io/created_dirs.h"

#include "io/cleanup.h"
#include "io/durable.h"
#include "util/error.h"

#include <unistd.h>

#include <set>

namespace fs = std::filesystem;

namespace bk {

CreatedDirs::~CreatedDirs() {
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    if (!committed_) ::rmdir(it->first.c_str());  // only an empty one goes
    unregister_cleanup(it->second);
  }
}

void CreatedDirs::create(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  fs::path p = dir;
  for (; !p.empty() && !fs::exists(fs::status(p, ec)); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  // The nearest part of the path that exists must be a directory: a file there is named, not a child of it.
  if (!p.empty() && fs::exists(fs::status(p, ec)) && !fs::is_directory(p, ec))
    fail("{}: exists and is not a directory", p.string());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) fail("{}: cannot create directory: {}", it->string(), ec.message());
    dirs_.emplace_back(it->string(), register_cleanup_dir(it->string()));
  }
  if (!fs::is_directory(dir, ec)) fail("{}: exists and is not a directory", dir.string());
}

void CreatedDirs::create_parent(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) create(parent);
}

int CreatedDirs::missing(const fs::path& dir) {
  int count = 0;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    ++count;
    if (p == p.parent_path()) break;
  }
  return count;
}

void CreatedDirs::commit() { committed_ = true; }

void CreatedDirs::sync() const {
  std::set<std::string> done;
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    const std::string parent = fs::path(it->first).parent_path().string();
    if (done.insert(parent).second) sync_directory(parent, it->first);
  }
}

}  // namespace bk
