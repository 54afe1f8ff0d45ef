// Multi-member gzip decoded in parallel (io/gzip_members.h) against the members' own bytes, for any thread count:
// many members, an empty one, members whose deflate data holds a header's bytes by chance, a member larger than
// a segment, and damaged or cut files, which fail as with one thread.
#include "io/gzip_members.h"
#include "io/input.h"
#include "util/error.h"

#include "read_input.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <zlib.h>

#include <cstring>
#include <string>

namespace fs = std::filesystem;

namespace {

// One gzip member at a zlib level (0: stored blocks, whose bytes are the data's own).
std::string member(const std::string& s, int level) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(s.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

std::string read_all(const fs::path& path, int threads) { return bk_test::read_all(path, threads, "gzip"); }

// The sequencer alone, over bytes in memory: the decoded bytes and how many members came from workers.
std::pair<std::string, uint64_t> decode_members(const std::string& file, int threads) {
  size_t at = 0;
  bk::GzipMembers members("mem.gz", [&](char* buffer, size_t n) {
    const size_t take = std::min(n, file.size() - at);
    std::memcpy(buffer, file.data() + at, take);
    at += take;
    return take;
  }, threads);
  std::string out;
  char buf[1 << 16];
  while (size_t n = members.decode(buf, sizeof buf)) out.append(buf, n);
  return {out, members.members_decoded_whole()};
}

}  // namespace

TEST_CASE("gzip members: parallel decoding gives every member's bytes in order, for any thread count") {
  std::string file, text;
  uint32_t x = 5;
  for (int m = 0; m < 60; ++m) {
    std::string part;
    const int lines = m == 7 ? 0 : 200 + m * 37;  // member 7 holds no bytes
    for (int i = 0; i < lines; ++i) part += "member " + std::to_string(m) + " line " + std::to_string((x = x * 69069 + 1) % 9973) + "\n";
    // Every fifth member stored (level 0) with a gzip header's bytes in its data: candidates inside a member.
    if (m % 5 == 0) part += std::string("\x1f\x8b\x08\x00 not a member \x1f\x8b\x08\x04", 24) + part.substr(0, part.size() / 3);
    file += member(part, m % 5 == 0 ? 0 : 1 + m % 9);
    text += part;
  }
  for (int threads : {1, 2, 3, 4}) {
    CAPTURE(threads);
    const auto [out, from_workers] = decode_members(file, threads);
    CHECK(out == text);
    CHECK(from_workers > 20);  // the members without stray headers, at least, came from workers
  }
  auto dir = bk_test::temp_dir("gzmembers");
  bk_test::write_bytes(dir / "m.gz", file);
  for (int threads : {1, 2, 4}) CHECK(read_all(dir / "m.gz", threads) == text);
  // A member larger than a segment (random bytes barely compress): cut by force, inflated by the sequencer.
  std::string big;
  for (size_t i = 0; i < bk::GzipMembers::kMaxSegment + (1 << 20); ++i) big += static_cast<char>((x = x * 69069 + 1) >> 24);
  const std::string big_file = member("head\n", 6) + member(big, 1) + member("tail\n", 6);
  CHECK(decode_members(big_file, 2).first == "head\n" + big + "tail\n");
  fs::remove_all(dir);
}

TEST_CASE("gzip members: damaged, cut and trailing bytes fail as with one thread") {
  auto dir = bk_test::temp_dir("gzbad");
  std::string text, file;
  for (int m = 0; m < 10; ++m) {
    std::string part;
    for (int i = 0; i < 2000; ++i) part += "m" + std::to_string(m) + " " + std::to_string(i) + "\n";
    file += member(part, 6);
    text += part;
  }
  std::string flipped = file;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  bk_test::write_bytes(dir / "flip.gz", flipped);
  bk_test::write_bytes(dir / "cut.gz", file.substr(0, file.size() - 100));
  bk_test::write_bytes(dir / "trail.gz", file + "garbage!");
  for (int threads : {1, 2, 3}) {
    CAPTURE(threads);
    CHECK_THROWS_WITH_AS(read_all(dir / "flip.gz", threads), doctest::Contains("corrupt gzip data near byte"), bk::Error);
    CHECK_THROWS_WITH_AS(read_all(dir / "cut.gz", threads), doctest::Contains("(file truncated?)"), bk::Error);
    CHECK_THROWS_WITH_AS(read_all(dir / "trail.gz", threads), doctest::Contains("corrupt gzip data near byte"), bk::Error);
  }
  fs::remove_all(dir);
}
