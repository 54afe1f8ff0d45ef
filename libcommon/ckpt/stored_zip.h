// The directory of a zip archive whose entries are stored, not compressed: what torch.save writes (torch-free).
// Every offset and size read from the file is checked against the file before it is used, zip64 ones included.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace bk {

struct StoredZipEntry {
  uint64_t offset = 0, size = 0;  // of the entry's data, within the file
};

// The entries of `file` (the whole archive in memory) by name. bk::Error naming `path` for anything that is not
// a readable archive of stored entries.
std::map<std::string, StoredZipEntry> read_stored_zip_directory(std::string_view file, const std::string& path);

// `count` bytes from `at` of `file`, little-endian; the caller has checked that they lie inside it.
uint64_t little_endian(std::string_view file, uint64_t at, int count);

}  // namespace bk
