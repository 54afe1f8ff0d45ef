#include "train/loop/output_dir.h"

#include "ckpt/checkpoint_path.h"
#include "io/output_over_input.h"
#include "util/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bk {

OutputDirLock::OutputDirLock(const std::string& output_dir) {
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (ec) fail("{}: cannot create the output directory: {}", output_dir, ec.message());
  const std::string path = (fs::path(output_dir) / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char text[32] = {};
    const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
    ::close(fd_);
    fd_ = -1;
    const std::string pid = n > 0 ? std::string(text, static_cast<size_t>(n)) : "?";
    fail("{}: in use by another run (pid {}); two runs in one directory would overwrite each other's checkpoints",
         output_dir, pid.substr(0, pid.find_first_of("\n ")));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    fail("{}: cannot write: {}", path, std::strerror(errno));
}

OutputDirLock::~OutputDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (removing it would race with a waiting run)
}

void claim_for_new_run(const std::string& output_dir, bool force, const std::vector<std::string>& inputs) {
  const std::vector<std::string> dirs = checkpoint_step_dirs(output_dir);
  if (dirs.empty()) return;
  if (!force)
    fail("{}: holds checkpoints of an earlier run (the newest {}); --resume continues it, --force starts over and "
         "removes them", output_dir, fs::path(dirs.back()).filename().string());
  for (const std::string& dir : dirs)
    for (const std::string& input : inputs)
      if (!input.empty() && is_or_lies_inside(input, dir))
        usage_fail("--force would remove {}, which holds {}, an input of this run; start from a copy of it, or "
                   "give another --output-dir", dir, input);
  // What the earlier run wrote there goes: its step directories, their temporaries and `latest`; a file of the
  // user's stays, and with it the folder.
  std::vector<std::string> written = checkpoint_step_temporaries(output_dir);
  written.insert(written.end(), dirs.begin(), dirs.end());
  written.push_back((fs::path(output_dir) / "checkpoints" / "latest").string());
  std::error_code ec;
  for (const std::string& path : written) {
    fs::remove_all(path, ec);
    if (ec) fail("{}: cannot remove: {}", path, ec.message());
  }
  fs::remove(fs::path(output_dir) / "checkpoints", ec);  // only when empty
}

}  // namespace bk
