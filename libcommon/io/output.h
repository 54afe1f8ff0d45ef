// Writing an output the way every tool does.
//
// Output("-") writes to stdout. Output(path) writes to a temporary file beside `path` and renames it onto
// `path` in commit(); if the Output is destroyed without commit() (an exception, an early return) or the
// process gets SIGINT, the temporary is removed, so a failed run never leaves a partial file. Missing
// directories on the way to `path` are created, and removed again with the temporary (io/created_dirs.h). An existing
// file is only replaced when overwrite is true (the tools' --force), so nothing the user had is lost.
#pragma once

#include "io/created_dirs.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bk {

class Output {
 public:
  explicit Output(const std::string& path, bool overwrite = false, size_t buffer_size = 1 << 20);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  void write(std::string_view bytes) {
    if (bytes.size() > buffer_.capacity() - buffer_.size()) flush_buffer();
    if (bytes.size() >= buffer_.capacity()) write_fd(bytes);
    else buffer_.append(bytes);
  }
  void put(char c) {
    if (buffer_.size() == buffer_.capacity()) flush_buffer();
    buffer_.push_back(c);
  }

  // Flushes and renames into place (no-op rename for stdout). Throws on failure.
  void commit();

  const std::string& name() const { return name_; }  // "<stdout>" for "-"
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return written_ + buffer_.size(); }
  bool is_stdout() const { return fd_ == 1; }

 private:
  void flush_buffer();
  void write_fd(std::string_view bytes);
  void discard();

  std::string path_, temp_path_, name_;
  int fd_ = -1;
  int cleanup_slot_ = -1;
  bool committed_ = false;
  uint64_t written_ = 0;
  std::string buffer_;
  CreatedDirs created_;  // destroyed after the destructor has removed the temporary
};

// Fails with a clear message if `path` exists and overwrite is false (for tools that write many files).
// "-" (and "") is stdout, never a file named "-", so it passes.
void check_overwrite(const std::string& path, bool overwrite);

// A usage error (exit 2) when `path` is "-" (or empty) for an output that cannot be a stream: an HDF5 file, which
// is written with seeks, or a directory. Called before anything is read or created, so nothing is left behind:
//   refuse_stdout_output(cfg.output, "HDF5 output", kHdf5NeedsFile, "part-00000.hdf5") ->
//   "-o -: HDF5 output cannot go to stdout (it is written with seeks and needs a regular file); give a name, e.g. ..."
void refuse_stdout_output(const std::string& path, const char* what, const char* why, const char* example);
inline constexpr const char* kHdf5NeedsFile = "it is written with seeks and needs a regular file";

// The name of a temporary beside `path`: PREFIX + its file name + SUFFIX, the file name cut so that the whole fits
// NAME_MAX (255 bytes), so that an output named with 250 bytes still gets a temporary.
//   temporary_sibling("out/model.pt", "", ".tmp.XXXXXX") -> "out/model.pt.tmp.XXXXXX"
std::string temporary_sibling(const std::string& path, std::string_view prefix, std::string_view suffix);

// Atomically writes a small file (marker files, JSON summaries).
void write_file_atomic(const std::string& path, std::string_view contents, bool overwrite = true);

}  // namespace bk
