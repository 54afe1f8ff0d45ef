#include "ckpt/safetensors.h"

#include "util/error.h"
#include "util/json_read.h"
#include "util/printable.h"
#include "io/output.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <set>

namespace bk {

namespace {

struct DtypeInfo {
  StDtype dtype;
  const char* name;
  size_t size;
};
constexpr std::array<DtypeInfo, 10> kDtypes{{{StDtype::F64, "F64", 8},
                                             {StDtype::F32, "F32", 4},
                                             {StDtype::F16, "F16", 2},
                                             {StDtype::BF16, "BF16", 2},
                                             {StDtype::I64, "I64", 8},
                                             {StDtype::I32, "I32", 4},
                                             {StDtype::I16, "I16", 2},
                                             {StDtype::I8, "I8", 1},
                                             {StDtype::U8, "U8", 1},
                                             {StDtype::BOOL, "BOOL", 1}}};

// The reference reader refuses headers above 100 MB; so do we (a corrupt length must not allocate gigabytes).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// numel of a shape, or -1 when a dimension is negative or the product overflows.
int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

// numel * itemsize, or -1 when the product overflows (a shape of 2^61 F64 elements must not wrap to 0 bytes).
int64_t checked_bytes(const std::vector<int64_t>& shape, StDtype dtype) {
  const int64_t numel = checked_numel(shape), width = static_cast<int64_t>(st_dtype_size(dtype));
  if (numel < 0 || (width != 0 && numel > std::numeric_limits<int64_t>::max() / width)) return -1;
  return numel * width;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

const char* st_dtype_name(StDtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}

bool st_parse_dtype(std::string_view name, StDtype& dtype) {
  for (const auto& d : kDtypes)
    if (name == d.name) {
      dtype = d.dtype;
      return true;
    }
  return false;
}

size_t st_dtype_size(StDtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.size;
  return 0;
}

int64_t StTensor::numel() const { return checked_numel(shape); }
int64_t StEntry::numel() const { return checked_numel(shape); }

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a directory, not a safetensors file", path);
  file_.open(path, std::ios::binary);
  if (!file_) fail("{}: cannot open", path);
  file_.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(file_.tellg());
  file_.seekg(0);
  if (file_size < 8) fail("{}: not a safetensors file: {} bytes, shorter than the 8-byte header length", path, file_size);
  unsigned char len_bytes[8];
  file_.read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | len_bytes[i];
  if (header_len > kMaxHeaderBytes) fail("{}: not a safetensors file: header length {} is implausible", path, header_len);
  if (header_len > file_size - 8)
    fail("{}: truncated: header length {} but only {} bytes follow", path, header_len, file_size - 8);
  std::string header(header_len, '\0');
  file_.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!file_) fail("{}: read error in the header", path);

  const nlohmann::json json = parse_json(header, path + ": header");
  if (!json.is_object()) fail("{}: header is not a JSON object", path);

  const uint64_t data_start = 8 + header_len, data_len = file_size - data_start;
  for (const auto& item : json.items()) {
    // Not a structured binding: clang before 16 (the fuzz build) cannot capture one in the lambda below.
    const std::string& name = item.key();
    const nlohmann::json& value = item.value();
    if (name == "__metadata__") {
      if (!value.is_object()) fail("{}: __metadata__ is not an object", path);
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) fail("{}: __metadata__ value of \"{}\" is not a string", path, printable_excerpt(key));
        metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    auto bad = [&](const std::string& what) { fail("{}: tensor \"{}\": {}", path, printable_excerpt(name), what); };
    if (!value.is_object()) bad("header entry is not an object");
    StEntry e;
    e.name = name;
    if (!value.contains("dtype") || !value["dtype"].is_string()) bad("missing dtype");
    const std::string dtype = value["dtype"].get<std::string>();
    if (!st_parse_dtype(dtype, e.dtype)) bad("unsupported dtype \"" + printable_excerpt(dtype) + "\"");
    if (!value.contains("shape") || !value["shape"].is_array()) bad("missing shape");
    for (const auto& d : value["shape"]) {
      if (!d.is_number_unsigned()) bad("shape has a non-integer or negative dimension");
      if (d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) bad("shape dimension too large");
      e.shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = value.contains("data_offsets") ? value["data_offsets"] : nlohmann::json();
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      bad("data_offsets must be [begin, end]");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end) bad(fmt::format("data_offsets [{}, {}] run backwards", begin, end));
    if (end > data_len) bad(fmt::format("data_offsets [{}, {}] beyond the {} data bytes in the file", begin, end, data_len));
    const int64_t bytes = checked_bytes(e.shape, e.dtype);
    if (bytes < 0) bad("shape " + shape_text(e.shape) + " of " + dtype + " overflows");
    const uint64_t want = static_cast<uint64_t>(bytes);
    if (end - begin != want)
      bad(fmt::format("{} data bytes, but shape {} of {} needs {}", end - begin, shape_text(e.shape), dtype, want));
    e.begin = data_start + begin;
    e.end = data_start + end;
    entries_.push_back(std::move(e));
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const StEntry& a, const StEntry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t expect = data_start;
  for (const auto& e : entries_) {
    if (e.begin < expect) fail("{}: tensor \"{}\": data overlaps the previous tensor's", path, printable_excerpt(e.name));
    if (e.begin > expect)
      fail("{}: tensor \"{}\": {} unused bytes before its data", path, printable_excerpt(e.name), e.begin - expect);
    expect = e.end;
  }
  if (expect != file_size)
    fail("{}: {} bytes after the last tensor's data (tensors must fill the data section)", path, file_size - expect);
}

const StEntry* SafetensorsReader::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

StTensor SafetensorsReader::read(const StEntry& entry) {
  StTensor t{entry.name, entry.dtype, entry.shape, std::string(entry.end - entry.begin, '\0')};
  file_.clear();
  file_.seekg(static_cast<std::streamoff>(entry.begin));
  file_.read(t.bytes.data(), static_cast<std::streamsize>(t.bytes.size()));
  if (!file_) fail("{}: tensor \"{}\": read error at byte {}", path_, printable_excerpt(entry.name), entry.begin);
  return t;
}

StTensor SafetensorsReader::read(std::string_view name) {
  const StEntry* e = find(name);
  if (!e) fail("{}: no tensor named \"{}\"", path_, printable_excerpt(name));
  return read(*e);
}

std::vector<StTensor> read_safetensors(const std::string& path) {
  SafetensorsReader reader(path);
  std::vector<StTensor> out;
  out.reserve(reader.entries().size());
  for (const auto& e : reader.entries()) out.push_back(reader.read(e));
  return out;
}

void write_safetensors(const std::string& path, const std::vector<StTensorView>& tensors,
                       const std::map<std::string, std::string>& metadata, bool overwrite) {
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") fail("{}: invalid tensor name \"{}\"", path, t.name);
    if (!names.insert(t.name).second) fail("{}: tensor \"{}\" given twice", path, t.name);
    const int64_t bytes = checked_bytes(t.shape, t.dtype);
    if (bytes < 0) fail("{}: tensor \"{}\": invalid shape {}", path, t.name, shape_text(t.shape));
    if (t.bytes.size() != static_cast<uint64_t>(bytes))
      fail("{}: tensor \"{}\": {} bytes, but shape {} of {} needs {}", path, t.name, t.bytes.size(),
           shape_text(t.shape), st_dtype_name(t.dtype), bytes);
  }
  // Largest item size first, then by name: with an 8-aligned header every tensor starts aligned to its item size.
  std::vector<const StTensorView*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const StTensorView* a, const StTensorView* b) {
    const size_t sa = st_dtype_size(a->dtype), sb = st_dtype_size(b->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const StTensorView* t : order) {
    header[t->name] = {{"dtype", st_dtype_name(t->dtype)}, {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->bytes.size()}}};
    offset += t->bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  Output out(path, overwrite);
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[static_cast<size_t>(i)] = static_cast<char>(text.size() >> (8 * i) & 0xff);
  out.write(len);
  out.write(text);
  for (const StTensorView* t : order) out.write(t->bytes);
  out.commit();
}

void write_safetensors(const std::string& path, const std::vector<StTensor>& tensors,
                       const std::map<std::string, std::string>& metadata, bool overwrite) {
  std::vector<StTensorView> views;
  views.reserve(tensors.size());
  for (const auto& t : tensors) views.push_back({t.name, t.dtype, t.shape, t.bytes});
  write_safetensors(path, views, metadata, overwrite);
}

}  // namespace bk
