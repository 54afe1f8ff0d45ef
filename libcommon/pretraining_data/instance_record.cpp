#include "pretraining_data/instance_record.h"

#include "util/error.h"
#include "tfrecord/protobuf_wire.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace bk {
namespace {

// Packed varints of `values`, then `pad` zeros (each a single 0 byte), in a buffer that only ever grows.
std::string_view pack(std::vector<char>& buffer, const int32_t* values, size_t n, size_t pad) {
  if (buffer.size() < n * 10 + pad + 8) buffer.resize(n * 10 + pad + 8);  // 10 bytes = the longest varint
  char* p = buffer.data();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(values[i]));
    if (v < (1u << 21)) {
      // Every token id of a real vocabulary takes one to three bytes: written without branching on the
      // length (which is unpredictable: ids cross 128 and 16384 at random), as one 4-byte store.
      const uint32_t more1 = v >= (1u << 7), more2 = v >= (1u << 14);
      const uint32_t bytes = static_cast<uint32_t>(v & 0x7f) | more1 << 7 |
                             static_cast<uint32_t>((v >> 7) & 0x7f) << 8 | more2 << 15 |
                             static_cast<uint32_t>(v >> 14) << 16;
      std::memcpy(p, &bytes, 4);  // little-endian hosts only, as the rest of the project
      p += 1 + more1 + more2;
      continue;
    }
    p = put_varint(p, v);
  }
  std::memset(p, 0, pad);
  return {buffer.data(), static_cast<size_t>(p - buffer.data()) + pad};
}

// Sizes of one map entry {1: key, 2: Feature{kind: List{1: packed payload}}}.
struct EntrySize {
  size_t list, feature, entry;
  EntrySize(std::string_view key, size_t payload) {
    list = 1 + varint_size(payload) + payload;                  // List { 1: payload }
    feature = 1 + varint_size(list) + list;                     // Feature { kind: List }
    entry = 1 + varint_size(key.size()) + key.size() + 1 + varint_size(feature) + feature;
  }
  size_t framed() const { return 1 + varint_size(entry) + entry; }  // Features.feature tag + length + entry
};

// Writes an entry's tags and lengths up to its payload, which the caller writes next.
char* put_entry_header(char* p, std::string_view key, int kind_field, size_t payload) {
  const EntrySize size(key, payload);
  *p++ = 0x0A;  // Features.feature (map entry)
  p = put_varint(p, size.entry);
  *p++ = 0x0A;  // key
  p = put_varint(p, key.size());
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  *p++ = 0x12;  // value
  p = put_varint(p, size.feature);
  *p++ = static_cast<char>(kind_field << 3 | 2);
  p = put_varint(p, size.list);
  *p++ = 0x0A;  // List.value, packed
  return put_varint(p, payload);
}

char* put_bytes(char* p, std::string_view bytes) {
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

constexpr int kInt64List = 3, kFloatList = 2;

}  // namespace

void append_instance_record(const InstanceTokens& inst, int max_seq_length, int max_predictions, std::string& out) {
  thread_local std::vector<char> ids_buffer, positions_buffer, masked_ids_buffer;
  const size_t L = static_cast<size_t>(max_seq_length), P = static_cast<size_t>(max_predictions);
  const size_t n = inst.input_ids.size(), p = inst.masked_lm_positions.size();
  const size_t a = static_cast<size_t>(inst.a_length) + 2;  // [CLS] A [SEP] have segment 0

  const std::string_view ids = pack(ids_buffer, inst.input_ids.data(), n, L - n);
  const std::string_view positions = pack(positions_buffer, inst.masked_lm_positions.data(), p, P - p);
  const std::string_view masked_ids = pack(masked_ids_buffer, inst.masked_lm_ids.data(), p, P - p);
  // input_mask and segment_ids are one byte per value (0 or 1); weights are 4 bytes per float.
  const size_t features = EntrySize("input_ids", ids.size()).framed() + EntrySize("input_mask", L).framed() +
                          EntrySize("segment_ids", L).framed() +
                          EntrySize("masked_lm_positions", positions.size()).framed() +
                          EntrySize("masked_lm_ids", masked_ids.size()).framed() +
                          EntrySize("masked_lm_weights", 4 * P).framed() +
                          EntrySize("next_sentence_labels", 1).framed();
  const size_t start = out.size();
  out.resize(start + 1 + varint_size(features) + features);
  char* w = out.data() + start;
  *w++ = 0x0A;  // Example.features
  w = put_varint(w, features);

  w = put_bytes(put_entry_header(w, "input_ids", kInt64List, ids.size()), ids);
  w = put_entry_header(w, "input_mask", kInt64List, L);
  std::memset(w, 1, n);
  std::memset(w + n, 0, L - n);
  w += L;
  w = put_entry_header(w, "segment_ids", kInt64List, L);
  std::memset(w, 0, a);
  std::memset(w + a, 1, n - a);
  std::memset(w + n, 0, L - n);
  w += L;
  w = put_bytes(put_entry_header(w, "masked_lm_positions", kInt64List, positions.size()), positions);
  w = put_bytes(put_entry_header(w, "masked_lm_ids", kInt64List, masked_ids.size()), masked_ids);
  w = put_entry_header(w, "masked_lm_weights", kFloatList, 4 * P);
  const float one = 1.0f;
  for (size_t i = 0; i < p; ++i, w += 4) std::memcpy(w, &one, 4);  // little-endian floats
  std::memset(w, 0, 4 * (P - p));
  w += 4 * (P - p);
  w = put_entry_header(w, "next_sentence_labels", kInt64List, 1);
  *w++ = inst.is_random_next ? 1 : 0;
  if (w != out.data() + out.size()) fail("internal error: a pretraining record's size was miscounted");
}

}  // namespace bk
