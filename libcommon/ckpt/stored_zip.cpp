#include "ckpt/stored_zip.h"

#include "util/error.h"
#include "util/printable.h"

#include <fmt/format.h>

#include <algorithm>

namespace bk {

uint64_t little_endian(std::string_view file, uint64_t at, int count) {
  uint64_t v = 0;
  for (int i = count - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(file[at + static_cast<uint64_t>(i)]);
  return v;
}

namespace {

constexpr uint64_t kEndRecordSize = 22, kZip64RecordSize = 56, kZip64LocatorSize = 20;
constexpr uint64_t kDirectoryEntrySize = 46, kLocalHeaderSize = 30;

class ZipReader {
 public:
  ZipReader(std::string_view file, const std::string& path) : file_(file), path_(path) {}

  // Whether `count` bytes from `at` lie inside the file, without wrapping whatever `at` is.
  bool inside(uint64_t at, uint64_t count) const { return at <= file_.size() && count <= file_.size() - at; }
  uint64_t read(uint64_t at, int count) const { return little_endian(file_, at, count); }
  void need(bool ok, std::string_view what) const {
    if (!ok) fail("{}: not a readable torch.save zip archive: {}", path_, what);
  }
  std::string_view file() const { return file_; }

 private:
  std::string_view file_;
  const std::string& path_;
};

// The end-of-central-directory record, searched backwards over the longest comment a zip may end with.
uint64_t find_end_record(const ZipReader& zip) {
  const uint64_t size = zip.file().size();
  zip.need(size >= kEndRecordSize, "shorter than a zip directory");
  for (uint64_t at = size - kEndRecordSize;; --at) {
    if (zip.read(at, 4) == 0x06054b50) return at;
    if (at == 0 || size - at > kEndRecordSize + 0xffff) break;
  }
  zip.need(false, "no end-of-directory record");
  return 0;
}

struct DirectoryPlace {
  uint64_t count = 0, size = 0, offset = 0;
};

DirectoryPlace find_directory(const ZipReader& zip) {
  const uint64_t end = find_end_record(zip);
  DirectoryPlace dir{zip.read(end + 10, 2), zip.read(end + 12, 4), zip.read(end + 16, 4)};
  if (dir.offset == 0xffffffff || dir.size == 0xffffffff || dir.count == 0xffff) {  // zip64: the locator precedes it
    zip.need(end >= kZip64LocatorSize && zip.read(end - kZip64LocatorSize, 4) == 0x07064b50,
             "zip64 sizes without a zip64 locator");
    const uint64_t record = zip.read(end - kZip64LocatorSize + 8, 8);
    zip.need(zip.inside(record, kZip64RecordSize) && zip.read(record, 4) == 0x06064b50,
             "a zip64 locator pointing nowhere");
    dir = {zip.read(record + 32, 8), zip.read(record + 40, 8), zip.read(record + 48, 8)};
  }
  zip.need(zip.inside(dir.offset, dir.size), "a directory beyond the end of the file");
  return dir;
}

// The zip64 extra field holds, in this order, those of the 32-bit size, compressed size and local-header offset
// that overflowed; each is read only where it lies inside the extra field.
void read_zip64_extra(const ZipReader& zip, uint64_t begin, uint64_t end, uint64_t& size, uint64_t& compressed,
                      uint64_t& local) {
  for (uint64_t x = begin; x + 4 <= end;) {
    const uint64_t id = zip.read(x, 2), length = zip.read(x + 2, 2);
    const uint64_t field_end = std::min(end, x + 4 + length);
    uint64_t field = x + 4;
    if (id == 1) {
      for (uint64_t* value : {&size, &compressed, &local})
        if (*value == 0xffffffff && field + 8 <= field_end) {
          *value = zip.read(field, 8);
          field += 8;
        }
    }
    x += 4 + length;
  }
}

}  // namespace

std::map<std::string, StoredZipEntry> read_stored_zip_directory(std::string_view file, const std::string& path) {
  const ZipReader zip(file, path);
  const DirectoryPlace dir = find_directory(zip);
  std::map<std::string, StoredZipEntry> entries;
  uint64_t at = dir.offset;
  for (uint64_t i = 0; i < dir.count; ++i) {
    zip.need(zip.inside(at, kDirectoryEntrySize) && zip.read(at, 4) == 0x02014b50, "a damaged directory entry");
    const uint64_t method = zip.read(at + 10, 2), name_length = zip.read(at + 28, 2);
    const uint64_t extra_length = zip.read(at + 30, 2), comment_length = zip.read(at + 32, 2);
    uint64_t size = zip.read(at + 24, 4), compressed = zip.read(at + 20, 4), local = zip.read(at + 42, 4);
    const uint64_t name_at = at + kDirectoryEntrySize;
    zip.need(zip.inside(name_at, name_length + extra_length + comment_length),
             "a directory entry beyond the end of the file");
    std::string name(file.substr(name_at, name_length));
    const std::string shown = printable_excerpt(name);
    read_zip64_extra(zip, name_at + name_length, name_at + name_length + extra_length, size, compressed, local);
    zip.need(method == 0, fmt::format("entry {} is compressed (method {}); torch.save stores entries", shown, method));
    zip.need(size == compressed, fmt::format("entry {} has differing sizes", shown));
    zip.need(zip.inside(local, kLocalHeaderSize) && zip.read(local, 4) == 0x04034b50,
             fmt::format("entry {}: no local header", shown));
    const uint64_t data = local + kLocalHeaderSize + zip.read(local + 26, 2) + zip.read(local + 28, 2);
    zip.need(zip.inside(data, size), fmt::format("entry {} runs past the end", shown));
    entries[std::move(name)] = {data, size};
    at = name_at + name_length + extra_length + comment_length;
  }
  return entries;
}

}  // namespace bk
