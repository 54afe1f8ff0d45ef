#include "ckpt/torch_save.h"

#include "ckpt/pickle.h"
#include "ckpt/stored_zip.h"
#include "io/input.h"
#include "util/error.h"
#include "util/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace bk {

namespace {

// What the pickle machine may hold per byte of the file (pickle.h): a real state dict's pickle is a sliver of its
// file, while a hostile one of a few MB could otherwise ask for gigabytes of empty dicts.
constexpr uint64_t kPickleBytesPerFileByte = 16, kPickleBytesFloor = 1 << 20;
// The tensors read may view the same storage more than once (HF's tied decoder and word embeddings), but never
// add up to more than this many times the file.
constexpr uint64_t kTensorBytesPerFileByte = 4;

using Kind = PickleValue::Kind;

// Byte offsets a tensor view reaches in its storage, each step checked: sizes, strides and the offset come from
// the file and may be anything an int64 holds.
struct ViewExtent {
  uint64_t count = 0;    // elements
  uint64_t end = 0;      // one past the last byte it reads, in its storage
  bool contiguous = true;
};

// More dimensions than any framework makes (torch's limit is 64).
constexpr size_t kMaxRank = 64;

ViewExtent view_extent(const PickledTensor& t, uint64_t element, const std::string& what) {
  if (t.offset < 0) fail("{}: a negative storage offset {}", what, t.offset);
  if (t.sizes.size() > kMaxRank) fail("{}: {} dimensions, more than {}", what, t.sizes.size(), kMaxRank);
  ViewExtent extent;
  extent.count = 1;
  uint64_t last = static_cast<uint64_t>(t.offset), expected_stride = 1;
  for (size_t d = t.sizes.size(); d-- > 0;) {
    if (t.sizes[d] < 0 || t.strides[d] < 0) fail("{}: a negative size or stride", what);
    const auto size = static_cast<uint64_t>(t.sizes[d]), stride = static_cast<uint64_t>(t.strides[d]);
    uint64_t reach = 0;
    if (__builtin_mul_overflow(extent.count, size, &extent.count) ||
        (size > 0 && (__builtin_mul_overflow(size - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last))))
      fail("{}: its sizes and strides reach past any storage (offset {})", what, t.offset);
    if (size != 1 && stride != expected_stride) extent.contiguous = false;
    expected_stride *= size;  // only compared while the product has not wrapped: count has not overflowed
  }
  if (extent.count > 0 && (__builtin_add_overflow(last, 1, &extent.end) ||
                           __builtin_mul_overflow(extent.end, element, &extent.end)))
    fail("{}: its storage offset {} and strides reach past any storage", what, t.offset);
  return extent;
}

// The tensor's elements in row-major order, from its storage's bytes.
std::string tensor_bytes(const PickledTensor& t, StDtype dtype, std::string_view storage, const std::string& what) {
  const uint64_t element = st_dtype_size(dtype);
  const ViewExtent extent = view_extent(t, element, what);
  if (extent.count == 0) return {};
  if (extent.end > storage.size())
    fail("{}: its elements (storage offset {}) run past its storage of {} bytes", what, t.offset, storage.size());
  if (extent.count > storage.size() / element)
    fail("{}: {} elements from a storage of {}: its strides overlap (an expanded tensor, not a parameter)", what,
         extent.count, storage.size() / element);
  const uint64_t begin = static_cast<uint64_t>(t.offset) * element;
  if (extent.contiguous) return std::string(storage.substr(begin, extent.count * element));
  std::string out(extent.count * element, '\0');
  std::vector<int64_t> index(t.sizes.size(), 0);
  for (uint64_t i = 0; i < extent.count; ++i) {
    uint64_t at = static_cast<uint64_t>(t.offset);
    for (size_t d = 0; d < index.size(); ++d) at += static_cast<uint64_t>(index[d] * t.strides[d]);
    std::memcpy(out.data() + i * element, storage.data() + at * element, element);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// torch.save records the writer's byte order (ARCHIVE/byteorder, "little" or "big"; absent before torch 1.12,
// which wrote only little-endian files); torch.load swaps a big-endian file's elements, and so do we.
bool big_endian_archive(const std::map<std::string, StoredZipEntry>& entries, std::string_view file,
                        const std::string& archive, const std::string& path) {
  auto it = entries.find(archive + "/byteorder");
  if (it == entries.end()) return false;
  const std::string_view order = file.substr(it->second.offset, it->second.size);
  if (order == "little") return false;
  if (order == "big") return true;
  fail("{}: {}/byteorder says '{}', neither little nor big", path, archive, printable_excerpt(order));
}

void swap_elements(std::string& bytes, size_t element) {
  for (size_t at = 0; at + element <= bytes.size(); at += element)
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(at + element));
}

// The directory name every entry sits under (ARCHIVE/data.pkl); torch.save names it after the file.
std::string archive_name(const std::map<std::string, StoredZipEntry>& entries, const std::string& path) {
  std::string archive;
  for (const auto& [name, entry] : entries) {
    if (!name.ends_with("/data.pkl") || name.find('/') != name.size() - 9 || name.size() == 9) continue;
    if (!archive.empty()) fail("{}: holds two pickles ({}/data.pkl and another): not one torch.save file", path,
                               printable_excerpt(archive));
    archive = name.substr(0, name.size() - 9);
  }
  if (archive.empty()) fail("{}: a zip archive without ARCHIVE/data.pkl: not a torch.save file", path);
  return archive;
}

// The model's state dict: "model", "state_dict" or "module" when one is a dict, else the top-level dict.
const PickleValue& state_dict_of(const Unpickled& pickle, const std::string& path) {
  const PickleValue& root = pickle.at(pickle.root);
  if (root.kind != Kind::dict) fail("{}: holds no dict of tensors", path);
  for (const char* key : {"model", "state_dict", "module"})
    if (const PickleValue* v = pickle.entry(root, key); v != nullptr && v->kind == Kind::dict) return *v;
  return root;
}

}  // namespace

bool looks_like_torch_save(std::string_view bytes) { return bytes.size() >= 4 && bytes.substr(0, 4) == "PK\x03\x04"; }

std::vector<StTensor> read_torch_save_state_dict(const std::string& path) {
  const std::string file = read_file(path);
  if (!looks_like_torch_save(file))
    fail("{}: not a torch.save zip archive (a file of torch < 1.6, or saved with "
         "_use_new_zipfile_serialization=False, must be saved again)", path);
  const auto entries = read_stored_zip_directory(file, path);
  const std::string archive = archive_name(entries, path);
  const bool swap = big_endian_archive(entries, file, archive, path);
  const StoredZipEntry pickle_entry = entries.at(archive + "/data.pkl");
  const Unpickled pickle = unpickle(std::string_view(file).substr(pickle_entry.offset, pickle_entry.size),
                                    path + ": " + printable_excerpt(archive) + "/data.pkl",
                                    kPickleBytesPerFileByte * file.size() + kPickleBytesFloor);
  const auto& state = pickle.items(state_dict_of(pickle, path));
  std::vector<StTensor> tensors;
  uint64_t total = 0;
  for (size_t i = 0; i + 1 < state.size(); i += 2) {
    const PickleValue &key = pickle.at(state[i]), &value = pickle.at(state[i + 1]);
    if (key.kind != Kind::string || value.kind != Kind::tensor) continue;
    const PickledTensor& view = pickle.tensor(value);
    const PickleValue& storage = pickle.at(view.storage);
    const StDtype dtype = storage.dtype;
    if (dtype != StDtype::F32 && dtype != StDtype::F16 && dtype != StDtype::BF16 && dtype != StDtype::F64) continue;
    const std::string what = fmt::format("{}: tensor {}", path, printable_excerpt(pickle.text(key)));
    auto it = entries.find(archive + "/data/" + pickle.text(storage));
    if (it == entries.end())
      fail("{}: its storage {} is not in the archive", what, printable_excerpt(pickle.text(storage)));
    StTensor t;
    t.name = pickle.text(key);
    t.dtype = dtype;
    t.shape = view.sizes;
    t.bytes = tensor_bytes(view, dtype, std::string_view(file).substr(it->second.offset, it->second.size), what);
    if (swap) swap_elements(t.bytes, st_dtype_size(dtype));
    total += t.bytes.size();
    if (total > kTensorBytesPerFileByte * file.size())
      fail("{}: its tensors view the same storages over and over ({} bytes read from a file of {})", what, total,
           file.size());
    tensors.push_back(std::move(t));
  }
  if (tensors.empty()) fail("{}: holds no floating-point tensors: not a model's state dict", path);
  return tensors;
}

}  // namespace bk
