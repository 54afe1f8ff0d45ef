// Decoding of tf.train.Example (see example.h for the schema). Follows protobuf's parsing rules where they
// matter for real files: fields may come in any order, repeated scalars may be packed or not, a message field
// seen twice is merged, a map key seen twice keeps the last value, unknown fields (including groups) are
// skipped, and a known field number with an unexpected wire type is treated as unknown.
#include "tfrecord/example.h"

#include "util/error.h"

#include <cstring>

namespace bk {
namespace {

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };
constexpr int kMaxGroupDepth = 64;

struct Span {
  size_t begin, end;
};

class Parser {
 public:
  Parser(std::string_view bytes, std::string_view where)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data())), size_(bytes.size()), where_(where) {}

  void example(Example& out) {
    size_t pos = 0;
    while (pos < size_) {
      auto [field, wire] = tag(pos, size_);
      if (field == 1 && wire == kLengthDelimited) features(length_delimited(pos, size_), out);
      else skip(pos, size_, field, wire, 0);
    }
  }

 private:
  [[noreturn]] void bad(size_t pos, std::string_view reason) const {
    fail("{}: malformed tf.train.Example at byte {}: {}", where_, pos, reason);
  }

  uint64_t varint(size_t& pos, size_t end) const {
    uint64_t v = 0;
    const size_t start = pos;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos >= end) bad(start, "truncated varint");
      const unsigned char b = p_[pos++];
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    bad(start, "varint longer than 10 bytes");
  }

  std::pair<uint32_t, int> tag(size_t& pos, size_t end) const {
    const size_t start = pos;
    const uint64_t t = varint(pos, end);
    const uint64_t field = t >> 3;
    if (field == 0 || field > 0x1fffffff) bad(start, fmt::format("invalid field number {}", field));
    return {static_cast<uint32_t>(field), static_cast<int>(t & 7)};
  }

  Span length_delimited(size_t& pos, size_t end) const {
    const size_t start = pos;
    const uint64_t n = varint(pos, end);
    if (n > end - pos) bad(start, fmt::format("length {} runs past the end of its message ({} bytes left)", n, end - pos));
    Span s{pos, pos + static_cast<size_t>(n)};
    pos = s.end;
    return s;
  }

  void skip(size_t& pos, size_t end, uint32_t field, int wire, int depth) const {
    const size_t start = pos;
    switch (wire) {
      case kVarint: varint(pos, end); return;
      case kFixed64:
      case kFixed32: {
        const size_t n = wire == kFixed64 ? 8 : 4;
        if (end - pos < n) bad(start, "truncated fixed-width field");
        pos += n;
        return;
      }
      case kLengthDelimited: length_delimited(pos, end); return;
      case kStartGroup:
        if (depth >= kMaxGroupDepth) bad(start, "groups nested too deeply");
        for (;;) {
          if (pos >= end) bad(start, fmt::format("unterminated group {}", field));
          auto [f, w] = tag(pos, end);
          if (w == kEndGroup) {
            if (f != field) bad(pos, fmt::format("group {} closed by end-group {}", field, f));
            return;
          }
          skip(pos, end, f, w, depth + 1);
        }
      case kEndGroup: bad(start, fmt::format("unexpected end-group for field {}", field));
      default: bad(start, fmt::format("invalid wire type {}", wire));
    }
  }

  void features(Span s, Example& out) const {
    size_t pos = s.begin;
    while (pos < s.end) {
      auto [field, wire] = tag(pos, s.end);
      if (field == 1 && wire == kLengthDelimited) map_entry(length_delimited(pos, s.end), out);
      else skip(pos, s.end, field, wire, 0);
    }
  }

  void map_entry(Span s, Example& out) const {
    std::string key;
    FeatureValue value;
    size_t pos = s.begin;
    while (pos < s.end) {
      auto [field, wire] = tag(pos, s.end);
      if (field == 1 && wire == kLengthDelimited) {
        Span k = length_delimited(pos, s.end);
        key.assign(reinterpret_cast<const char*>(p_ + k.begin), k.end - k.begin);
      } else if (field == 2 && wire == kLengthDelimited) {
        feature(length_delimited(pos, s.end), value);
      } else {
        skip(pos, s.end, field, wire, 0);
      }
    }
    out.set(std::move(key), std::move(value));
  }

  // Merges a Feature message into `value`: a list of the kind already held is appended to, another kind
  // replaces it (oneof semantics).
  void feature(Span s, FeatureValue& value) const {
    size_t pos = s.begin;
    while (pos < s.end) {
      auto [field, wire] = tag(pos, s.end);
      if (field >= 1 && field <= 3 && wire == kLengthDelimited) {
        Span list = length_delimited(pos, s.end);
        if (value.index() != field) {
          if (field == 1) value.emplace<BytesList>();
          else if (field == 2) value.emplace<FloatList>();
          else value.emplace<Int64List>();
        }
        if (field == 1) bytes_list(list, std::get<BytesList>(value));
        else if (field == 2) float_list(list, std::get<FloatList>(value));
        else int64_list(list, std::get<Int64List>(value));
      } else {
        skip(pos, s.end, field, wire, 0);
      }
    }
  }

  void bytes_list(Span s, BytesList& out) const {
    size_t pos = s.begin;
    while (pos < s.end) {
      auto [field, wire] = tag(pos, s.end);
      if (field == 1 && wire == kLengthDelimited) {
        Span v = length_delimited(pos, s.end);
        out.emplace_back(reinterpret_cast<const char*>(p_ + v.begin), v.end - v.begin);
      } else {
        skip(pos, s.end, field, wire, 0);
      }
    }
  }

  float load_float(size_t pos) const {
    uint32_t bits = 0;
    for (int k = 3; k >= 0; --k) bits = (bits << 8) | p_[pos + k];
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }

  void float_list(Span s, FloatList& out) const {
    size_t pos = s.begin;
    while (pos < s.end) {
      const size_t field_start = pos;
      auto [field, wire] = tag(pos, s.end);
      if (field == 1 && wire == kLengthDelimited) {  // packed
        Span v = length_delimited(pos, s.end);
        if ((v.end - v.begin) % 4 != 0)
          bad(field_start, fmt::format("packed float list of {} bytes (not a multiple of 4)", v.end - v.begin));
        out.reserve(out.size() + (v.end - v.begin) / 4);
        for (size_t q = v.begin; q < v.end; q += 4) out.push_back(load_float(q));
      } else if (field == 1 && wire == kFixed32) {  // unpacked
        if (s.end - pos < 4) bad(field_start, "truncated float");
        out.push_back(load_float(pos));
        pos += 4;
      } else {
        skip(pos, s.end, field, wire, 0);
      }
    }
  }

  void int64_list(Span s, Int64List& out) const {
    size_t pos = s.begin;
    while (pos < s.end) {
      auto [field, wire] = tag(pos, s.end);
      if (field == 1 && wire == kLengthDelimited) {  // packed
        Span v = length_delimited(pos, s.end);
        size_t q = v.begin;
        while (q < v.end) out.push_back(static_cast<int64_t>(varint(q, v.end)));
      } else if (field == 1 && wire == kVarint) {  // unpacked
        out.push_back(static_cast<int64_t>(varint(pos, s.end)));
      } else {
        skip(pos, s.end, field, wire, 0);
      }
    }
  }

  const unsigned char* p_;
  size_t size_;
  std::string_view where_;
};

}  // namespace

void decode_example(std::string_view bytes, Example& out, std::string_view where) {
  out.clear();
  Parser(bytes, where).example(out);
}

Example decode_example(std::string_view bytes, std::string_view where) {
  Example e;
  decode_example(bytes, e, where);
  return e;
}

}  // namespace bk
