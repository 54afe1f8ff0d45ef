// Small helpers the unit tests share: a per-process temporary directory, raw file writes, and compressed copies
// of bytes made with zlib and libbz2 directly (independent of the bk::Input that reads them back).
#pragma once

#include <bzlib.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace bk_test {

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("bertkit-unit-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

inline std::string gzip_bytes(const std::string& s) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, s.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = static_cast<uInt>(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::string bzip2_bytes(const std::string& s) {
  std::string out(s.size() * 2 + 1000, '\0');
  unsigned len = static_cast<unsigned>(out.size());
  BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(s.data()), static_cast<unsigned>(s.size()), 9, 0, 0);
  out.resize(len);
  return out;
}

}  // namespace bk_test
