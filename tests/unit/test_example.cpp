#include <doctest/doctest.h>

#include "../error_of.h"
#include "util/error.h"
#include "tfrecord/example.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace fs = std::filesystem;

namespace {
std::string hex_bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}
std::string decode_error(const std::string& bytes) {
  return bk_test::error_of([&] { bk::decode_example(bytes, "rec"); });
}
uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
const fs::path kFixtures = BERTKIT_FIXTURES;
}  // namespace

TEST_CASE("example: encoding follows the protobuf wire format (worked by hand)") {
  bk::Example e;
  e.set_int64("a", {1, -1});
  // Int64List: 0a 0b | 01 | ff*9 01 (-1 as a 10-byte varint); Feature: 1a 0d; map entry: 0a 01 'a' 12 0f;
  // Features: 0a 14; Example: 0a 16.
  std::string expected = hex_bytes({0x0a, 0x16, 0x0a, 0x14, 0x0a, 0x01, 'a', 0x12, 0x0f, 0x1a, 0x0d, 0x0a, 0x0b, 0x01});
  expected += std::string(9, '\xff') + "\x01";
  CHECK(bk::encode_example(e) == expected);

  bk::Example f;
  f.set_float("w", {1.0f});        // FloatList 0a 04 00 00 80 3f; Feature 12 06
  f.set_bytes("s", {"hi", ""});    // BytesList 0a 02 'h' 'i' 0a 00; Feature 0a 06
  f.set_int64("e", {});            // empty Int64List; Feature 1a 00
  const std::string w_entry = hex_bytes({0x0a, 0x0d, 0x0a, 0x01, 'w', 0x12, 0x08, 0x12, 0x06, 0x0a, 0x04, 0, 0, 0x80, 0x3f});
  const std::string s_entry = hex_bytes({0x0a, 0x0d, 0x0a, 0x01, 's', 0x12, 0x08, 0x0a, 0x06, 0x0a, 0x02, 'h', 'i', 0x0a, 0});
  const std::string e_entry = hex_bytes({0x0a, 0x07, 0x0a, 0x01, 'e', 0x12, 0x02, 0x1a, 0x00});
  const std::string body = w_entry + s_entry + e_entry;
  CHECK(bk::encode_example(f) == hex_bytes({0x0a, static_cast<int>(body.size())}) + body);
  const std::string sorted = e_entry + s_entry + w_entry;
  CHECK(bk::encode_example(f, bk::FeatureOrder::kSortedByName) == hex_bytes({0x0a, static_cast<int>(sorted.size())}) + sorted);
}

TEST_CASE("example: round trip of every kind, including edge values") {
  bk::Example e;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  e.set_int64("ints", {0, 1, -1, 127, 128, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  e.set_float("floats", {0.0f, -0.0f, 1.5f, nan, inf, -inf, std::numeric_limits<float>::denorm_min()});
  e.set_bytes("bytes", {std::string("\0\xff\n", 3), "", std::string(300, 'z')});
  e.set_int64("no_ints", {});
  e.set_float("no_floats", {});
  e.set_bytes("no_bytes", {});
  e.set("unset", std::monostate{});
  e.set(std::string(200, 'k'), bk::Int64List{5});  // a key whose length needs a 2-byte varint
  const std::string encoded = bk::encode_example(e);
  bk::Example d = bk::decode_example(encoded);
  CHECK(d.same_features(e));
  REQUIRE(d.size() == e.size());
  for (size_t i = 0; i < d.size(); ++i) CHECK(d.features()[i].name == e.features()[i].name);
  CHECK(float_bits(d.floats("floats")[3]) == float_bits(nan));
  CHECK(std::signbit(d.floats("floats")[1]));
  CHECK(d.int64s("ints")[5] == std::numeric_limits<int64_t>::min());
  CHECK(d.bytes("bytes")[0] == std::string("\0\xff\n", 3));
  CHECK(std::holds_alternative<std::monostate>(d.find("unset")->value));
  CHECK(bk::encode_example(d) == encoded);
  CHECK(bk::decode_example(bk::encode_example(e, bk::FeatureOrder::kSortedByName)).same_features(e));
  CHECK_THROWS_WITH_AS(d.int64s("floats"), "tf.train.Example feature 'floats' is not a int64 list", bk::Error);
  CHECK_THROWS_WITH_AS(d.bytes("missing"), "tf.train.Example has no feature 'missing'", bk::Error);
}

TEST_CASE("example: decoder accepts unpacked repeated fields, merges, and skips unknown fields") {
  // Example{ unknown varint field 7; Features{ entry{ key "n", Feature{ Int64List{ 1: 5 (unpacked), 1: [6, 7]
  // (packed), unknown varint field 3 } } }, entry{ key "f", Feature{ FloatList{ 1: 2.0f (unpacked fixed32) },
  // unknown fixed64 field 9 } } } }
  const std::string list = hex_bytes({0x08, 0x05, 0x0a, 0x02, 0x06, 0x07, 0x18, 0x01});  // value 5, [6,7], field 3 = 1
  const std::string feature = hex_bytes({0x1a, static_cast<int>(list.size())}) + list;
  const std::string entry_n = hex_bytes({0x0a, 0x01, 'n', 0x12, static_cast<int>(feature.size())}) + feature;
  const std::string flist = hex_bytes({0x0d, 0, 0, 0, 0x40});  // field 1, wire type 5: 2.0f
  const std::string ffeature = hex_bytes({0x12, static_cast<int>(flist.size())}) + flist +
                               hex_bytes({0x49, 1, 2, 3, 4, 5, 6, 7, 8});  // field 9, fixed64
  const std::string entry_f = hex_bytes({0x0a, 0x01, 'f', 0x12, static_cast<int>(ffeature.size())}) + ffeature;
  const std::string features = hex_bytes({0x0a, static_cast<int>(entry_n.size())}) + entry_n +
                               hex_bytes({0x0a, static_cast<int>(entry_f.size())}) + entry_f;
  const std::string example = hex_bytes({0x38, 0x2a}) + hex_bytes({0x0a, static_cast<int>(features.size())}) + features;
  bk::Example d = bk::decode_example(example);
  CHECK(d.int64s("n") == bk::Int64List{5, 6, 7});
  CHECK(d.floats("f") == bk::FloatList{2.0f});
  // A second Features message merges into the first; a repeated key keeps its last value.
  const std::string again = hex_bytes({0x0a, static_cast<int>(entry_n.size() + 2), 0x0a, static_cast<int>(entry_n.size())}) + entry_n;
  bk::Example twice = bk::decode_example(example + again);
  CHECK(twice.size() == 2);
  CHECK(twice.int64s("n") == bk::Int64List{5, 6, 7});
  CHECK(bk::decode_example("").size() == 0);
}

TEST_CASE("example: malformed input is a bk::Error with the byte offset") {
  CHECK(decode_error("\x0a") == "rec: malformed tf.train.Example at byte 1: truncated varint");
  CHECK(decode_error("\x0a\x05\x0a\x01") ==
        "rec: malformed tf.train.Example at byte 1: length 5 runs past the end of its message (2 bytes left)");
  CHECK(decode_error("\x0f") == "rec: malformed tf.train.Example at byte 1: invalid wire type 7");
  CHECK(decode_error(std::string("\x00", 1)) == "rec: malformed tf.train.Example at byte 0: invalid field number 0");
  CHECK(decode_error(std::string(11, '\xff')) == "rec: malformed tf.train.Example at byte 0: varint longer than 10 bytes");
  // Features{ entry{ "x", Feature{ FloatList{ packed, 3 bytes } } } }
  const std::string bad_floats = hex_bytes({0x0a, 0x0c, 0x0a, 0x0a, 0x0a, 0x01, 'x', 0x12, 0x05, 0x12, 0x03, 0x0a, 0x01, 0x00});
  CHECK(decode_error(bad_floats) ==
        "rec: malformed tf.train.Example at byte 11: packed float list of 1 bytes (not a multiple of 4)");
  CHECK(decode_error(hex_bytes({0x1b, 0x08, 0x01})) == "rec: malformed tf.train.Example at byte 1: unterminated group 3");
  CHECK(bk::decode_example(hex_bytes({0x1b, 0x08, 0x01, 0x1c})).size() == 0);  // a complete unknown group is skipped
}

TEST_CASE("example: the google-research sample_text fixtures decode and re-encode byte for byte") {
  const fs::path dir = kFixtures / "tfrecord/sample_text-pretraining";
  if (!fs::exists(dir)) {
    MESSAGE("fixtures missing, skipped: " << dir.string());
    return;
  }
  std::vector<std::vector<bk::Example>> files;
  for (const char* name : {"BiaoLiu2017-bert.tf_examples.tfrecord", "Heytgala-BERT-Model.tf_examples.tfrecord",
                           "vincentcheny-distributed-bert.tf_examples.tfrecord"}) {
    CAPTURE(name);
    auto records = bk::read_tfrecord_file((dir / name).string());
    REQUIRE(records.size() == 60);
    files.emplace_back();
    for (size_t i = 0; i < records.size(); ++i) {
      bk::Example e = bk::decode_example(records[i]);
      CHECK(bk::encode_example(e) == records[i]);
      REQUIRE(e.size() == 7);
      CHECK(e.int64s("input_ids").size() == 128);
      CHECK(e.int64s("input_ids")[0] == 101);  // [CLS] in the uncased vocab
      CHECK(e.int64s("input_mask").size() == 128);
      CHECK(e.int64s("segment_ids").size() == 128);
      CHECK(e.int64s("masked_lm_positions").size() == 20);
      CHECK(e.int64s("masked_lm_ids").size() == 20);
      CHECK(e.floats("masked_lm_weights").size() == 20);
      CHECK(e.int64s("next_sentence_labels").size() == 1);
      files.back().push_back(std::move(e));
    }
  }
  // The three files hold the same records; only the feature-map order differs.
  for (size_t i = 0; i < 60; ++i) {
    CHECK(files[0][i].same_features(files[1][i]));
    CHECK(files[0][i].same_features(files[2][i]));
  }
  CHECK(bk::encode_example(files[0][0], bk::FeatureOrder::kSortedByName) ==
        bk::encode_example(files[1][0], bk::FeatureOrder::kSortedByName));
}

TEST_CASE("example: run_classifier MRPC records match the labels of glue/MRPC/train.tsv") {
  const fs::path file = kFixtures / "tfrecord/mrpc-run_classifier/train.tf_record";
  const fs::path tsv = kFixtures / "glue/MRPC/train.tsv";
  if (!fs::exists(file) || !fs::exists(tsv)) {
    MESSAGE("fixtures missing, skipped");
    return;
  }
  bk::Input labels_input(tsv.string());
  bk::LineReader lines(labels_input);
  std::string_view line;
  REQUIRE(lines.next(line));  // header (after a BOM)
  bk::Input input(file.string());
  bk::TFRecordReader reader(input);
  std::string_view record;
  bk::Example e;
  size_t n = 0, ones = 0;
  while (reader.next(record)) {
    bk::decode_example(record, e);
    REQUIRE(lines.next(line));
    CHECK(e.int64s("label_ids") == bk::Int64List{line[0] - '0'});
    CHECK(e.int64s("is_real_example") == bk::Int64List{1});
    CHECK(e.int64s("input_ids").size() == 128);
    CHECK(bk::encode_example(e) == record);
    ones += e.int64s("label_ids")[0];
    ++n;
  }
  CHECK_FALSE(lines.next(line));
  CHECK(n == 3668);
  MESSAGE("MRPC train: " << n << " records, " << ones << " paraphrase labels");
}

TEST_CASE("example: many features, repeated keys keep the last value in the first position") {
  bk::Example e;
  for (int i = 0; i < 5000; ++i) e.set_int64(fmt::format("f{}", i), {i});
  e.set_int64("f10", {-10});
  e.set_int64("f4999", {-4999});
  REQUIRE(e.size() == 5000);
  CHECK(e.features()[10].name == "f10");
  std::string encoded = bk::encode_example(e);
  // Append a second Features message that repeats key "f3" and adds "new": protobuf merges the maps.
  bk::Example extra;
  extra.set_int64("f3", {33});
  extra.set_float("new", {1.0f});
  encoded += bk::encode_example(extra);
  bk::Example d = bk::decode_example(encoded);
  CHECK(d.size() == 5001);
  CHECK(d.int64s("f3") == bk::Int64List{33});
  CHECK(d.features()[3].name == "f3");
  CHECK(d.int64s("f10") == bk::Int64List{-10});
  CHECK(d.int64s("f4999") == bk::Int64List{-4999});
  CHECK(d.features().back().name == "new");
  CHECK(d.find("f5000") == nullptr);
  d.clear();
  CHECK(d.find("f3") == nullptr);
  d.set_int64("f3", {1});
  CHECK(d.size() == 1);
}
