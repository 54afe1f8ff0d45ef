#include "pretrain/instance_record.h"

#include "data/protobuf_wire.h"

#include <cstring>
#include <vector>

namespace bk {
namespace {

// One map entry {1: key, 2: Feature{kind: List{1: packed values}}}, given the packed payload.
void put_entry(std::string& out, std::string_view key, int kind_field, std::string_view packed) {
  const size_t list = 1 + varint_size(packed.size()) + packed.size();      // List { 1: packed }
  const size_t feature = 1 + varint_size(list) + list;                     // Feature { kind: List }
  const size_t entry = 1 + varint_size(key.size()) + key.size() + 1 + varint_size(feature) + feature;
  out.push_back(0x0A);  // Features.feature (map entry)
  put_varint(out, entry);
  out.push_back(0x0A);  // key
  put_varint(out, key.size());
  out.append(key);
  out.push_back(0x12);  // value
  put_varint(out, feature);
  out.push_back(static_cast<char>(kind_field << 3 | 2));
  put_varint(out, list);
  out.push_back(0x0A);  // List.value, packed
  put_varint(out, packed.size());
  out.append(packed);
}

// Packed varints of `values`, then `pad` zeros (each a single 0 byte), in a buffer that only ever grows (resizing
// a string down and up again would zero-fill it on every record).
template <typename T>
std::string_view pack(std::vector<char>& buffer, const T* values, size_t n, size_t pad) {
  if (buffer.size() < n * 10 + pad) buffer.resize(n * 10 + pad);  // 10 bytes = the longest varint
  char* p = buffer.data();
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(values[i]));
    if (v < 0x4000) {  // every token id of a real vocabulary: one or two bytes, no loop
      if (v < 0x80) {
        *p++ = static_cast<char>(v);
      } else {
        *p++ = static_cast<char>(v | 0x80);
        *p++ = static_cast<char>(v >> 7);
      }
      continue;
    }
    while (v >= 0x80) {
      *p++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
  }
  std::memset(p, 0, pad);
  return {buffer.data(), static_cast<size_t>(p - buffer.data()) + pad};
}

}  // namespace

void encode_instance_record(const Instance& inst, int max_seq_length, int max_predictions, std::string& out) {
  thread_local std::string features, scratch;
  thread_local std::vector<char> packed;
  features.clear();
  const size_t L = static_cast<size_t>(max_seq_length), P = static_cast<size_t>(max_predictions);
  const size_t n = inst.input_ids.size(), p = inst.masked_lm_positions.size();

  put_entry(features, "input_ids", 3, pack(packed, inst.input_ids.data(), n, L - n));
  scratch.assign(n, '\x01');
  scratch.append(L - n, '\0');
  put_entry(features, "input_mask", 3, scratch);
  const size_t a = static_cast<size_t>(inst.a_length) + 2;  // [CLS] A [SEP] have segment 0
  scratch.assign(a, '\0');
  scratch.append(n - a, '\x01');
  scratch.append(L - n, '\0');
  put_entry(features, "segment_ids", 3, scratch);
  put_entry(features, "masked_lm_positions", 3, pack(packed, inst.masked_lm_positions.data(), p, P - p));
  put_entry(features, "masked_lm_ids", 3, pack(packed, inst.masked_lm_ids.data(), p, P - p));
  scratch.clear();
  const float one = 1.0f;
  char one_bytes[4];
  std::memcpy(one_bytes, &one, 4);  // little-endian hosts only, as the rest of the project
  for (size_t i = 0; i < p; ++i) scratch.append(one_bytes, 4);
  scratch.append((P - p) * 4, '\0');
  put_entry(features, "masked_lm_weights", 2, scratch);
  scratch.assign(1, inst.is_random_next ? '\x01' : '\0');
  put_entry(features, "next_sentence_labels", 3, scratch);

  out.clear();
  out.push_back(0x0A);  // Example.features
  put_varint(out, features.size());
  out.append(features);
}

}  // namespace bk
