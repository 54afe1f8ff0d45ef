// libFuzzer target for bzip2 decoding (bk::Input on .bz2: the block splitter, bertkit's block decoder, the stream
// checks), differential against libbz2: a file that starts with a stream header must decode, with one and with
// two threads, exactly when libbz2 decodes it (its streams one after another), and to the same bytes; otherwise a
// bk::Error. Any bytes: never a crash, a sanitizer report, or bytes libbz2 would not give.
#include "fuzz_file.h"
#include "io/input.h"
#include "util/error.h"

#include <bzlib.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

std::optional<std::string> libbz2(const uint8_t* data, size_t size) {
  std::string out;
  size_t at = 0;
  while (at < size) {
    bz_stream bz{};
    if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) std::abort();
    bz.next_in = reinterpret_cast<char*>(const_cast<uint8_t*>(data + at));
    bz.avail_in = static_cast<unsigned>(size - at);
    int rc = BZ_OK;
    char buffer[4096];
    while (rc == BZ_OK) {
      bz.next_out = buffer;
      bz.avail_out = sizeof buffer;
      rc = BZ2_bzDecompress(&bz);
      out.append(buffer, sizeof buffer - bz.avail_out);
      if (rc == BZ_OK && bz.avail_in == 0 && bz.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
      if (out.size() > (64u << 20)) rc = BZ_MEM_ERROR;  // bounded: a few bytes can claim huge runs
    }
    at = size - bz.avail_in;
    BZ2_bzDecompressEnd(&bz);
    if (rc != BZ_STREAM_END) return std::nullopt;
  }
  return out;
}

std::optional<std::string> bertkit(const std::string& path, int threads) {
  try {
    bk::Input input(path, threads);
    std::string out;
    char buffer[4096];
    while (size_t n = input.read(buffer, sizeof buffer)) {
      out.append(buffer, n);
      if (out.size() > (64u << 20)) return std::nullopt;
    }
    return out;
  } catch (const bk::Error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Only what bk::Input takes for bzip2 ("BZh1".."BZh9"); other bytes it reads as they are.
  if (size < 4 || data[0] != 'B' || data[1] != 'Z' || data[2] != 'h' || data[3] < '1' || data[3] > '9') return 0;
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".bz2");
  const std::optional<std::string> reference = libbz2(data, size);
  for (int threads : {1, 2}) {
    const std::optional<std::string> ours = bertkit(path, threads);
    if (ours.has_value() != reference.has_value()) std::abort();
    if (ours && *ours != *reference) std::abort();
  }
  return 0;
}
