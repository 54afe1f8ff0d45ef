#include "io/output.h"

#include "cli/run_tool.h"

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
  struct stat st {};
  if (!overwrite && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    fail("{}: already exists; use --force to overwrite it", path);
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
  // The temporary lives in the same directory so that rename() is atomic.
  temp_path_ = path + ".tmp.XXXXXX";
  fd_ = ::mkstemp(temp_path_.data());
  if (fd_ < 0) fail("{}: cannot create output: {}", path, std::strerror(errno));
  ::fchmod(fd_, 0644 & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }());
  try {
    cleanup_slot_ = register_cleanup(temp_path_);
  } catch (...) {
    discard();  // the cleanup table is full: close and remove the temporary before reporting it
    throw;
  }
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
  // No fsync: the rename makes the file appear whole or not at all to every reader, which is what resuming a
  // killed pipeline needs; forcing it to disk as well would cost more than the tools' own work on large outputs.
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail("{}: close failed: {}", name_, std::strerror(errno));
  }
  fd_ = -1;
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    fail("{}: cannot rename temporary file into place: {}", name_, std::strerror(errno));
  unregister_cleanup(cleanup_slot_);
  temp_path_.clear();
  committed_ = true;
}

void write_file_atomic(const std::string& path, std::string_view contents, bool overwrite) {
  Output out(path, overwrite);
  out.write(contents);
  out.commit();
}

}  // namespace bk
