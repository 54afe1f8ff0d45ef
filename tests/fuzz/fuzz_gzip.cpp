// libFuzzer target for gzip decoding through bk::Input: with one thread (one inflater, members in sequence) and
// with two and three (io/gzip_members.h: members found by their headers and decoded on workers), any bytes must
// give the same result: the same decoded bytes, or a bk::Error each. Never a crash or a sanitizer report.
#include "fuzz_file.h"
#include "io/input.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

std::optional<std::string> decode(const std::string& path, int threads) {
  try {
    bk::Input input(path, threads);
    std::string out;
    char buffer[4096];
    while (size_t n = input.read(buffer, sizeof buffer)) {
      out.append(buffer, n);
      if (out.size() > (64u << 20)) return std::nullopt;  // bounded: a few bytes can claim huge outputs
    }
    return out;
  } catch (const bk::Error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return 0;  // what bk::Input takes for gzip
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".gz");
  const std::optional<std::string> serial = decode(path, 1);
  for (int threads : {2, 3}) {
    const std::optional<std::string> parallel = decode(path, threads);
    if (parallel.has_value() != serial.has_value()) std::abort();
    if (parallel && *parallel != *serial) std::abort();
  }
  return 0;
}
