// tf.train.Example, encoded and decoded by hand (no protobuf dependency).
//
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }      // map entry: { string key = 1; Feature value = 2; }
//   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
//   BytesList{ repeated bytes value = 1; }  FloatList{ repeated float value = 1 [packed]; }
//   Int64List{ repeated int64 value = 1 [packed]; }
//
// An Example keeps its features in a list, in the order they were added (or, when decoded, the order they
// appear on the wire). Encoding writes them in that order by default, so decode + encode reproduces a
// TensorFlow-written record byte for byte; FeatureOrder::kSortedByName gives an order independent of how
// the features were built. Readers should look features up by name, never rely on the order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace bk {

using BytesList = std::vector<std::string>;
using FloatList = std::vector<float>;
using Int64List = std::vector<int64_t>;
// std::monostate: a Feature with no kind set (valid protobuf; TensorFlow treats it as an empty feature).
using FeatureValue = std::variant<std::monostate, BytesList, FloatList, Int64List>;

struct Feature {
  std::string name;
  FeatureValue value;

  bool is_bytes() const { return std::holds_alternative<BytesList>(value); }
  bool is_float() const { return std::holds_alternative<FloatList>(value); }
  bool is_int64() const { return std::holds_alternative<Int64List>(value); }
  const BytesList& bytes() const { return std::get<BytesList>(value); }
  const FloatList& floats() const { return std::get<FloatList>(value); }
  const Int64List& int64s() const { return std::get<Int64List>(value); }
};

enum class FeatureOrder { kInsertion, kSortedByName };

class Example {
 public:
  // Adding a name that exists replaces its value in place (protobuf map semantics: the last one wins).
  // The returned reference is for the value; do not rename the feature through it.
  Feature& set(std::string name, FeatureValue value);
  Feature& set_int64(std::string name, Int64List values) { return set(std::move(name), std::move(values)); }
  Feature& set_float(std::string name, FloatList values) { return set(std::move(name), std::move(values)); }
  Feature& set_bytes(std::string name, BytesList values) { return set(std::move(name), std::move(values)); }

  const Feature* find(std::string_view name) const;
  // The feature's values; throws bk::Error naming the feature if it is missing or of another kind.
  const Int64List& int64s(std::string_view name) const;
  const FloatList& floats(std::string_view name) const;
  const BytesList& bytes(std::string_view name) const;

  const std::vector<Feature>& features() const { return features_; }
  size_t size() const { return features_.size(); }
  void clear() {
    features_.clear();
    index_.clear();
  }

  // Same features with the same values, whatever their order (floats compared bit for bit, so NaN == NaN).
  bool same_features(const Example& other) const;

 private:
  std::vector<Feature> features_;
  // Name -> position, built once there are many features, so that set() and find() stay O(1) and a hostile
  // record with thousands of entries cannot make decoding quadratic.
  std::unordered_map<std::string, size_t> index_;
  static constexpr size_t kIndexFrom = 16;
  size_t position(std::string_view name) const;
};

// Serialises as TensorFlow does for one map order (packed floats and int64s; every entry writes key and value).
std::string encode_example(const Example& example, FeatureOrder order = FeatureOrder::kInsertion);
void encode_example(const Example& example, std::string& out, FeatureOrder order = FeatureOrder::kInsertion);

// Parses a serialised Example: packed and unpacked repeated fields, unknown fields skipped, repeated
// messages merged as protobuf does. Malformed bytes throw bk::Error "WHERE: malformed tf.train.Example at
// byte N: REASON" (N counted from the start of `bytes`).
Example decode_example(std::string_view bytes, std::string_view where = "tf.train.Example");
void decode_example(std::string_view bytes, Example& out, std::string_view where = "tf.train.Example");

}  // namespace bk
