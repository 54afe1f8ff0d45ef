// Bench helper (bench/wiki_clean.sh): a .bz2 file decoded by libbz2 alone (its streams one after another, as bzcat
// and Python's bz2 module do) and by bk::Input with one decoding thread (bertkit's block decoder), each timed in
// CPU seconds of the whole process, and whether the two gave the same bytes.
//   bzip2_probe FILE.bz2
//     -> {"decoded_mb": ..., "libbz2_mb_per_cpu_s": ..., "bertkit_mb_per_cpu_s": ..., "identical": true}
#include "libbz2_streams.h"

#include "cli/run_tool.h"
#include "io/input.h"
#include "util/cpu_time.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("bzip2_probe", argc, argv, [](int argc, char** argv) {
    if (argc != 2) bk::usage_fail("usage: bzip2_probe FILE.bz2");
    const std::string name = argv[1];
    std::ifstream file(name, std::ios::binary);
    if (!file) bk::fail("{}: cannot open", name);
    const std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const double start = bk::cpu_seconds(RUSAGE_SELF);
    size_t failed_at = 0;
    const auto decoded = bk_test::libbz2_decode(raw.data(), raw.size(), raw.size() * 200 + (1 << 30), &failed_at);
    if (!decoded) bk::fail("{}: libbz2 failed near byte {}", name, failed_at);
    const std::string& reference = *decoded;
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
