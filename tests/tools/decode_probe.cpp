// Bench helper (bench/wiki_clean.sh): a compressed file read through bk::Input with THREADS decoding threads and
// nothing else done with the bytes: the decoding rate alone.
//   decode_probe FILE THREADS -> {"decoded_mb": ..., "wall_s": ..., "cpu_s": ..., "compression": "gzip"}
#include "cli/run_tool.h"
#include "io/input.h"
#include "util/cpu_time.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("decode_probe", argc, argv, [](int argc, char** argv) {
    if (argc != 3) bk::usage_fail("usage: decode_probe FILE THREADS");
    const auto start = std::chrono::steady_clock::now();
    bk::Input input(argv[1], std::stoi(argv[2]));
    static char buffer[1 << 16];
    uint64_t bytes = 0;
    while (size_t n = input.read(buffer, sizeof buffer)) bytes += n;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << nlohmann::json{{"decoded_mb", static_cast<double>(bytes) / 1e6}, {"wall_s", wall},
                                {"cpu_s", bk::cpu_seconds(RUSAGE_SELF)}, {"compression", input.compression()}}.dump()
              << "\n";
    return 0;
  });
}
