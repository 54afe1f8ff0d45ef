#include "hdf5/hdf5_handle.h"

#include "util/error.h"
#include "io/cleanup.h"
#include "io/output.h"
#include "io/durable.h"
#include "util/printable.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace bk {

void hdf5_quiet() {
  static std::once_flag once;
  std::call_once(once, [] {
    // No HDF5 exit handler: after a failed write, H5Fclose fails and leaves the file open, and the library's
    // atexit cleanup then crashed closing it again (SIGSEGV after the error line). Every file we write is
    // closed by commit() or discarded, so there is nothing for that handler to do.
    H5dont_atexit();
    H5open();
  });
  // The library here is thread-safe, and its error stack, with the automatic printing, is per thread: a reader
  // in a prefetch thread printed HDF5-DIAG dumps. So each thread turns it off once for itself.
  thread_local bool quiet = false;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    quiet = true;
  }
}

namespace {
// Walking upward starts at the innermost (deepest) frame, which carries the most specific description.
herr_t keep_first_message(unsigned n, const H5E_error2_t* entry, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (out->empty() && entry->desc != nullptr && entry->desc[0] != '\0') *out = entry->desc;
  return 0;
}
}  // namespace

std::string hdf5_last_error() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_first_message, &message);
  // A failed write's description spans lines and lists buffer addresses and sizes ("file write failed: time =
  // ...\n, filename = ..., errno = 28, error message = 'No space left on device', buf = 0x..., bytes actually
  // written = 18446744073709551615, ..."); the system's message is what the user needs.
  const std::string_view marker = "error message = '";
  if (size_t at = message.find(marker); at != std::string::npos) {
    size_t end = message.find('\'', at + marker.size());
    std::string what = message.substr(0, message.find_first_of(":\n"));
    if (end != std::string::npos) return what + ": " + message.substr(at + marker.size(), end - at - marker.size());
  }
  return printable_excerpt(message, 200);
}

void check_hdf5_output(const std::string& path, bool overwrite) {
  // HDF5 seeks back to its superblock when it closes, so unlike bk::Output it cannot stream to stdout or write
  // in place to a device or pipe; and renaming the temporary onto such a node would replace the node itself
  // (as root, /dev/null would become a regular file). So only a regular file, or a new name, is accepted.
  if (path == "-" || path.empty())
    fail("HDF5 output cannot go to stdout ('-'): it needs a regular file, which it writes with seeks");
  check_overwrite(path, overwrite);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("{}: is a directory", path);
    if (!S_ISREG(st.st_mode))
      fail("{}: not a regular file (a device, pipe or socket); HDF5 output needs a regular file", path);
  }
}

Hdf5TempFile::Hdf5TempFile(std::string path, bool overwrite) : path_(std::move(path)) {
  hdf5_quiet();
  check_hdf5_output(path_, overwrite);
  created_.create_parent(path_);
  temp_path_ = temporary_sibling(path_, "", ".tmp.XXXXXX");
  int fd = create_temporary(temp_path_, cleanup_slot_);
  if (fd < 0) fail("{}: cannot create output: {}", path_, std::strerror(errno));
  // The temporary is made 0600; give it the permissions an ordinary new file would get.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0644 & ~mask);
  ::close(fd);
  file_ = hid_file(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  if (!file_.valid()) {
    std::string why = hdf5_last_error();
    ::unlink(temp_path_.c_str());
    unregister_cleanup(cleanup_slot_);
    fail("{}: cannot create HDF5 file: {}", path_, why);
  }
}

Hdf5TempFile::~Hdf5TempFile() {
  if (committed_) return;
  file_.close();
  ::unlink(temp_path_.c_str());
  unregister_cleanup(cleanup_slot_);
}

void Hdf5TempFile::commit() {
  if (committed_) return;
  hdf5_quiet();
  if (!file_.close()) fail("{}: closing the HDF5 file failed: {}", path_, hdf5_last_error());
  commit_temporary(temp_path_, path_, path_);  // fsync, rename, fsync the directory (io/output.h)
  unregister_cleanup(cleanup_slot_);
  created_.commit();
  committed_ = true;
}

}  // namespace bk
