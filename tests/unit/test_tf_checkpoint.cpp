// TF1 checkpoint index and data reading: the real keras-bert-tiny checkpoint (written by TensorFlow) and the
// BERT-Tiny release index, plus hand-built tables for what TF never writes (several blocks, snappy) and damage.
#include <doctest/doctest.h>

#include "ckpt/leveldb_table.h"
#include "ckpt/name_mapping.h"
#include "ckpt/tf_checkpoint.h"
#include "../error_of.h"
#include "util/error.h"
#include "util/crc32c.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = fs::path(BERTKIT_FIXTURES) / "tf_checkpoint";

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using bk_test::error_of;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// A block as the format document describes it: prefix-compressed entries, a restart point every `interval`.
std::string make_block(const std::vector<std::pair<std::string, std::string>>& kv, size_t interval) {
  std::string out, prev;
  std::vector<uint32_t> restarts;
  for (size_t i = 0; i < kv.size(); ++i) {
    size_t shared = 0;
    if (i % interval == 0) {
      restarts.push_back(static_cast<uint32_t>(out.size()));
    } else {
      while (shared < prev.size() && shared < kv[i].first.size() && prev[shared] == kv[i].first[shared]) ++shared;
    }
    put_varint(out, shared);
    put_varint(out, kv[i].first.size() - shared);
    put_varint(out, kv[i].second.size());
    out += kv[i].first.substr(shared);
    out += kv[i].second;
    prev = kv[i].first;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) put_u32(out, r);
  put_u32(out, static_cast<uint32_t>(restarts.size()));
  return out;
}

// Appends block + trailer to file, returns the encoded handle.
std::string add_block(std::string& file, const std::string& contents, char type = 0) {
  std::string handle;
  put_varint(handle, file.size());
  put_varint(handle, contents.size());
  file += contents;
  file.push_back(type);
  put_u32(file, bk::crc32c_mask(bk::crc32c_extend(bk::crc32c(contents), &type, 1)));
  return handle;
}

std::string finish_table(std::string file, const std::string& index_handle) {
  std::string meta_handle = add_block(file, make_block({}, 16));
  std::string footer = meta_handle + index_handle;
  footer.resize(40, '\0');
  uint64_t magic = 0xdb4775248b80fb57ull;
  footer.append(reinterpret_cast<const char*>(&magic), 8);
  return file + footer;
}

}  // namespace

TEST_CASE("tf checkpoint: keras-bert-tiny index, written by TensorFlow") {
  auto index = bk::parse_tf_checkpoint_index(slurp_file(kFixtures / "keras-bert-tiny/bert_model.ckpt.index"), "x");
  CHECK(index.num_shards == 1);
  REQUIRE(index.tensors.size() == 139);  // SOURCES.md: 46 variables x (value, adam_m, adam_v) + global_step
  const bk::TfTensorInfo* step = nullptr;
  for (const auto& t : index.tensors) {
    if (t.name == "global_step") step = &t;
    CHECK(t.has_crc32c);
  }
  REQUIRE(step);
  CHECK(step->dtype == bk::kTfInt64);
  CHECK(step->shape.empty());
}

TEST_CASE("tf checkpoint: every tensor reads with its CRC32C; global_step is 20") {
  bk::TfCheckpointReader reader((kFixtures / "keras-bert-tiny/bert_model.ckpt").string());
  for (const auto& t : reader.index().tensors) CHECK(reader.read(t).size() == static_cast<size_t>(t.size));
  std::string step = reader.read(*reader.find("global_step"));
  int64_t value;
  std::memcpy(&value, step.data(), 8);
  CHECK(value == 20);
  const auto* word = reader.find("bert/embeddings/word_embeddings");
  REQUIRE(word);
  CHECK(bk::format_tf_shape(word->shape) == "[15,4]");
  CHECK(bk::tf_dtype_name(word->dtype) == std::string("DT_FLOAT"));
}

TEST_CASE("tf checkpoint: the BERT-Tiny release index lists without its data") {
  bk::TfCheckpointReader reader((kFixtures / "uncased_L-2_H-128_A-2.index-only/bert_model.ckpt.index").string());
  CHECK(reader.index().tensors.size() == 46);
  const auto* word = reader.find("bert/embeddings/word_embeddings");
  REQUIRE(word);
  CHECK(bk::format_tf_shape(word->shape) == "[30522,128]");
  std::string err = error_of([&] { reader.read(*word); });
  CHECK(err.find("bert_model.ckpt.data-00000-of-00001") != std::string::npos);
  CHECK(err.find("tensor bert/embeddings/word_embeddings") != std::string::npos);
}

TEST_CASE("tf checkpoint: a damaged or cut index is an error naming the file") {
  std::string bytes = slurp_file(kFixtures / "keras-bert-tiny/bert_model.ckpt.index");
  std::string flipped = bytes;
  flipped[100] ^= 0x20;
  CHECK(error_of([&] { bk::parse_tf_checkpoint_index(flipped, "f.index"); }).find("f.index: data block") == 0);
  for (size_t cut : {size_t(0), size_t(10), bytes.size() / 2, bytes.size() - 1})
    CHECK(error_of([&] { bk::parse_tf_checkpoint_index(bytes.substr(0, cut), "c.index"); }).find("c.index") == 0);
}

TEST_CASE("leveldb table: several blocks, restart points, snappy, keys out of order") {
  std::vector<std::pair<std::string, std::string>> a = {{"", "h"}, {"alpha", "1"}, {"alphabet", "2"}},
                                                   b = {{"beta", "3"}, {"betamax", std::string(300, 'x')}};
  std::string file;
  std::string ha = add_block(file, make_block(a, 2));
  // Block b snappy-compressed as one literal: tag 61 << 2 says two little-endian bytes of (length - 1) follow.
  std::string raw_b = make_block(b, 1), snappy;
  REQUIRE(raw_b.size() > 256);
  put_varint(snappy, raw_b.size());
  snappy.push_back(static_cast<char>(61 << 2));
  snappy.push_back(static_cast<char>((raw_b.size() - 1) & 0xff));
  snappy.push_back(static_cast<char>((raw_b.size() - 1) >> 8));
  snappy += raw_b;
  std::string hb = add_block(file, snappy, 1);
  std::string index_handle = add_block(file, make_block({{"alphabet", ha}, {"betamax", hb}}, 16));
  std::string table = finish_table(file, index_handle);
  auto entries = bk::read_leveldb_table(table, "t");
  REQUIRE(entries.size() == 5);
  CHECK(entries[2].key == "alphabet");
  CHECK(entries[2].value == "2");
  CHECK(entries[4].value == std::string(300, 'x'));

  std::string bad;
  std::string h1 = add_block(bad, make_block({{"b", "1"}, {"a", "2"}}, 16));
  std::string bad_table = finish_table(bad, add_block(bad, make_block({{"b", h1}}, 16)));
  CHECK(error_of([&] { bk::read_leveldb_table(bad_table, "o"); }).find("keys out of order") != std::string::npos);
}

TEST_CASE("snappy: literals and overlapping copies; hostile streams fail cleanly") {
  // 12 bytes: literal "abcd", then a copy of 8 from offset 4 (tag 01, len-4 in bits 2-4).
  std::string s = std::string("\x0c\x0c") + "abcd" + "\x11\x04";
  CHECK(bk::snappy_decompress(s, "s") == "abcdabcdabcd");
  CHECK(!error_of([] { bk::snappy_decompress(std::string("\x0c\x11\x04", 3), "s"); }).empty());  // copy before data
  CHECK(!error_of([] { bk::snappy_decompress(std::string("\x05\x0c" "ab", 4), "s"); }).empty());  // cut literal
  CHECK(!error_of([] { bk::snappy_decompress(std::string("\xff\xff\xff\xff\x0f", 5), "s"); }).empty());
}

TEST_CASE("name mapping: DESIGN.md's TF -> HF rules") {
  bk::BertConfig config;
  config.num_hidden_layers = 2;
  auto names = bk::expected_names(bk::bert_pretraining_tensors(config));
  CHECK(names.size() == 46);
  auto m = bk::map_tf_name("bert/embeddings/word_embeddings", names);
  CHECK(m.hf_name == "bert.embeddings.word_embeddings.weight");
  CHECK(!m.transpose);
  m = bk::map_tf_name("bert/encoder/layer_1/attention/self/query/kernel", names);
  CHECK(m.hf_name == "bert.encoder.layer.1.attention.self.query.weight");
  CHECK(m.transpose);
  m = bk::map_tf_name("bert/encoder/layer_0/output/LayerNorm/gamma", names);
  CHECK(m.hf_name == "bert.encoder.layer.0.output.LayerNorm.weight");
  CHECK(bk::map_tf_name("cls/predictions/output_bias", names).hf_name == "cls.predictions.bias");
  m = bk::map_tf_name("cls/seq_relationship/output_weights", names);
  CHECK(m.hf_name == "cls.seq_relationship.weight");
  CHECK(!m.transpose);
  m = bk::map_tf_name("bert/pooler/dense/kernel/adam_v", names);
  CHECK(m.role == bk::TfRole::kAdamV);
  CHECK(m.hf_name == "bert.pooler.dense.weight");
  CHECK(bk::map_tf_name("global_step", names).role == bk::TfRole::kTraining);
  CHECK(bk::map_tf_name("bert/encoder/layer_0/attention/self/query/kernel/LAMB", names).role == bk::TfRole::kTraining);
  CHECK(bk::map_tf_name("bert/encoder/layer_2/output/dense/bias", names).role == bk::TfRole::kUnmapped);
  CHECK(bk::map_tf_name("output_weights", names).role == bk::TfRole::kUnmapped);
}

TEST_CASE("tf checkpoint: an entry whose size passes its data shard fails before anything is allocated for it") {
  // BundleEntryProto {dtype DT_FLOAT, shape [2^40], shard 0, offset 0, size 2^42}: 4 TiB claimed of a 16-byte shard.
  std::string dim, shape, entry, header;
  dim.push_back('\x08');
  put_varint(dim, uint64_t{1} << 40);
  shape.push_back('\x12');
  put_varint(shape, dim.size());
  shape += dim;
  entry = std::string("\x08\x01\x12", 3);
  put_varint(entry, shape.size());
  entry += shape;
  entry += std::string("\x18\x00\x20\x00\x28", 5);
  put_varint(entry, uint64_t{1} << 42);
  header = std::string("\x08\x01\x10\x00", 4);
  std::string file;
  const std::string data = add_block(file, make_block({{"", header}, {"w", entry}}, 16));
  const std::string table = finish_table(file, add_block(file, make_block({{"w", data}}, 16)));
  const fs::path dir = fs::temp_directory_path() / fmt::format("bertkit-unit-tf-{}", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "m.index", std::ios::binary) << table;
  std::ofstream(dir / "m.data-00000-of-00001", std::ios::binary) << std::string(16, '\0');
  bk::TfCheckpointReader reader((dir / "m").string());
  const std::string err = error_of([&] { reader.read(*reader.find("w")); });
  CHECK(err.find("tensor w: bytes 0..4398046511104 run past the end of the file (16 bytes)") != std::string::npos);
  fs::remove_all(dir);
}
