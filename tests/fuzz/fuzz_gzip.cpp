// libFuzzer target for gzip decoding through bk::Input: with one thread (one inflater, members in sequence) and
// with two and three (io/gzip_members.h: members found by their headers and decoded on workers), any bytes must
// give the same result: the same decoded bytes, or a bk::Error each. Never a crash or a sanitizer report.
#include "fuzz_file.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return 0;  // what bk::Input takes for gzip
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".gz");
  constexpr size_t kMaxOut = 64u << 20;
  const std::optional<std::string> serial = bk_fuzz::read_with_input(path, 1, kMaxOut);
  for (int threads : {2, 3}) {
    const std::optional<std::string> parallel = bk_fuzz::read_with_input(path, threads, kMaxOut);
    if (parallel.has_value() != serial.has_value()) std::abort();
    if (parallel && *parallel != *serial) std::abort();
  }
  return 0;
}
