#include "io/output.h"

#include "util/error.h"
#include "io/cleanup.h"
#include "io/durable.h"
#include "io/leftovers.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace bk {

void check_overwrite(const std::string& path, bool overwrite) {
  if (path == "-" || path.empty()) return;
  struct stat st {};
  if (!overwrite && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    fail("{}: already exists; use --force to overwrite it", path);
}

void refuse_stdout_output(const std::string& path, const char* what, const char* why, const char* example) {
  if (path != "-" && !path.empty()) return;
  usage_fail("-o {}: {} cannot go to stdout ({}); give a name, e.g. -o {}", path.empty() ? "''" : path, what, why,
             example);
}

Output::Output(const std::string& path, bool overwrite, size_t buffer_size) : path_(path) {
  buffer_.reserve(buffer_size);
  if (path == "-" || path.empty()) {
    fd_ = 1;
    name_ = "<stdout>";
    return;
  }
  name_ = path;
  check_overwrite(path, overwrite);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail("{}: is a directory", path);
  // A device or pipe named as output (/dev/null, /dev/stdout, a FIFO) is written in place: renaming a
  // temporary onto it would replace the device node with a regular file.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("{}: cannot open output: {}", path, std::strerror(errno));
    return;
  }
  created_.create_parent(path);
  // The temporary lives in the same directory so that rename() is atomic.
  temp_path_ = temporary_sibling(path, "", ".tmp.XXXXXX");
  sweep_dead_siblings(temp_path_);  // what a killed run writing this output left
  fd_ = create_temporary(temp_path_, cleanup_slot_);
  if (fd_ < 0) fail("{}: cannot create output: {}", path, std::strerror(errno));
  ::fchmod(fd_, 0644 & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }());
}

std::string temporary_sibling(const std::string& path, std::string_view prefix, std::string_view suffix) {
  constexpr size_t kNameMax = 255;
  const std::filesystem::path p(path);
  std::string name = p.filename().string();
  const size_t room = kNameMax - std::min(kNameMax, prefix.size() + suffix.size());
  if (name.size() > room) name.resize(room);
  return (p.parent_path() / (std::string(prefix) + name + std::string(suffix))).string();
}

Output::~Output() {
  if (!committed_) discard();
}

void Output::discard() {
  if (fd_ > 1) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    unregister_cleanup(cleanup_slot_);
    temp_path_.clear();
  }
}

void Output::write_fd(std::string_view bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("{}: write error after {} bytes: {}", name_, written_, std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
}

void Output::flush_buffer() {
  if (buffer_.empty()) return;
  write_fd(buffer_);
  buffer_.clear();
}

void Output::commit() {
  if (committed_) return;
  flush_buffer();
  if (fd_ == 1) {
    committed_ = true;
    return;
  }
  if (temp_path_.empty()) {  // a device or pipe, written in place
    int fd = fd_;
    fd_ = -1;
    committed_ = true;
    if (::close(fd) != 0) fail("{}: close failed: {}", name_, std::strerror(errno));
    return;
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail("{}: close failed: {}", name_, std::strerror(errno));
  }
  fd_ = -1;
  commit_temporary(temp_path_, path_, name_);
  unregister_cleanup(cleanup_slot_);
  temp_path_.clear();
  created_.commit();
  committed_ = true;
}

namespace {
void sync_path(const std::string& path, int flags, const std::string& name, const char* what) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open {} to sync it: {}", name, what, std::strerror(errno));
  int rc;
  do rc = ::fsync(fd);
  while (rc != 0 && errno == EINTR);
  int saved = errno;
  ::close(fd);
  // EINVAL/ENOTSUP: a file system that cannot sync (some FUSE and network mounts) has nothing more to offer.
  if (rc != 0 && saved != EINVAL && saved != ENOTSUP)
    fail("{}: cannot sync {} to disk: {}", name, what, std::strerror(saved));
}
}  // namespace

void commit_temporary(const std::string& temp, const std::string& path, const std::string& name) {
  // The data first: a rename that reaches the disk before the data would leave a short file under `path`.
  sync_path(temp, O_RDONLY, name, "the file");
  if (::rename(temp.c_str(), path.c_str()) != 0)
    fail("{}: cannot rename temporary file into place: {}", name, std::strerror(errno));
  // Then the directory entry, so the new name itself survives.
  sync_directory(std::filesystem::path(path).parent_path().string(), name);
}

void sync_directory(const std::string& dir, const std::string& name) {
  sync_path(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY, name, "its directory");
}

void sync_directory_contents(const std::string& dir, const std::string& name) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec)) sync_path(entry.path().string(), O_RDONLY, name, entry.path().filename().c_str());
    else if (entry.is_directory(ec)) sync_directory_contents(entry.path().string(), name);
  if (ec) fail("{}: cannot list {} to sync it: {}", name, dir, ec.message());
  sync_directory(dir, name);
}

void write_file_atomic(const std::string& path, std::string_view contents, bool overwrite) {
  Output out(path, overwrite);
  out.write(contents);
  out.commit();
}

}  // namespace bk
