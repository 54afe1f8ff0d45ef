// libFuzzer target for bzip2 decoding (bk::Input on .bz2: the block splitter, bertkit's block decoder, the stream
// checks), differential against libbz2: a file that starts with a stream header must decode, with one and with
// two threads, exactly when libbz2 decodes it (its streams one after another), and to the same bytes; otherwise a
// bk::Error. Any bytes: never a crash, a sanitizer report, or bytes libbz2 would not give.
#include "../tools/libbz2_streams.h"
#include "fuzz_file.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Only what bk::Input takes for bzip2 ("BZh1".."BZh9"); other bytes it reads as they are.
  if (size < 4 || data[0] != 'B' || data[1] != 'Z' || data[2] != 'h' || data[3] < '1' || data[3] > '9') return 0;
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".bz2");
  constexpr size_t kMaxOut = 64u << 20;
  const std::optional<std::string> reference =
      bk_test::libbz2_decode(reinterpret_cast<const char*>(data), size, kMaxOut);
  for (int threads : {1, 2}) {
    const std::optional<std::string> ours = bk_fuzz::read_with_input(path, threads, kMaxOut);
    if (ours.has_value() != reference.has_value()) std::abort();
    if (ours && *ours != *reference) std::abort();
  }
  return 0;
}
