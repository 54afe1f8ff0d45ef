// Just enough of Python's pickle machine (protocols 2 to 4) to rebuild what torch.save writes: dicts, lists,
// tuples, scalars, strings and tensors over persistent-id storages (torch-free). Nothing is ever called: a global
// other than the few tensor rebuilders is kept as an opaque value.
//
// The bytes are untrusted. Values live in one arena and refer to each other by index, so a pickle of a million
// nested lists is built and freed without recursion, and a cycle (a list appended to itself) is harmless. What the
// machine holds (values, their strings and items, the stack, the memo) is bounded by `memory_limit` bytes: one
// byte of pickle can ask for a new object, so the reader fails once they add up to more than a real file needs.
#pragma once

#include "ckpt/safetensors.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

using PickleId = uint32_t;

struct PickleValue {
  enum class Kind : uint8_t { none, boolean, integer, real, string, bytes, list, tuple, dict, global, storage, tensor, object };
  Kind kind = Kind::none;
  StDtype dtype = StDtype::F32;  // storage
  uint32_t part = 0;             // its entry in Unpickled::texts (string, bytes, global, storage key),
                                 // ::children (list, tuple, dict) or ::tensors (tensor)
  int64_t integer = 0;           // integer, boolean
  double real = 0;
};

// A tensor as _rebuild_tensor_v2 describes it: a view of a storage.
struct PickledTensor {
  PickleId storage = 0;
  int64_t offset = 0;  // in elements of the storage
  std::vector<int64_t> sizes, strides;
};

struct Unpickled {
  std::vector<PickleValue> values;
  std::vector<std::string> texts;
  std::vector<std::vector<PickleId>> children;  // a dict's: key, value, key, value... in insertion order
  std::vector<PickledTensor> tensors;
  PickleId root = 0;

  const PickleValue& at(PickleId id) const { return values[id]; }
  const std::string& text(const PickleValue& v) const { return texts[v.part]; }
  const std::vector<PickleId>& items(const PickleValue& v) const { return children[v.part]; }
  const PickledTensor& tensor(const PickleValue& v) const { return tensors[v.part]; }
  // The value under the string key `key` of a dict, or nullptr.
  const PickleValue* entry(const PickleValue& dict, std::string_view key) const;
};

// Runs the pickle in `bytes` to its STOP. bk::Error "WHERE at byte N: problem" for anything it cannot run, and when
// what it holds would pass memory_limit bytes.
Unpickled unpickle(std::string_view bytes, const std::string& where, uint64_t memory_limit);

}  // namespace bk
