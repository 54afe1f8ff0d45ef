// libbz2 alone over a whole file, its streams one after another as bzcat and Python's bz2 module read them: the
// reference that tests/tools/bzip2_probe and tests/fuzz/fuzz_bzip2 hold bertkit's bzip2 decoding to.
#pragma once

#include <bzlib.h>

#include <cstddef>
#include <optional>
#include <string>

namespace bk_test {

// The decoded bytes, or nothing if libbz2 fails (or the output passes max_out); failed_at: the byte it stopped at.
inline std::optional<std::string> libbz2_decode(const char* data, size_t size, size_t max_out,
                                                size_t* failed_at = nullptr) {
  std::string out;
  size_t at = 0;
  while (at < size) {  // one stream per round: multistream files hold many
    bz_stream bz{};
    if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) return std::nullopt;
    bz.next_in = const_cast<char*>(data + at);
    bz.avail_in = static_cast<unsigned>(size - at);
    int rc = BZ_OK;
    char buffer[1 << 16];
    while (rc == BZ_OK) {
      bz.next_out = buffer;
      bz.avail_out = sizeof buffer;
      rc = BZ2_bzDecompress(&bz);
      out.append(buffer, sizeof buffer - bz.avail_out);
      if (rc == BZ_OK && bz.avail_in == 0 && bz.avail_out > 0) rc = BZ_UNEXPECTED_EOF;
      if (out.size() > max_out) rc = BZ_MEM_ERROR;
    }
    at = size - bz.avail_in;
    BZ2_bzDecompressEnd(&bz);
    if (rc != BZ_STREAM_END) {
      if (failed_at != nullptr) *failed_at = at;
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace bk_test
