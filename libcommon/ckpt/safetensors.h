// HF safetensors files, without LibTorch (ckpt-convert and tests use this directly; model/safetensors_torch.h
// adapts it to at::Tensor).
//
// Layout: u64 LE header length N | N bytes of JSON header | raw little-endian tensor data. The header maps each
// tensor name to {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} (offsets relative to the data
// section) and may hold "__metadata__": {string: string}. The reader insists on what the reference reader
// insists on: the tensors tile the data section exactly (contiguous, no gap, no overlap, ending at the end of
// the file) and each one's byte size is numel * itemsize. The writer pads the header with spaces to a multiple
// of 8 bytes and orders the data by item size (largest first), then by name, so every tensor is aligned to its
// item size, as the reference writer does.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

const char* st_dtype_name(StDtype dtype);          // "F32", "BF16", ...
bool st_parse_dtype(std::string_view name, StDtype& dtype);
size_t st_dtype_size(StDtype dtype);              // bytes per element

// One tensor with its bytes in memory (row-major, little-endian).
struct StTensor {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  std::string bytes;

  int64_t numel() const;
};

// A tensor to write whose bytes live elsewhere (a torch tensor, a mapped file); must stay valid while writing.
struct StTensorView {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

// The header entry of one tensor (offsets are absolute positions in the file).
struct StEntry {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;

  int64_t numel() const;
};

// Reads the header on construction (validating it against the file size); tensors are read on demand, so a
// large checkpoint is never held twice in memory. Every error names the file and, where it applies, the tensor.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<StEntry>& entries() const { return entries_; }  // in data order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const StEntry* find(std::string_view name) const;  // nullptr when absent

  StTensor read(const StEntry& entry);
  StTensor read(std::string_view name);  // throws naming the file when the tensor is absent

 private:
  std::string path_;
  std::ifstream file_;
  std::vector<StEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a file, in data order.
std::vector<StTensor> read_safetensors(const std::string& path);

// Writes atomically (temporary file renamed into place); refuses an existing file unless overwrite. Names must be
// unique, non-empty and not "__metadata__"; each view's byte size must be numel * itemsize.
void write_safetensors(const std::string& path, const std::vector<StTensorView>& tensors,
                       const std::map<std::string, std::string>& metadata = {}, bool overwrite = false);
void write_safetensors(const std::string& path, const std::vector<StTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {}, bool overwrite = false);

}  // namespace bk
