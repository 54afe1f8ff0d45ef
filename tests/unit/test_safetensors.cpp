#include <doctest/doctest.h>

#include "ckpt/safetensors.h"
#include "../error_of.h"
#include "util/error.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path st_temp_dir() {
  static struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("bertkit-unit-st-" + std::to_string(::getpid()));
    ~Scratch() { std::error_code ec; fs::remove_all(dir, ec); }
  } scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

std::string le_u64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i) & 0xff);
  return s;
}

// A file assembled by hand from the format's definition: header length, JSON, data.
std::string write_raw(const std::string& name, const std::string& header, const std::string& data) {
  const std::string path = (st_temp_dir() / name).string();
  std::ofstream(path, std::ios::binary) << le_u64(header.size()) << header << data;
  return path;
}

std::string f32_bytes(std::vector<float> values) {
  std::string s(values.size() * 4, '\0');
  std::memcpy(s.data(), values.data(), s.size());
  return s;
}

std::string error_of(const std::string& path) {
  return bk_test::error_of([&] { bk::read_safetensors(path); });
}

}  // namespace

TEST_CASE("safetensors: a hand-made file reads back with names, dtypes, shapes and bytes") {
  // Little-endian: F32 1.0 = 00 00 80 3f; I64 -2 = fe ff .. ff.
  const std::string data = f32_bytes({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}) + std::string("\xfe\xff\xff\xff\xff\xff\xff\xff", 8);
  const std::string header =
      R"({"b":{"dtype":"I64","shape":[1],"data_offsets":[24,32]},"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";
  const auto path = write_raw("hand.safetensors", header, data);
  bk::SafetensorsReader reader(path);
  REQUIRE(reader.entries().size() == 2);
  CHECK(reader.entries()[0].name == "a");  // data order, not header order
  CHECK(reader.metadata().at("format") == "pt");
  const auto a = reader.read("a");
  CHECK(a.dtype == bk::StDtype::F32);
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  float values[6];
  std::memcpy(values, a.bytes.data(), 24);
  CHECK(values[0] == 1.0f);
  CHECK(values[5] == 6.0f);
  const auto b = reader.read("b");
  int64_t v;
  std::memcpy(&v, b.bytes.data(), 8);
  CHECK(v == -2);
  CHECK_THROWS_WITH_AS(reader.read("c"), doctest::Contains("no tensor named \"c\""), bk::Error);
}

TEST_CASE("safetensors: write pads the header to 8 bytes, aligns data, and reads back") {
  const auto path = (st_temp_dir() / "round.safetensors").string();
  std::vector<bk::StTensor> tensors{
      {"z.mask", bk::StDtype::BOOL, {3}, std::string("\x01\x00\x01", 3)},
      {"b.half", bk::StDtype::BF16, {2}, std::string("\x80\x3f\x00\x40", 4)},
      {"a.weight", bk::StDtype::F32, {2, 2}, f32_bytes({0.5f, -1.5f, 2.0f, 8.0f})},
      {"ids", bk::StDtype::I64, {}, le_u64(7)},
      {"empty", bk::StDtype::F16, {0, 4}, ""},
  };
  bk::write_safetensors(path, tensors, {{"format", "pt"}});
  std::ifstream in(path, std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(raw[static_cast<size_t>(i)]);
  CHECK(header_len % 8 == 0);
  CHECK(raw.substr(8, 1) == "{");
  const std::string header = raw.substr(8, header_len);
  const size_t close = header.find_last_not_of(' ');
  CHECK(header[close] == '}');  // padding is spaces after the JSON
  bk::SafetensorsReader reader(path);
  for (const auto& e : reader.entries()) CHECK(e.begin % bk::st_dtype_size(e.dtype) == 0);
  CHECK(reader.entries().front().name == "ids");  // 8-byte items first
  for (const auto& t : tensors) {
    const auto back = reader.read(t.name);
    CHECK(back.dtype == t.dtype);
    CHECK(back.shape == t.shape);
    CHECK(back.bytes == t.bytes);
  }
  CHECK(reader.metadata().at("format") == "pt");
  CHECK_THROWS_WITH_AS(bk::write_safetensors(path, tensors), doctest::Contains("already exists"), bk::Error);
  bk::write_safetensors(path, std::vector<bk::StTensor>{tensors[2]}, {}, true);
  CHECK(bk::read_safetensors(path).size() == 1);
}

TEST_CASE("safetensors: writer refuses inconsistent tensors") {
  const auto path = (st_temp_dir() / "bad-write.safetensors").string();
  CHECK_THROWS_WITH_AS(bk::write_safetensors(path, std::vector<bk::StTensor>{{"w", bk::StDtype::F32, {3}, "12345678"}}),
                       doctest::Contains("tensor \"w\": 8 bytes, but shape [3] of F32 needs 12"), bk::Error);
  CHECK_THROWS_WITH_AS(bk::write_safetensors(path, std::vector<bk::StTensor>{{"w", bk::StDtype::U8, {1}, "1"},
                                                                             {"w", bk::StDtype::U8, {1}, "2"}}),
                       doctest::Contains("given twice"), bk::Error);
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("safetensors: reader errors name the file and the tensor") {
  const std::string eight = f32_bytes({1, 2});
  {
    const auto path = (st_temp_dir() / "tiny").string();
    std::ofstream(path, std::ios::binary) << "abc";
    CHECK(error_of(path).find("shorter than the 8-byte header length") != std::string::npos);
  }
  {
    const auto path = (st_temp_dir() / "trunc").string();
    std::ofstream(path, std::ios::binary) << le_u64(1000) << "{}";
    CHECK(error_of(path).find("truncated") != std::string::npos);
  }
  auto check = [&](const char* name, const std::string& header, const std::string& data, const std::string& want) {
    const auto path = write_raw(name, header, data);
    const auto err = error_of(path);
    CAPTURE(err);
    CHECK(err.find(path) != std::string::npos);
    CHECK(err.find(want) != std::string::npos);
  };
  check("json", R"({"a":)", eight, "header: malformed JSON at byte 6");
  check("empty", "", "", "header: malformed JSON at byte 1");
  check("dtype", R"({"a":{"dtype":"Q8","shape":[2],"data_offsets":[0,8]}})", eight, "tensor \"a\": unsupported dtype");
  check("size", R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight, "tensor \"a\": 8 data bytes, but shape [3]");
  check("range", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight, "tensor \"a\": data_offsets [0, 16] beyond");
  check("overlap",
        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
        eight, "tensor \"b\": data overlaps");
  check("gap", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight, "tensor \"a\": 4 unused bytes");
  check("tail", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight, "4 bytes after the last tensor");
  check("neg", R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight, "non-integer or negative");
  check("meta", R"({"__metadata__":{"x":1}})", "", "__metadata__ value of \"x\" is not a string");
  // Found by fuzz_safetensors' invariant: 2^61 F64 elements are 2^64 bytes, which wrapped to 0 and matched
  // data_offsets [0, 0], so a reader of the shape would run far past the (empty) data.
  check("wrap", R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", "",
        "tensor \"a\": shape [2305843009213693952] of F64 overflows");
  check("wrap2", R"({"a":{"dtype":"I32","shape":[4294967296,1073741824],"data_offsets":[0,0]}})", "",
        "tensor \"a\": shape [4294967296, 1073741824] of I32 overflows");
}
