#include "hdf5/hdf5_handle.h"

#include "util/error.h"
#include "io/cleanup.h"
#include "io/leftovers.h"
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
  sweep_dead_siblings(temp_path_);  // what a killed run writing this output left
  int fd = create_temporary(temp_path_, cleanup_slot_);
  if (fd < 0) fail("{}: cannot create output: {}", path_, std::strerror(errno));
  // The temporary is made 0600; give it the permissions an ordinary new file would get.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0644 & ~mask);
  // HDF5 takes the same exclusive flock on a file it writes (HDF5_USE_FILE_LOCKING, on by default), which holds the
  // temporary from here on (io/leftovers.h); ours would refuse it that lock.
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

namespace bk {

void write_string_attribute(hid_t object, const char* name, const std::string& value, const std::string& where) {
  hdf5_quiet();
  Hid type = hid_type(H5Tcopy(H5T_C_S1));
  Hid space = hid_space(H5Screate(H5S_SCALAR));
  const bool typed = type.valid() && H5Tset_size(type, H5T_VARIABLE) >= 0 && H5Tset_cset(type, H5T_CSET_UTF8) >= 0;
  Hid attribute = typed && space.valid() ? hid_attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT))
                                         : Hid();
  const char* text = value.c_str();
  if (!attribute.valid() || H5Awrite(attribute, type, &text) < 0 || !attribute.close())
    fail("{}: cannot write the attribute {}: {}", where, name, hdf5_last_error());
}

std::optional<std::string> read_string_attribute(hid_t object, const char* name) {
  hdf5_quiet();
  if (H5Aexists(object, name) <= 0) return std::nullopt;
  Hid attribute = hid_attribute(H5Aopen(object, name, H5P_DEFAULT));
  Hid type = attribute.valid() ? hid_type(H5Aget_type(attribute)) : Hid();
  Hid space = attribute.valid() ? hid_space(H5Aget_space(attribute)) : Hid();
  if (!type.valid() || !space.valid() || H5Tget_class(type) != H5T_STRING ||
      H5Sget_simple_extent_type(space) != H5S_SCALAR)
    return std::nullopt;
  if (H5Tis_variable_str(type) > 0) {
    char* text = nullptr;
    if (H5Aread(attribute, type, &text) < 0 || text == nullptr) return std::nullopt;
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  const size_t size = H5Tget_size(type);
  if (size == 0 || size > 65536) return std::nullopt;  // an attribute's own limit is 64 KiB
  std::string value(size, '\0');
  if ( H5Aread(attribute, type, value.data()) < 0) return std::nullopt;
  value.resize(std::strlen(value.c_str()));  // fixed-length strings are padded with NULs
  return value;
}

}  // namespace bk
