#include <doctest/doctest.h>

#include "util/error.h"
#include "cli/options.h"
#include "io/cleanup.h"
#include "io/input.h"
#include "io/output.h"
#include "text/documents.h"
#include "util/utf8.h"
#include "util/ordered_parallel.h"
#include "util/printable.h"
#include "test_support.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>

#include <unistd.h>

namespace fs = std::filesystem;

using bk_test::bzip2_bytes;
using bk_test::gzip_bytes;
using bk_test::write_bytes;
namespace {
fs::path temp_dir() { return bk_test::temp_dir("common"); }
}  // namespace

TEST_CASE("utf8 validation finds the first bad byte") {
  CHECK(bk::utf8_invalid_offset("plain ascii text, long enough for the fast path") == std::string_view::npos);
  CHECK(bk::utf8_invalid_offset("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == std::string_view::npos);
  CHECK(bk::utf8_invalid_offset("abc\xc3") == 3);               // cut off
  CHECK(bk::utf8_invalid_offset("ab\xc0\xaf") == 2);            // overlong '/'
  CHECK(bk::utf8_invalid_offset("x\xed\xa0\x80") == 1);         // surrogate U+D800
  CHECK(bk::utf8_invalid_offset("\xf4\x90\x80\x80") == 0);      // above U+10FFFF
  CHECK(bk::utf8_invalid_offset("12345678\xff") == 8);
  std::string s;
  bk::append_utf8(s, 0x1F600);
  size_t pos = 0;
  CHECK(bk::next_code_point(s, pos) == 0x1F600);
  CHECK(pos == 4);
}

TEST_CASE("Input reads plain, gzip, bzip2 and concatenated streams alike") {
  auto dir = temp_dir();
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + "\n";
  write_bytes(dir / "plain.txt", text);
  write_bytes(dir / "a.gz", gzip_bytes(text));
  write_bytes(dir / "a.bz2", bzip2_bytes(text));
  write_bytes(dir / "multi.bz2", bzip2_bytes(text.substr(0, 1000)) + bzip2_bytes(text.substr(1000)));
  write_bytes(dir / "multi.gz", gzip_bytes(text.substr(0, 777)) + gzip_bytes(text.substr(777)));
  for (const char* name : {"plain.txt", "a.gz", "a.bz2", "multi.bz2", "multi.gz"}) {
    CAPTURE(name);
    CHECK(bk::read_file((dir / name).string()) == text);
  }
  bk::Input gz((dir / "a.gz").string());
  CHECK(gz.compression() == "gzip");
  std::string trunc = bzip2_bytes(text);
  write_bytes(dir / "trunc.bz2", trunc.substr(0, trunc.size() / 2));
  CHECK_THROWS_WITH_AS(bk::read_file((dir / "trunc.bz2").string()), doctest::Contains("truncated"), bk::Error);
  CHECK_THROWS_WITH_AS(bk::read_file((dir / "missing").string()), doctest::Contains("cannot open"), bk::Error);
  fs::remove_all(dir);
}

TEST_CASE("LineReader splits lines, strips CR, and handles a last line without newline and long lines") {
  auto dir = temp_dir();
  std::string longline(3000, 'x');
  write_bytes(dir / "l.txt", "a\r\nb\n\n" + longline + "\nlast");
  bk::Input in((dir / "l.txt").string());
  bk::LineReader reader(in, 64);
  std::vector<std::string> got;
  std::string_view line;
  while (reader.next(line)) got.emplace_back(line);
  CHECK(got == std::vector<std::string>{"a", "b", "", longline, "last"});
  CHECK(reader.line_number() == 5);
  fs::remove_all(dir);
}

TEST_CASE("Output is atomic: nothing appears until commit, nothing is left on failure") {
  auto dir = temp_dir();
  auto path = (dir / "out.txt").string();
  {
    bk::Output out(path);
    out.write("hello\n");
    CHECK_FALSE(fs::exists(path));
  }
  CHECK(fs::is_empty(dir));  // destroyed without commit: temporary removed
  {
    bk::Output out(path);
    out.write("hello\n");
    out.commit();
  }
  CHECK(bk::read_file(path) == "hello\n");
  CHECK_THROWS_WITH_AS(bk::Output(path, false), doctest::Contains("already exists"), bk::Error);
  {
    bk::Output out(path, true);
    out.write("second\n");
    out.commit();
  }
  CHECK(bk::read_file(path) == "second\n");
  // Missing directories are created for the output and removed again when it is not committed.
  { bk::Output out((dir / "no/such/dir/x").string()); }
  CHECK_FALSE(fs::exists(dir / "no"));
  {
    bk::Output out((dir / "no/such/dir/x").string());
    out.write("kept\n");
    out.commit();
  }
  CHECK(bk::read_file((dir / "no/such/dir/x").string()) == "kept\n");
  // A file where a directory is needed is named.
  CHECK_THROWS_WITH_AS(bk::Output((dir / "no/such/dir/x/y").string()), doctest::Contains("exists and is not a directory"),
                       bk::Error);
  fs::remove_all(dir);
}

TEST_CASE("create_temporary makes a new 0600 file under a fresh name, registered, and never an existing one") {
  auto dir = temp_dir();
  std::vector<std::string> made;
  for (int i = 0; i < 50; ++i) {
    std::string path = (dir / "x.tmp.XXXXXX").string();
    int slot = -1;
    const int fd = bk::create_temporary(path, slot);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK(slot >= 0);
    CHECK(path.find("XXXXXX") == std::string::npos);
    CHECK((fs::status(path).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
    made.push_back(path);
    bk::unregister_cleanup(slot);
  }
  std::sort(made.begin(), made.end());
  CHECK(std::adjacent_find(made.begin(), made.end()) == made.end());  // 50 different files
  std::string bad = (dir / "x.tmp").string();
  int slot = -1;
  CHECK_THROWS_WITH_AS(bk::create_temporary(bad, slot), doctest::Contains("must end in XXXXXX"), bk::Error);
  std::string missing = (dir / "none/x.XXXXXX").string();
  CHECK(bk::create_temporary(missing, slot) == -1);
  CHECK(errno == ENOENT);
  CHECK(slot == -1);
  fs::remove_all(dir);
}

TEST_CASE("DocumentReader: blank lines end documents, runs of blanks collapse, bad UTF-8 names the line") {
  auto dir = temp_dir();
  write_bytes(dir / "d.txt", "\n\na1\na2\n\n  \n\nb1\n\nc1\nc2\nc3");
  bk::Input in((dir / "d.txt").string());
  bk::DocumentReader reader(in);
  bk::Document doc;
  std::vector<std::vector<std::string>> docs;
  std::vector<uint64_t> first;
  while (reader.next(doc)) {
    docs.push_back(doc.lines);
    first.push_back(doc.first_line);
  }
  CHECK(docs == std::vector<std::vector<std::string>>{{"a1", "a2"}, {"b1"}, {"c1", "c2", "c3"}});
  CHECK(first == std::vector<uint64_t>{3, 8, 10});
  write_bytes(dir / "bad.txt", "ok\nfine\nbad \xff here\n");
  bk::Input bad((dir / "bad.txt").string());
  bk::DocumentReader bad_reader(bad);
  CHECK_THROWS_WITH_AS(bad_reader.next(doc), doctest::Contains("line 3: invalid UTF-8 at column 5"), bk::Error);
  fs::remove_all(dir);
}

TEST_CASE("ordered_parallel keeps input order for any thread count and rethrows in order") {
  for (int threads : {1, 2, 7}) {
    int next = 0;
    std::vector<int> seen;
    bk::ordered_parallel<int, int>(
        threads, [&](int& b) { if (next == 500) return false; b = next++; return true; },
        [](int& b) { return b * b; }, [&](int& r) { seen.push_back(r); });
    REQUIRE(seen.size() == 500);
    for (int i = 0; i < 500; ++i) CHECK(seen[i] == i * i);
    next = 0;
    seen.clear();
    auto failing = [&] {
      bk::ordered_parallel<int, int>(
          threads, [&](int& b) { if (next == 100) return false; b = next++; return true; },
          [](int& b) { if (b == 40 || b == 60) throw bk::Error("bad " + std::to_string(b)); return b; },
          [&](int& r) { seen.push_back(r); });
    };
    CHECK_THROWS_WITH(failing(), "bad 40");
    CHECK(seen.size() == 40);
  }
}

TEST_CASE("default_text gives a double default the shortest text that reads back to it") {
  CHECK(bk::default_text(0.0) == "0");
  CHECK(bk::default_text(0.15) == "0.15");
  CHECK(bk::default_text(0.1) == "0.1");
  CHECK(bk::default_text(1e-4) == "0.0001");
  CHECK(bk::default_text(2.5e-7) == "2.5e-07");
}

TEST_CASE("optional_value stores a flag only when it is given") {
  auto parse = [](std::vector<const char*> argv) {
    std::optional<int> level;
    bk::Options opts("tool", "[options]", "A test.");
    opts.add()("level", bk::optional_value(level), "a level");
    argv.insert(argv.begin(), "tool");
    CHECK(opts.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data())));
    return level;
  };
  CHECK(parse({}) == std::nullopt);
  CHECK(parse({"--level", "0"}) == 0);
  CHECK(parse({"--level=-1"}) == -1);
}

TEST_CASE("printable_excerpt escapes what a terminal acts on and cuts long text") {
  using bk::printable_excerpt;
  CHECK(printable_excerpt("input_ids") == "input_ids");
  CHECK(printable_excerpt("caf\xc3\xa9 \xe4\xb8\xad") == "caf\xc3\xa9 \xe4\xb8\xad");  // valid UTF-8 stays as it is
  CHECK(printable_excerpt("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(printable_excerpt("\x1b[31mred") == "\\x1b[31mred");
  CHECK(printable_excerpt(std::string_view("nul\0x", 5)) == "nul\\x00x");
  CHECK(printable_excerpt("back\\slash") == "back\\\\slash");
  CHECK(printable_excerpt("\xff\xc3(") == "\\xff\\xc3(");                    // invalid bytes, one by one
  CHECK(printable_excerpt("\xc2\x9b" "2J") == "\\u009b2J");                   // C1 CSI
  CHECK(printable_excerpt("x\xe2\x80\xaey") == "x\\u202ey");                  // right-to-left override
  CHECK(printable_excerpt("\xed\xa0\x80") == "\\xed\\xa0\\x80");              // a surrogate is not UTF-8
  CHECK(printable_excerpt(std::string(10, 'a'), 10) == "aaaaaaaaaa");
  CHECK(printable_excerpt(std::string(11, 'a'), 10) == "aaaaaaaaaa... (11 bytes)");
  // The cut never splits a character or an escape.
  CHECK(printable_excerpt("ab\xc3\xa9", 3) == "ab... (4 bytes)");
  CHECK(printable_excerpt("ab\x01", 4) == "ab... (3 bytes)");
  std::string huge(5 << 20, '\n');
  std::string cut = printable_excerpt(huge);
  CHECK(cut.size() < 100);
  CHECK(cut.find('\n') == std::string::npos);
  CHECK(cut.ends_with("... (5242880 bytes)"));
}
