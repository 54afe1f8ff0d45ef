// For targets whose parser opens a path (HDF5, safetensors, bk::Input): the fuzzer's bytes written to one file
// per process, rewritten for every input, under $TMPDIR (or /tmp) and removed at exit.
#pragma once

#include "io/input.h"
#include "util/error.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace bk_fuzz {

inline const std::string& fuzz_file_path(const char* suffix) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir && *dir ? dir : "/tmp") + "/bertkit-fuzz-" + std::to_string(getpid()) + suffix;
    static std::string removed;
    removed = p;
    std::atexit([] { std::remove(removed.c_str()); });
    return p;
  }();
  return path;
}

// Writes `data` to the process's file and returns its path; aborts if it cannot (a broken harness, not a finding).
inline const std::string& write_fuzz_file(const uint8_t* data, size_t size, const char* suffix) {
  const std::string& path = fuzz_file_path(suffix);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
  return path;
}

// The bytes of `path` as bk::Input decodes them with `threads` decoding threads, or nothing on a bk::Error or past
// max_out bytes (a few compressed bytes can claim huge outputs).
inline std::optional<std::string> read_with_input(const std::string& path, int threads, size_t max_out) {
  try {
    bk::Input input(path, threads);
    std::string out;
    char buffer[4096];
    while (size_t n = input.read(buffer, sizeof buffer)) {
      out.append(buffer, n);
      if (out.size() > max_out) return std::nullopt;
    }
    return out;
  } catch (const bk::Error&) {
    return std::nullopt;
  }
}

}  // namespace bk_fuzz
