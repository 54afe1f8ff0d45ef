#include <doctest/doctest.h>

#include "../error_of.h"
#include "util/error.h"
#include "util/crc32c.h"
#include "tfrecord/example.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"
#include "io/output.h"
#include "test_support.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace fs = std::filesystem;

namespace {
fs::path tfrecord_temp_dir() { return bk_test::temp_dir("tfrecord"); }
using bk_test::write_bytes;
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
using bk_test::gzip_bytes;
// Three records "alpha" (5 bytes), "" and 10000 bytes, framed by TFRecordWriter into a file.
std::vector<std::string> sample_records() { return {"alpha", "", std::string(10000, 'x')}; }
fs::path write_sample(const fs::path& p) {
  bk::Output out(p.string(), true);
  bk::TFRecordWriter writer(out);
  for (const auto& r : sample_records()) writer.write(r);
  CHECK(writer.records_written() == 3);
  out.commit();
  return p;
}
std::string read_error(const fs::path& p, bool skip = false) {
  return bk_test::error_of([&] { bk::read_tfrecord_file(p.string(), {.skip_corrupt = skip}); });
}
}  // namespace

TEST_CASE("tfrecord: framing matches the format by hand") {
  // Record "a": length 1 as u64 LE, masked CRC of those 8 bytes, the byte, masked CRC of "a".
  const std::string framed = bk::frame_tfrecord("a");
  REQUIRE(framed.size() == 17);
  CHECK(framed.substr(0, 8) == std::string("\x01\0\0\0\0\0\0\0", 8));
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(framed[at + i]);
    return v;
  };
  CHECK(le32(8) == bk::crc32c_mask(bk::crc32c(framed.data(), 8)));
  CHECK(framed[12] == 'a');
  CHECK(le32(13) == bk::crc32c_mask(bk::crc32c("a")));
}

TEST_CASE("tfrecord: writer and reader round trip, plain and gzip, small buffer") {
  auto dir = tfrecord_temp_dir();
  auto plain = write_sample(dir / "sample.tfrecord");
  std::string expected_bytes;
  for (const auto& r : sample_records()) expected_bytes += bk::frame_tfrecord(r);
  CHECK(slurp(plain) == expected_bytes);
  write_bytes(dir / "sample.tfrecord.gz", gzip_bytes(expected_bytes));
  for (auto path : {plain, dir / "sample.tfrecord.gz"}) {
    bk::Input input(path.string());
    bk::TFRecordReader reader(input, {.buffer_size = 64});  // forces growth past the buffer
    std::string_view record;
    std::vector<uint64_t> offsets;
    std::vector<std::string> got;
    while (reader.next(record)) {
      got.emplace_back(record);
      offsets.push_back(reader.record_offset());
      CHECK(reader.record_index() == got.size() - 1);
    }
    CHECK(got == sample_records());
    CHECK(offsets == std::vector<uint64_t>{0, 21, 37});
    CHECK(reader.bytes_read() == expected_bytes.size());
  }
  fs::remove_all(dir);
}

TEST_CASE("tfrecord: damaged files name the file, record and byte offset") {
  auto dir = tfrecord_temp_dir();
  const std::string good = slurp(write_sample(dir / "good.tfrecord"));
  // Record 2 starts at byte 37: 21 bytes for "alpha", 16 for "".
  auto damaged = [&](const std::string& name, size_t flip_at, size_t keep = std::string::npos) {
    std::string bytes = good.substr(0, keep);
    if (flip_at != std::string::npos) bytes[flip_at] ^= 0x20;
    write_bytes(dir / name, bytes);
    return dir / name;
  };
  auto data_bad = damaged("data.tfrecord", 37 + 12 + 500);
  CHECK(read_error(data_bad) == data_bad.string() + ": record 2 at byte 37: corrupt data (CRC32C mismatch over 10000 bytes)");
  auto footer_bad = damaged("footer.tfrecord", 12 + 5);  // the data CRC of record 0 itself
  CHECK(read_error(footer_bad) == footer_bad.string() + ": record 0 at byte 0: corrupt data (CRC32C mismatch over 5 bytes)");
  auto length_bad = damaged("length.tfrecord", 21);
  CHECK(read_error(length_bad) ==
        length_bad.string() + ": record 1 at byte 21: corrupt length field (CRC32C mismatch); cannot find the records after it");
  auto length_crc_bad = damaged("lengthcrc.tfrecord", 21 + 9);
  CHECK(read_error(length_crc_bad, true) == length_crc_bad.string() +
        ": record 1 at byte 21: corrupt length field (CRC32C mismatch); cannot find the records after it");
  auto cut_data = damaged("cut.tfrecord", std::string::npos, 37 + 12 + 100);
  CHECK(read_error(cut_data, true) == cut_data.string() +
        ": record 2 at byte 37: truncated record: 10000 data bytes declared, 112 bytes of record before end of input");
  auto cut_header = damaged("cuthead.tfrecord", std::string::npos, 21 + 5);
  CHECK(read_error(cut_header) ==
        cut_header.string() + ": record 1 at byte 21: truncated record header (5 of 12 bytes before end of input)");
  auto cut_footer = damaged("cutfoot.tfrecord", std::string::npos, good.size() - 1);
  CHECK(read_error(cut_footer) == cut_footer.string() +
        ": record 2 at byte 37: truncated record: 10000 data bytes declared, 10015 bytes of record before end of input");
  write_bytes(dir / "bad.tfrecord.gz", gzip_bytes(slurp(data_bad)));
  CHECK(read_error(dir / "bad.tfrecord.gz") ==
        (dir / "bad.tfrecord.gz").string() + ": record 2 at uncompressed byte 37: corrupt data (CRC32C mismatch over 10000 bytes)");
  fs::remove_all(dir);
}

TEST_CASE("tfrecord: skip_corrupt skips records with a bad data CRC and counts them") {
  auto dir = tfrecord_temp_dir();
  std::string bytes = slurp(write_sample(dir / "s.tfrecord"));
  bytes[12 + 2] ^= 1;  // inside "alpha"
  write_bytes(dir / "s.tfrecord", bytes);
  bk::Input input((dir / "s.tfrecord").string());
  bk::TFRecordReader reader(input, {.skip_corrupt = true});
  std::string_view record;
  REQUIRE(reader.next(record));
  CHECK(record.empty());
  CHECK(reader.record_index() == 1);
  CHECK(reader.record_offset() == 21);
  REQUIRE(reader.next(record));
  CHECK(record.size() == 10000);
  CHECK(reader.record_index() == 2);
  CHECK_FALSE(reader.next(record));
  CHECK(reader.skipped() == 1);
  CHECK(reader.records_read() == 2);
  fs::remove_all(dir);
}

TEST_CASE("tfrecord: empty input is zero records; a file of garbage or HDF5 is not a TFRecord file") {
  auto dir = tfrecord_temp_dir();
  write_bytes(dir / "empty", "");
  CHECK(bk::read_tfrecord_file((dir / "empty").string()).empty());
  write_bytes(dir / "text", "this is not a tfrecord file at all\n");
  CHECK(read_error(dir / "text") ==
        (dir / "text").string() + ": not a TFRecord file (its first record's length check fails at byte 0)");
  // An HDF5 file (its signature, then anything) is named for what it is.
  write_bytes(dir / "data.hdf5", std::string("\x89HDF\r\n\x1a\n\0\0\0\0\0\0\0\0", 16));
  CHECK(read_error(dir / "data.hdf5").starts_with((dir / "data.hdf5").string() + ": an HDF5 file, not a TFRecord file"));
  fs::remove_all(dir);
}

TEST_CASE("tfrecord: a valid header claiming a huge length fails as truncated without allocating it") {
  auto dir = tfrecord_temp_dir();
  std::string header(8, '\0');
  const uint64_t huge = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((huge >> (8 * i)) & 0xff);
  const uint32_t crc = bk::crc32c_mask(bk::crc32c(header));
  for (int i = 0; i < 4; ++i) header.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  write_bytes(dir / "huge.tfrecord", header + std::string(8, 'd'));
  CHECK(read_error(dir / "huge.tfrecord") == (dir / "huge.tfrecord").string() +
        ": record 0 at byte 0: truncated record: 1099511627776 data bytes declared, 20 bytes of record before end of input");
  fs::remove_all(dir);
}
