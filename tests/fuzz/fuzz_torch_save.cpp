// libFuzzer target for the torch.save reader (ckpt/torch_save.h: ckpt-convert, bert-train --init-checkpoint,
// bert-eval and bert-finetune on .pt/.pth/.bin files): any bytes must give tensors or a bk::Error, never a crash, a
// sanitizer report or a huge allocation; what is accepted must keep the reader's promises (each tensor holds
// exactly numel x itemsize bytes, in a floating-point dtype, with a non-negative shape).
//
// Half of the mutations are structure-aware, so that they get past the zip directory: data.pkl is taken out of
// the archive, its integers (storage offsets, sizes, strides) swapped for values at the edges of 32 and 64 bits,
// its root wrapped in thousands of nested lists or dicts, or a slice of it repeated; then the archive is written
// again around it. seed_corpora.sh seeds it with torch.save's own files and the crafted ones of
// tests/compat/hostile_checkpoints.py.
#include "ckpt/stored_zip.h"
#include "ckpt/torch_save.h"
#include "fuzz_file.h"
#include "util/error.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// A zip of stored entries, as torch.save writes one (CRCs left 0: the reader does not check them).
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, directory;
  for (const auto& [name, data] : entries) {
    const uint64_t local = out.size();
    put_le(out, 0x04034b50, 4);
    put_le(out, 20, 2), put_le(out, 0, 2), put_le(out, 0, 2), put_le(out, 0, 4), put_le(out, 0, 4);
    put_le(out, data.size(), 4), put_le(out, data.size(), 4), put_le(out, name.size(), 2), put_le(out, 0, 2);
    out += name + data;
    put_le(directory, 0x02014b50, 4);
    put_le(directory, 20, 2), put_le(directory, 20, 2), put_le(directory, 0, 2), put_le(directory, 0, 2);
    put_le(directory, 0, 4), put_le(directory, 0, 4), put_le(directory, data.size(), 4);
    put_le(directory, data.size(), 4), put_le(directory, name.size(), 2), put_le(directory, 0, 2);
    put_le(directory, 0, 2), put_le(directory, 0, 2), put_le(directory, 0, 2), put_le(directory, 0, 4);
    put_le(directory, local, 4);
    directory += name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  put_le(out, 0x06054b50, 4), put_le(out, 0, 4), put_le(out, entries.size(), 2), put_le(out, entries.size(), 2);
  put_le(out, directory.size(), 4), put_le(out, directory_at, 4), put_le(out, 0, 2);
  return out;
}

// An integer opcode (BININT1, BININT2, BININT, LONG1) at a random place replaced by LONG1 of an edge value.
void swap_integer(std::string& pickle, std::mt19937_64& rng) {
  static const int64_t kEdges[] = {0, 1, -1, 2, INT32_MAX, int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 61,
                                   (int64_t{1} << 62) - 16, int64_t{1} << 62, INT64_MAX, INT64_MIN, -4};
  for (int tries = 0; tries < 64 && !pickle.empty(); ++tries) {
    const size_t at = rng() % pickle.size();
    const auto op = static_cast<uint8_t>(pickle[at]);
    size_t width = op == 'K' ? 2 : op == 'M' ? 3 : op == 'J' ? 5 : op == 0x8a && at + 1 < pickle.size() ? 2 + static_cast<uint8_t>(pickle[at + 1]) : 0;
    if (width == 0 || at + width > pickle.size()) continue;
    const int64_t value = rng() % 4 == 0 ? static_cast<int64_t>(rng()) : kEdges[rng() % std::size(kEdges)];
    std::string replacement = "\x8a\x08";
    put_le(replacement, static_cast<uint64_t>(value), 8);
    pickle.replace(at, width, replacement);
    return;
  }
}

// The root wrapped in `depth` lists or dicts: PROTO stays first, the wrapping opcodes go before STOP.
void nest(std::string& pickle, std::mt19937_64& rng) {
  if (pickle.size() < 3 || pickle.back() != '.') return;
  const size_t depth = 1 + rng() % 20000;
  const bool dicts = rng() % 2;
  const std::string open = dicts ? std::string("}K\x00", 3) : "]";
  std::string prefix, suffix(depth, dicts ? 's' : 'a');
  for (size_t i = 0; i < depth; ++i) prefix += open;
  const size_t body = pickle[0] == '\x80' ? 2 : 0;
  pickle.insert(pickle.size() - 1, suffix);
  pickle.insert(body, prefix);
}

void repeat_slice(std::string& pickle, std::mt19937_64& rng) {
  if (pickle.size() < 2) return;
  const size_t at = rng() % pickle.size(), length = 1 + rng() % std::min<size_t>(16, pickle.size() - at);
  const std::string slice = pickle.substr(at, length);
  std::string repeated;
  for (size_t n = 1 + rng() % 5000; n > 0; --n) repeated += slice;
  pickle.insert(at, repeated);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> entries;
  try {
    for (const auto& [name, entry] : bk::read_stored_zip_directory(file, "fuzz"))
      entries.emplace_back(name, std::string(file.substr(entry.offset, entry.size)));
  } catch (const bk::Error&) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  for (auto& [name, bytes] : entries) {
    if (!name.ends_with("/data.pkl")) continue;
    switch (rng() % 4) {
      case 0: nest(bytes, rng); break;
      case 1: repeat_slice(bytes, rng); break;
      default: swap_integer(bytes, rng);
    }
  }
  const std::string rebuilt = stored_zip(entries);
  if (rebuilt.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, rebuilt.data(), rebuilt.size());
  return rebuilt.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = bk_fuzz::write_fuzz_file(data, size, ".pt");
  try {
    for (const bk::StTensor& t : bk::read_torch_save_state_dict(path)) {
      unsigned __int128 numel = 1;
      for (int64_t d : t.shape) {
        if (d < 0) std::abort();
        numel *= static_cast<uint64_t>(d);
      }
      if (t.dtype != bk::StDtype::F32 && t.dtype != bk::StDtype::F16 && t.dtype != bk::StDtype::BF16 &&
          t.dtype != bk::StDtype::F64)
        std::abort();
      if (numel * bk::st_dtype_size(t.dtype) != t.bytes.size()) std::abort();
    }
  } catch (const bk::Error&) {
  }
  return 0;
}
