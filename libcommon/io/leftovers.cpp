#include "io/leftovers.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <ctime>
#include <filesystem>

namespace bk {
namespace fs = std::filesystem;
namespace {

// When this process started, as the file system's clock reads it: a file that changed since may be a temporary a
// concurrent run has just made and not yet locked.
struct timespec process_start() {
  static const struct timespec start = [] {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return now;
  }();
  return start;
}

bool changed_before(const struct stat& st, const struct timespec& t) {
  return st.st_ctim.tv_sec < t.tv_sec || (st.st_ctim.tv_sec == t.tv_sec && st.st_ctim.tv_nsec < t.tv_nsec);
}

// The static above is set when the library loads, not when the first sweep runs.
[[maybe_unused]] const struct timespec kStarted = process_start();

}  // namespace

const std::string& host_name() {
  static const std::string name = [] {
    struct utsname u {};
    std::string n = ::uname(&u) == 0 ? u.nodename : "host";
    for (char& c : n)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    return n.empty() ? std::string("host") : n;
  }();
  return name;
}

void hold_temporary(int fd) {
  if (fd >= 0) ::flock(fd, LOCK_EX | LOCK_NB);
}

int hold_temporary_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  hold_temporary(fd);
  return fd;
}

bool is_dead_temporary(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !changed_before(st, process_start())) return false;
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return false;
  const int fd = ::open(path.c_str(), (S_ISDIR(st.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool unheld = ::flock(fd, LOCK_EX | LOCK_NB) == 0;  // released by the close
  ::close(fd);
  return unheld;
}

void sweep_leftovers(const std::string& dir, const std::function<bool(std::string_view name)>& is_temporary) {
  // A directory born after this process started (a staging directory it made) holds no dead run's temporary:
  // listing it for each of thousands of outputs would cost their square.
  struct statx born {};
  if (::statx(AT_FDCWD, dir.empty() ? "." : dir.c_str(), 0, STATX_BTIME, &born) == 0 && (born.stx_mask & STATX_BTIME)) {
    const struct timespec start = process_start();
    if (born.stx_btime.tv_sec > start.tv_sec ||
        (born.stx_btime.tv_sec == start.tv_sec && born.stx_btime.tv_nsec >= start.tv_nsec))
      return;
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_temporary(name) || !is_dead_temporary(it->path().string())) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

void sweep_dead_siblings(const std::string& name_template) {
  const fs::path path(name_template);
  std::string prefix = path.filename().string();
  if (!prefix.ends_with("XXXXXX")) return;
  prefix.resize(prefix.size() - 6);
  sweep_leftovers(path.parent_path().string(), [&](std::string_view name) {
    return name.size() == prefix.size() + 6 && name.starts_with(prefix);
  });
}

}  // namespace bk
