// TFRecord files: a sequence of records, each framed as
//   u64 length (little-endian) | u32 masked_crc32c(those 8 bytes) | data[length] | u32 masked_crc32c(data)
// The reader streams (memory = one record plus a buffer), checks both checksums and reports damage with the
// file name, the 0-based record index and the byte offset of the record's header in the (decompressed) stream.
#pragma once

#include "io/input.h"
#include "io/output.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

constexpr size_t kTFRecordHeaderSize = 12;  // length + length CRC
constexpr size_t kTFRecordFooterSize = 4;   // data CRC

struct TFRecordReaderOptions {
  // Skip records whose data CRC is wrong (counted in skipped()) instead of failing. A wrong length CRC or a
  // truncated record still fails: past a damaged length field there is no way to find the next record.
  bool skip_corrupt = false;
  size_t buffer_size = 1 << 20;
};

class TFRecordReader {
 public:
  // Reads from `input`, which must outlive the reader (gzip/bzip2 inputs work, as Input decodes them).
  explicit TFRecordReader(Input& input, TFRecordReaderOptions options = {});

  // Next record's payload; false at a clean end of input. The view is valid until the next call.
  // Throws bk::Error on a damaged or truncated record.
  bool next(std::string_view& record);

  uint64_t record_index() const { return index_ - 1; }  // 0-based index of the record last returned
  uint64_t record_offset() const { return record_offset_; }  // byte offset of its header
  uint64_t records_read() const { return returned_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t bytes_read() const { return consumed_; }  // framing included, decompressed
  const std::string& name() const { return input_.name(); }

 private:
  // Makes at least n bytes available at buffer_[begin_]; returns false if the input ends first.
  bool ensure(size_t n);
  [[noreturn]] void damaged(uint64_t index, uint64_t offset, const std::string& what) const;
  [[noreturn]] void not_a_tfrecord_file(std::string_view first_bytes) const;

  Input& input_;
  TFRecordReaderOptions options_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t consumed_ = 0;       // stream offset of buffer_[begin_]
  uint64_t index_ = 0;          // records framed so far (returned + skipped)
  uint64_t returned_ = 0, skipped_ = 0;
  uint64_t record_offset_ = 0;
};

// Frames records onto an Output. The caller commits the Output.
class TFRecordWriter {
 public:
  explicit TFRecordWriter(Output& output) : output_(output) {}
  void write(std::string_view record);
  uint64_t records_written() const { return records_; }

 private:
  Output& output_;
  uint64_t records_ = 0;
};

// The framing of one record as a string (header + data + footer); what TFRecordWriter writes.
std::string frame_tfrecord(std::string_view record);
// The same framing for a record serialised in place at the end of `out`: open_tfrecord appends room for the
// header and returns where the record will start; close_tfrecord fills the header in and appends the footer.
size_t open_tfrecord(std::string& out);
void close_tfrecord(std::string& out, size_t record_start);

// Reads every record of a (small) file into memory; for tests and tools that need random access.
std::vector<std::string> read_tfrecord_file(const std::string& path, TFRecordReaderOptions options = {});

}  // namespace bk
