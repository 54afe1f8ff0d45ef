// Reading an input the way every tool does: a path or "-" for stdin, with gzip, bzip2, xz and zstd (single or
// concatenated streams, as Wikipedia's multistream dumps) detected by their magic bytes, not by the file name.
//
// Compressed input is decoded ahead of the reader on other threads. bzip2 is decoded in parallel, block by block,
// on `threads` workers (io/bzip2_parallel.h: bytes identical to bzcat's for any count, memory bounded by
// (2 * threads + 4) blocks); gzip, xz and zstd are decoded on one thread of their own, up to 4 MB ahead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace bk {

class Input {
 public:
  // Opens path ("-" = stdin). Throws bk::Error naming the file when it cannot be opened. `threads` is the
  // number of bzip2 and gzip decoding workers (0 = all cores; gzip members decode in parallel from 2 on); tools
  // pass their --threads.
  explicit Input(const std::string& path, int threads = 1);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // Reads up to n decompressed bytes; returns 0 only at the end. Throws on I/O or decompression errors.
  size_t read(char* buffer, size_t n);

  const std::string& name() const { return name_; }        // "<stdin>" for "-"
  uint64_t offset() const { return decoded_offset_; }       // decompressed bytes returned so far
  uint64_t raw_offset() const;                              // bytes consumed from the file itself
  // The bytes raw_offset() will reach at the end: the size of a regular file (stdin redirected from one too,
  // less where it was opened), 0 for a pipe or terminal. For a progress line's total.
  uint64_t raw_size() const { return raw_size_; }
    std::string_view compression() const;                     // "none", "gzip", "bzip2", "xz" or "zstd"
  bool is_stdin() const { return fd_ == 0; }

  struct Decoder;

 private:
  size_t read_raw(char* buffer, size_t n);

  std::string name_;
  int fd_ = -1;
  uint64_t decoded_offset_ = 0;
  uint64_t raw_size_ = 0;
  std::string peeked_;  // the first bytes, read to detect the format; read_raw returns them first
  size_t peeked_at_ = 0;
  uint64_t raw_consumed_ = 0;  // bytes read from the file (by the decoding thread, for compressed input)
  std::string_view kind_ = "none";
  int uncaught_at_open_ = 0;
  std::unique_ptr<Decoder> decoder_;
};

// Buffered line reader over an Input. Lines are returned without the trailing '\n' (and without a '\r'
// before it). The returned view is valid until the next call.
class LineReader {
 public:
  explicit LineReader(Input& input, size_t buffer_size = 1 << 20);
  bool next(std::string_view& line);
  uint64_t line_number() const { return line_number_; }  // 1-based number of the line last returned
  Input& input() const { return input_; }

 private:
  bool fill();
  Input& input_;
  std::string buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

// Reads a whole (small) file into a string.
std::string read_file(const std::string& path);

// The input to read when a tool may read stdin: `named` when given ("-" included, which reads a terminal all the
// same); with none named, "-", unless stdin is a terminal: nobody types a corpus, so that is a usage error naming
// `what` to give instead of a silent wait (zstd's rule).
std::string input_or_stdin(const std::string& named, std::string_view what);

}  // namespace bk
