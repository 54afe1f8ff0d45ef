#include "tfrecord/tfrecord.h"

#include "util/error.h"
#include "util/crc32c.h"

#include <algorithm>
#include <cstring>

namespace bk {
namespace {

uint64_t load_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t load_le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
void store_le(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

TFRecordReader::TFRecordReader(Input& input, TFRecordReaderOptions options)
    : input_(input), options_(options), buffer_(std::max<size_t>(options.buffer_size, 64)) {}

bool TFRecordReader::ensure(size_t n) {
  while (end_ - begin_ < n) {
    if (eof_) return false;
    if (buffer_.size() - begin_ < n) {
      // Move the partial record to the front, and grow by doubling only as bytes actually arrive, so a
      // huge (but CRC-valid) length in a short file cannot make us allocate its claimed size up front.
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (end_ == buffer_.size()) buffer_.resize(std::min(n, buffer_.size() * 2));
    }
    size_t room = buffer_.size() - end_;
    size_t got = input_.read(buffer_.data() + end_, room);
    if (got == 0) eof_ = true;
    end_ += got;
  }
  return true;
}

void TFRecordReader::not_a_tfrecord_file(std::string_view first_bytes) const {
  static constexpr std::string_view kHdf5Signature("\x89HDF\r\n\x1a\n", 8);
  if (first_bytes.starts_with(kHdf5Signature))
    fail("{}: an HDF5 file, not a TFRecord file (HDF5 pretraining data needs no conversion: give it to bert-train, "
         "bin4 or pack as it is)", input_.name());
  fail("{}: not a TFRecord file (its first record's length check fails at byte 0)", input_.name());
}

void TFRecordReader::damaged(uint64_t index, uint64_t offset, const std::string& what) const {
  // Offsets count decompressed bytes; say so when that differs from the file's own offsets.
  fail("{}: record {} at {}byte {}: {}", input_.name(), index, input_.compression() == "none" ? "" : "uncompressed ",
       offset, what);
}

bool TFRecordReader::next(std::string_view& record) {
  for (;;) {
    const uint64_t index = index_, offset = consumed_;
    if (!ensure(kTFRecordHeaderSize)) {
      if (end_ == begin_) return false;
      damaged(index, offset, fmt::format("truncated record header ({} of {} bytes before end of input)", end_ - begin_,
                                         kTFRecordHeaderSize));
    }
    const char* header = buffer_.data() + begin_;
    const uint64_t length = load_le64(header);
    const uint32_t stored_length_crc = load_le32(header + 8);
    const uint32_t length_crc = masked_crc32c(std::string_view(header, 8));
    if (stored_length_crc != length_crc) {
      // At the very start, the file is something else: say what, rather than call it a damaged TFRecord.
      if (index == 0) not_a_tfrecord_file(std::string_view(header, kTFRecordHeaderSize));
      damaged(index, offset, "corrupt length field (CRC32C mismatch); cannot find the records after it");
    }
    if (length > UINT64_MAX - 64 || !ensure(kTFRecordHeaderSize + length + kTFRecordFooterSize))
      damaged(index, offset, fmt::format("truncated record: {} data bytes declared, {} bytes of record before end "
                                         "of input", length, end_ - begin_));
    const char* data = buffer_.data() + begin_ + kTFRecordHeaderSize;
    const uint32_t stored_data_crc = load_le32(data + length);
    const uint32_t data_crc = masked_crc32c(std::string_view(data, length));
    const size_t total = kTFRecordHeaderSize + length + kTFRecordFooterSize;
    ++index_;
    begin_ += total;
    consumed_ += total;
    if (stored_data_crc != data_crc) {
      if (options_.skip_corrupt) {
        ++skipped_;
        continue;
      }
      damaged(index, offset, fmt::format("corrupt data (CRC32C mismatch over {} bytes)", length));
    }
    record_offset_ = offset;
    ++returned_;
    record = std::string_view(data, length);
    return true;
  }
}

std::string frame_tfrecord(std::string_view record) {
  std::string framed;
  framed.reserve(kTFRecordHeaderSize + record.size() + kTFRecordFooterSize);
  const size_t start = open_tfrecord(framed);
  framed.append(record);
  close_tfrecord(framed, start);
  return framed;
}

size_t open_tfrecord(std::string& out) {
  out.append(kTFRecordHeaderSize, '\0');
  return out.size();
}

void close_tfrecord(std::string& out, size_t record_start) {
  const size_t size = out.size() - record_start;
  char* header = out.data() + record_start - kTFRecordHeaderSize;
  store_le(header, size, 8);
  store_le(header + 8, masked_crc32c(std::string_view(header, 8)), 4);
  char footer[kTFRecordFooterSize];
  store_le(footer, masked_crc32c(std::string_view(out.data() + record_start, size)), 4);
  out.append(footer, kTFRecordFooterSize);
}

void TFRecordWriter::write(std::string_view record) {
  char header[kTFRecordHeaderSize];
  store_le(header, record.size(), 8);
  store_le(header + 8, masked_crc32c(std::string_view(header, 8)), 4);
  char footer[kTFRecordFooterSize];
  store_le(footer, masked_crc32c(record), 4);
  output_.write(std::string_view(header, sizeof header));
  output_.write(record);
  output_.write(std::string_view(footer, sizeof footer));
  ++records_;
}

std::vector<std::string> read_tfrecord_file(const std::string& path, TFRecordReaderOptions options) {
  Input input(path);
  TFRecordReader reader(input, options);
  std::vector<std::string> records;
  std::string_view record;
  while (reader.next(record)) records.emplace_back(record);
  return records;
}

}  // namespace bk

