// Small RAII helpers over the HDF5 C API, shared by the pretraining-dataset reader and writer.
//
// HDF5 prints its whole error stack to stderr by default; hdf5_quiet() turns that off once per process so that
// our tools print one line (bk::fail) instead. hdf5_last_error() recovers the innermost HDF5 message for it.
#pragma once

#include "io/created_dirs.h"

#include <hdf5.h>

#include <optional>
#include <string>

namespace bk {

// Turns off HDF5's automatic error-stack printing for the calling thread (the library's error stack is per
// thread), and HDF5's exit handler for the process. Cheap after the first call in a thread; called by the
// reader's and Hdf5TempFile's constructors and before reads and writes.
void hdf5_quiet();

// The innermost description on HDF5's current error stack (e.g. "truncated file: eof = 4096, ..."), or "".
std::string hdf5_last_error();

// Owns one hid_t and closes it with the matching H5*close on destruction.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hid() { reset(); }
  Hid(Hid&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether closing worked (H5Fclose flushes, so its failure matters).
  bool close() {
    if (id_ < 0) return true;
    herr_t status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  void reset() { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Hid hid_file(hid_t id) { return Hid(id, H5Fclose); }
inline Hid hid_dataset(hid_t id) { return Hid(id, H5Dclose); }
inline Hid hid_space(hid_t id) { return Hid(id, H5Sclose); }
inline Hid hid_type(hid_t id) { return Hid(id, H5Tclose); }
inline Hid hid_plist(hid_t id) { return Hid(id, H5Pclose); }
inline Hid hid_attribute(hid_t id) { return Hid(id, H5Aclose); }

// A scalar UTF-8 string attribute (variable-length, as h5py writes a Python str) on a file, group or dataset.
// Writing fails (bk::Error) naming `where`; reading gives nullopt when there is no such attribute or it is not a
// scalar string, fixed-length or variable.
void write_string_attribute(hid_t object, const char* name, const std::string& value, const std::string& where);
std::optional<std::string> read_string_attribute(hid_t object, const char* name);

// Fails (bk::Error) unless `path` can take an HDF5 file: not "-" (HDF5 needs seeks, so no stdout), not a
// directory, device, FIFO or socket (a temporary renamed onto one would replace the node), and not an existing
// file unless overwrite. Hdf5TempFile checks this itself; tools call it early to fail before the work.
void check_hdf5_output(const std::string& path, bool overwrite);

// An HDF5 file created under a temporary name beside `path` and renamed onto it by commit().
//
// The temporary (`<path>.tmp.XXXXXX`, made with mkstemp so two runs never collide) is registered with
// bk::register_cleanup, so SIGINT removes it; destruction without commit() closes and removes it too. Missing
// directories on the way to `path` are created and, without commit(), removed again (io/created_dirs.h).
class Hdf5TempFile {
 public:
  // Fails if `path` exists and overwrite is false.
  Hdf5TempFile(std::string path, bool overwrite);
  ~Hdf5TempFile();
  Hdf5TempFile(const Hdf5TempFile&) = delete;
  Hdf5TempFile& operator=(const Hdf5TempFile&) = delete;

  hid_t file() const { return file_.get(); }
  const std::string& path() const { return path_; }
  // Closes the file (flushing everything) and renames the temporary into place.
  void commit();

 private:
  std::string path_, temp_path_;
  int cleanup_slot_ = -1;
  Hid file_;
  bool committed_ = false;
  CreatedDirs created_;  // destroyed after the destructor has removed the temporary
};

}  // namespace bk
