#include "tfrecord/example.h"

#include "util/error.h"
#include "util/printable.h"
#include "tfrecord/protobuf_wire.h"

#include <algorithm>
#include <cstring>

namespace bk {

// ---- the Example container ----

size_t Example::position(std::string_view name) const {
  if (!index_.empty()) {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? features_.size() : it->second;
  }
  for (size_t i = 0; i < features_.size(); ++i)
    if (features_[i].name == name) return i;
  return features_.size();
}

Feature& Example::set(std::string name, FeatureValue value) {
  const size_t at = position(name);
  if (at < features_.size()) {
    features_[at].value = std::move(value);
    return features_[at];
  }
  features_.push_back(Feature{std::move(name), std::move(value)});
  if (!index_.empty()) index_.emplace(features_.back().name, features_.size() - 1);
  else if (features_.size() >= kIndexFrom)
    for (size_t i = 0; i < features_.size(); ++i) index_.emplace(features_[i].name, i);
  return features_.back();
}

const Feature* Example::find(std::string_view name) const {
  const size_t at = position(name);
  return at < features_.size() ? &features_[at] : nullptr;
}

namespace {
template <typename List>
const List& typed(const Example& e, std::string_view name, const char* kind) {
  const Feature* f = e.find(name);
  if (!f) fail("tf.train.Example has no feature '{}'", printable_excerpt(name));
  if (!std::holds_alternative<List>(f->value)) fail("tf.train.Example feature '{}' is not a {} list", printable_excerpt(name), kind);
  return std::get<List>(f->value);
}

bool same_value(const FeatureValue& a, const FeatureValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* fa = std::get_if<FloatList>(&a)) {
    const auto& fb = std::get<FloatList>(b);
    return fa->size() == fb.size() && (fa->empty() || std::memcmp(fa->data(), fb.data(), fa->size() * 4) == 0);
  }
  return a == b;
}
}  // namespace

const Int64List& Example::int64s(std::string_view name) const { return typed<Int64List>(*this, name, "int64"); }
const FloatList& Example::floats(std::string_view name) const { return typed<FloatList>(*this, name, "float"); }
const BytesList& Example::bytes(std::string_view name) const { return typed<BytesList>(*this, name, "bytes"); }

bool Example::same_features(const Example& other) const {
  if (features_.size() != other.features_.size()) return false;
  for (const auto& f : features_) {
    const Feature* g = other.find(f.name);
    if (!g || !same_value(f.value, g->value)) return false;
  }
  return true;
}

// ---- encoding ----

namespace {

constexpr uint8_t kLengthDelimited = 2;
constexpr char tag(int field, int wire_type) { return static_cast<char>((field << 3) | wire_type); }

// A length-delimited field's size given its payload size (tag bytes are 1 for fields 1-15).
size_t field_size(size_t payload) { return 1 + varint_size(payload) + payload; }

size_t packed_int64_payload(const Int64List& v) {
  size_t n = 0;
  for (int64_t x : v) n += varint_size(static_cast<uint64_t>(x));
  return n;
}

// Size of the list message (BytesList/FloatList/Int64List) inside a Feature.
size_t list_size(const FeatureValue& value) {
  if (const auto* b = std::get_if<BytesList>(&value)) {
    size_t n = 0;
    for (const auto& s : *b) n += field_size(s.size());
    return n;
  }
  if (const auto* f = std::get_if<FloatList>(&value)) return f->empty() ? 0 : field_size(4 * f->size());
  if (const auto* i = std::get_if<Int64List>(&value)) return i->empty() ? 0 : field_size(packed_int64_payload(*i));
  return 0;
}
size_t feature_size(const FeatureValue& value) {
  return std::holds_alternative<std::monostate>(value) ? 0 : field_size(list_size(value));
}
size_t entry_size(const Feature& f) { return field_size(f.name.size()) + field_size(feature_size(f.value)); }

void put_feature(std::string& out, const FeatureValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return;
  out.push_back(tag(static_cast<int>(value.index()), kLengthDelimited));  // variant index == oneof field number
  put_varint(out, list_size(value));
  if (const auto* b = std::get_if<BytesList>(&value)) {
    for (const auto& s : *b) {
      out.push_back(tag(1, kLengthDelimited));
      put_varint(out, s.size());
      out.append(s);
    }
  } else if (const auto* f = std::get_if<FloatList>(&value)) {
    if (f->empty()) return;
    out.push_back(tag(1, kLengthDelimited));
    put_varint(out, 4 * f->size());
    for (float x : *f) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xff));
    }
  } else if (const auto* i = std::get_if<Int64List>(&value)) {
    if (i->empty()) return;
    out.push_back(tag(1, kLengthDelimited));
    put_varint(out, packed_int64_payload(*i));
    for (int64_t x : *i) put_varint(out, static_cast<uint64_t>(x));
  }
}

}  // namespace

void encode_example(const Example& example, std::string& out, FeatureOrder order) {
  std::vector<const Feature*> features;
  features.reserve(example.size());
  for (const auto& f : example.features()) features.push_back(&f);
  if (order == FeatureOrder::kSortedByName)
    std::sort(features.begin(), features.end(), [](const Feature* a, const Feature* b) { return a->name < b->name; });
  size_t features_size = 0;
  for (const Feature* f : features) features_size += field_size(entry_size(*f));
  out.clear();
  out.reserve(field_size(features_size));
  out.push_back(tag(1, kLengthDelimited));
  put_varint(out, features_size);
  for (const Feature* f : features) {
    out.push_back(tag(1, kLengthDelimited));
    put_varint(out, entry_size(*f));
    out.push_back(tag(1, kLengthDelimited));
    put_varint(out, f->name.size());
    out.append(f->name);
    out.push_back(tag(2, kLengthDelimited));
    put_varint(out, feature_size(f->value));
    put_feature(out, f->value);
  }
}

std::string encode_example(const Example& example, FeatureOrder order) {
  std::string out;
  encode_example(example, out, order);
  return out;
}

}  // namespace bk
