#include "cli/torch_backend.h"

#include "util/error.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

void exec_torch_backend(const std::string& name, char** argv, const std::string& what) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) fail("cannot find this program's path (/proc/self/exe): {}", ec.message());
  const fs::path dir = self.parent_path();
  for (const fs::path& candidate : {dir / name, dir / ".." / "libexec" / "bertkit" / name}) {
    if (::access(candidate.c_str(), X_OK) != 0) continue;
    const std::string path = candidate.string();
    argv[0] = const_cast<char*>(path.c_str());
    ::execv(path.c_str(), argv);
    fail("cannot run {}: {}", path, std::strerror(errno));
  }
  fail("{} needs LibTorch, and this build has none ({} is not beside {}): build with -DBERTKIT_WITH_TORCH=ON "
       "(scripts/setup.sh --torch)", what, name, self.string());
}

}  // namespace bk
