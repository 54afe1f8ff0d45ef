// Shared by the decoder tests: a whole file read through bk::Input, as the tools read it.
#pragma once

#include "io/input.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace bk_test {

// The bytes of `path` through bk::Input with `threads` decoding threads; checks the compression it detected.
inline std::string read_all(const std::filesystem::path& path, int threads, const std::string& compression) {
  bk::Input input(path.string(), threads);
  CHECK(input.compression() == compression);
  std::string out;
  char buf[1 << 15];
  while (size_t n = input.read(buf, sizeof buf)) out.append(buf, n);
  return out;
}

}  // namespace bk_test
