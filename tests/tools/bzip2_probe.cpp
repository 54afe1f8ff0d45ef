// Bench helper (bench/wiki_clean.sh): a .bz2 file decoded by libbz2 alone (its streams one after another, as bzcat
// and Python's bz2 module do) and by bk::Input with one decoding thread (bertkit's block decoder), each timed in
// CPU seconds of the whole process, and whether the two gave the same bytes.
//   bzip2_probe FILE.bz2
//     -> {"decoded_mb": ..., "libbz2_mb_per_cpu_s": ..., "bertkit_mb_per_cpu_s": ..., "identical": true}
#include "cli/run_tool.h"
#include "io/input.h"
#include "util/cpu_time.h"
#include "util/error.h"

#include <bzlib.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

namespace {

std::string decode_with_libbz2(const std::string& raw, const std::string& name) {
  std::string out;
  size_t at = 0;
  while (at < raw.size()) {  // one stream per round: multistream files hold many
    bz_stream bz{};
    if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) bk::fail("{}: cannot start libbz2", name);
    bz.next_in = const_cast<char*>(raw.data() + at);
    bz.avail_in = static_cast<unsigned>(raw.size() - at);
    int rc = BZ_OK;
    char buffer[1 << 16];
    while (rc == BZ_OK) {
      bz.next_out = buffer;
      bz.avail_out = sizeof buffer;
      rc = BZ2_bzDecompress(&bz);
      out.append(buffer, sizeof buffer - bz.avail_out);
      if (rc == BZ_OK && bz.avail_in == 0 && bz.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
    }
    at = raw.size() - bz.avail_in;
    BZ2_bzDecompressEnd(&bz);
    if (rc != BZ_STREAM_END) bk::fail("{}: libbz2 failed near byte {}", name, at);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("bzip2_probe", argc, argv, [](int argc, char** argv) {
    if (argc != 2) bk::usage_fail("usage: bzip2_probe FILE.bz2");
    const std::string name = argv[1];
    std::ifstream file(name, std::ios::binary);
    if (!file) bk::fail("{}: cannot open", name);
    const std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const double start = bk::cpu_seconds(RUSAGE_SELF);
    const std::string reference = decode_with_libbz2(raw, name);
    const double libbz2_s = bk::cpu_seconds(RUSAGE_SELF) - start;
    std::string ours;
    {
      bk::Input input(name, 1);
      char buffer[1 << 16];
      while (size_t n = input.read(buffer, sizeof buffer)) ours.append(buffer, n);
    }
    const double ours_s = bk::cpu_seconds(RUSAGE_SELF) - start - libbz2_s;
    const double mb = static_cast<double>(reference.size()) / 1e6;
    std::cout << nlohmann::json{{"decoded_mb", mb}, {"libbz2_mb_per_cpu_s", mb / libbz2_s},
                                {"bertkit_mb_per_cpu_s", mb / ours_s}, {"identical", ours == reference}}.dump()
              << "\n";
    return 0;
  });
}
