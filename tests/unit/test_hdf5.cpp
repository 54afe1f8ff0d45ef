#include <doctest/doctest.h>

#include "../error_of.h"
#include "util/error.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path hdf5_temp_dir() {
  // Removed when the test binary exits.
  static struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("bertkit-unit-hdf5-" + std::to_string(::getpid()));
    ~Scratch() { std::error_code ec; fs::remove_all(dir, ec); }
  } scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

// A sample of n tokens whose values follow from `seed`, so every row differs and mistakes show.
bk::PretrainSample make_sample(int n, int predictions, int seed) {
  bk::PretrainSample s;
  for (int i = 0; i < n; ++i) {
    s.input_ids.push_back(i == 0 ? 101 : (seed * 131 + i * 7) % 30000 + 1000);
    s.segment_ids.push_back(i > n / 2 ? 1 : 0);
  }
  for (int j = 0; j < predictions; ++j) {
    s.masked_lm_positions.push_back(1 + (j * 3 + seed) % (n - 1));
    s.masked_lm_ids.push_back((seed * 17 + j) % 30000);
  }
  s.next_sentence_label = seed % 2;
  return s;
}

std::vector<bk::PretrainSample> read_all(const std::string& path, size_t block = 4) {
  bk::PretrainReader reader(path);
  std::vector<bk::PretrainSample> all, part;
  while (reader.read_block(part, block)) all.insert(all.end(), part.begin(), part.end());
  return all;
}

void write_all(const std::string& path, const bk::PretrainWriterOptions& o, const std::vector<bk::PretrainSample>& v) {
  bk::PretrainWriter writer(path, o);
  for (const auto& s : v) writer.append(s);
  writer.commit();
}

// Writes a raw dataset with the C API, for files our writer would refuse to make.
void raw_dataset(hid_t file, const char* name, hid_t file_type, hid_t memory_type, std::vector<hsize_t> dims,
                 const void* data) {
  hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t d = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(d >= 0);
  H5Dwrite(d, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(d);
  H5Sclose(space);
}

// An NVIDIA-layout file of 2 rows, L=4, P=2, with the given input_ids type and input_mask contents.
std::string raw_nvidia(const fs::path& path, bool float_ids, std::vector<int8_t> mask) {
  bk::hdf5_quiet();
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<int32_t> ids = {101, 7, 8, 102, 101, 9, 102, 0};
  std::vector<float> float_values(ids.begin(), ids.end());
  std::vector<int8_t> seg(8, 0), nsl = {0, 1};
  std::vector<int32_t> pos = {1, 0, 2, 0}, mid = {55, 0, 66, 0};
  if (float_ids) raw_dataset(f, "input_ids", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {2, 4}, float_values.data());
  else raw_dataset(f, "input_ids", H5T_STD_I32LE, H5T_NATIVE_INT32, {2, 4}, ids.data());
  raw_dataset(f, "input_mask", H5T_STD_I8LE, H5T_NATIVE_INT8, {2, 4}, mask.data());
  raw_dataset(f, "segment_ids", H5T_STD_I8LE, H5T_NATIVE_INT8, {2, 4}, seg.data());
  raw_dataset(f, "masked_lm_positions", H5T_STD_I32LE, H5T_NATIVE_INT32, {2, 2}, pos.data());
  raw_dataset(f, "masked_lm_ids", H5T_STD_I64LE, H5T_NATIVE_INT32, {2, 2}, mid.data());  // i8 on disk reads too
  raw_dataset(f, "next_sentence_labels", H5T_STD_I8LE, H5T_NATIVE_INT8, {2}, nsl.data());
  H5Fclose(f);
  return path.string();
}

using bk_test::error_of;

}  // namespace

TEST_CASE("hdf5: both layouts round-trip, with and without gzip, across chunk boundaries") {
  auto dir = hdf5_temp_dir();
  std::vector<bk::PretrainSample> samples;
  for (int i = 0; i < 11; ++i) samples.push_back(make_sample(3 + (i * 5) % 14, i % 4, i));
  for (auto layout : {bk::Hdf5Layout::nvidia, bk::Hdf5Layout::varlength}) {
    for (int gzip : {0, 6}) {
      CAPTURE(bk::layout_name(layout));
      CAPTURE(gzip);
      bk::PretrainWriterOptions o;
      o.layout = layout;
      o.seq_len = 16;
      o.max_predictions = 3;
      o.gzip_level = gzip;
      o.chunk_rows = 4;  // 11 rows: two full chunks and a partial one
      auto path = (dir / fmt::format("rt-{}-{}.hdf5", bk::layout_name(layout), gzip)).string();
      write_all(path, o, samples);
      bk::PretrainReader reader(path);
      CHECK(reader.layout() == layout);
      CHECK(reader.rows() == 11);
      CHECK(reader.seq_len() == (layout == bk::Hdf5Layout::nvidia ? 16 : 0));
      CHECK(reader.max_predictions() == (layout == bk::Hdf5Layout::nvidia ? 3 : 0));
      CHECK(read_all(path, 3) == samples);
      CHECK(read_all(path, 100) == samples);
    }
  }
}

TEST_CASE("hdf5: an empty file (N=0) is written and read in both layouts") {
  auto dir = hdf5_temp_dir();
  for (auto layout : {bk::Hdf5Layout::nvidia, bk::Hdf5Layout::varlength}) {
    bk::PretrainWriterOptions o;
    o.layout = layout;
    auto path = (dir / fmt::format("empty-{}.hdf5", bk::layout_name(layout))).string();
    write_all(path, o, {});
    bk::PretrainReader reader(path);
    CHECK(reader.layout() == layout);
    CHECK(reader.rows() == 0);
    std::vector<bk::PretrainSample> block{make_sample(4, 1, 1)};
    CHECK_FALSE(reader.read_block(block));
    CHECK(block.empty());
  }
}

TEST_CASE("hdf5: reading a raw NVIDIA file applies the loader's rules") {
  auto dir = hdf5_temp_dir();
  auto path = raw_nvidia(dir / "raw.hdf5", false, {1, 1, 1, 1, 1, 1, 1, 0});
  auto rows = read_all(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].input_ids == std::vector<int32_t>{101, 7, 8, 102});
  CHECK(rows[1].input_ids == std::vector<int32_t>{101, 9, 102});  // the mask ends the tokens
  CHECK(rows[0].masked_lm_positions == std::vector<int32_t>{1});  // the first 0 ends the predictions
  CHECK(rows[0].masked_lm_ids == std::vector<int32_t>{55});
  CHECK(rows[1].masked_lm_positions == std::vector<int32_t>{2});
  CHECK(rows[1].masked_lm_ids == std::vector<int32_t>{66});
  CHECK(rows[1].next_sentence_label == 1);
}

TEST_CASE("hdf5: bad files give one clear error naming the file, dataset and row") {
  auto dir = hdf5_temp_dir();
  auto floats = raw_nvidia(dir / "float.hdf5", true, {1, 1, 1, 1, 1, 1, 1, 0});
  CHECK(error_of([&] { bk::PretrainReader r(floats); }) ==
        floats + ": dataset input_ids has type float; it must hold integers");

  auto holes = raw_nvidia(dir / "holes.hdf5", false, {1, 1, 1, 1, 1, 0, 1, 0});
  CHECK(error_of([&] { read_all(holes); }) ==
        holes + ": row 1: input_mask: value 1 at column 2 (expected 1s followed by 0s)");

  auto garbage = (dir / "garbage.hdf5").string();
  std::ofstream(garbage) << "this is not HDF5 at all\n";
  CHECK(error_of([&] { bk::PretrainReader r(garbage); }) == garbage + ": not an HDF5 file");

  auto missing = (dir / "nope.hdf5").string();
  CHECK(error_of([&] { bk::PretrainReader r(missing); }) == missing + ": cannot open: No such file or directory");

  // A real file cut in half: HDF5 still recognises the superblock, so the failure comes at open or read time.
  bk::PretrainWriterOptions o;
  o.chunk_rows = 8;
  auto whole = (dir / "whole.hdf5").string();
  std::vector<bk::PretrainSample> many(64, make_sample(100, 5, 3));
  write_all(whole, o, many);
  auto cut = (dir / "cut.hdf5").string();
  fs::copy_file(whole, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(whole) / 2);
  std::string message = error_of([&] { read_all(cut, 1024); });
  CHECK(message.rfind(cut + ": ", 0) == 0);
  CHECK(message != "(no error)");

  hid_t f = H5Fcreate((dir / "partial.hdf5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<int32_t> ids(4, 1);
  raw_dataset(f, "input_ids", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 4}, ids.data());
  H5Fclose(f);
  CHECK(error_of([&] { bk::PretrainReader r((dir / "partial.hdf5").string()); }) ==
        (dir / "partial.hdf5").string() +
            ": not a BERT pretraining HDF5 file: missing datasets input_mask, segment_ids, masked_lm_positions, "
            "masked_lm_ids, next_sentence_labels (found at the root: input_ids)");

  // Names the file holds go into that message escaped, cut and at most 20 of them (fuzz_hdf5_reader: a damaged
  // symbol table listed raw binary bytes as names).
  const std::string hostile = (dir / "hostile-names.hdf5").string();
  f = H5Fcreate(hostile.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  for (const std::string& name : {std::string("a\nb\x1b[31m"), std::string(100, 'x')})
    H5Gclose(H5Gcreate2(f, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int i = 0; i < 25; ++i)
    H5Gclose(H5Gcreate2(f, ("g" + std::to_string(100 + i)).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Fclose(f);
  const std::string listed = error_of([&] { bk::PretrainReader r(hostile); });
  CHECK(listed.find('\n') == std::string::npos);
  CHECK(listed.find('\x1b') == std::string::npos);
  CHECK(listed.find("(found at the root: a\\nb\\x1b[31m, g100, g101,") != std::string::npos);
  CHECK(listed.find(", g118 and 7 more)") != std::string::npos);
}

TEST_CASE("hdf5: a varlength row whose stored length is damaged is an error before HDF5 allocates it") {
  // Found by fuzz_hdf5_reader: HDF5 allocates a row's whole length, as the file states it, before reading it, so
  // one damaged length (up to 2^32 values) made a 34 KB file cost gigabytes.
  auto dir = hdf5_temp_dir();
  const std::string path = (dir / "damaged-length.hdf5").string();
  bk::PretrainWriterOptions o;
  o.layout = bk::Hdf5Layout::varlength;
  write_all(path, o, {make_sample(12, 2, 1), make_sample(9, 1, 2), make_sample(7, 1, 3)});
  haddr_t address = HADDR_UNDEF;
  {
    hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(file, "masked_lm_ids", H5P_DEFAULT);
    hsize_t coord[1] = {0};
    unsigned mask = 0;
    hsize_t size = 0;
    REQUIRE(H5Dget_chunk_info_by_coord(d, coord, &mask, &address, &size) >= 0);
    H5Dclose(d);
    H5Fclose(file);
  }
  // Row 1's descriptor: after row 0's u32 length, 8-byte heap address and u32 index.
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(address + 16));
  const unsigned char huge[4] = {0x00, 0x28, 0x6b, 0xee};  // 4,000,000,000 little-endian
  f.write(reinterpret_cast<const char*>(huge), 4);
  f.close();
  CHECK(error_of([&] { read_all(path); }) ==
        path + ": dataset masked_lm_ids: row 1 claims 4000000000 values, more than the 65536 a row may hold (a "
               "damaged file?)");
}

TEST_CASE("hdf5: a chunk shape HDF5 would allocate gigabytes for is an error before the first read") {
  // Found by fuzz_hdf5_reader: HDF5 allocates a whole chunk to read one row of it.
  auto dir = hdf5_temp_dir();
  const std::string path = (dir / "huge-chunks.hdf5").string();
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {2, 8}, chunk[2] = {1 << 24, 8};  // 16M rows x 8 int32 = 512 MiB per chunk
  hsize_t max_dims[2] = {H5S_UNLIMITED, 8};
  hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(plist, 2, chunk);
  for (const char* name : {"input_ids", "input_mask", "segment_ids"}) {
    hid_t space = H5Screate_simple(2, dims, max_dims);
    H5Dclose(H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT));
    H5Sclose(space);
  }
  std::vector<int32_t> zeros(4, 0);
  raw_dataset(file, "masked_lm_positions", H5T_STD_I32LE, H5T_NATIVE_INT32, {2, 2}, zeros.data());
  raw_dataset(file, "masked_lm_ids", H5T_STD_I32LE, H5T_NATIVE_INT32, {2, 2}, zeros.data());
  raw_dataset(file, "next_sentence_labels", H5T_STD_I8LE, H5T_NATIVE_INT32, {2}, zeros.data());
  H5Pclose(plist);
  H5Fclose(file);
  CHECK(error_of([&] { bk::PretrainReader r(path); }) ==
        path + ": dataset input_ids has chunks of 536870912 bytes, more than the 268435456 a reader takes (a damaged "
               "file?)");
}

TEST_CASE("hdf5: the writer refuses samples that do not fit and leaves no file behind") {
  auto dir = hdf5_temp_dir();
  bk::PretrainWriterOptions o;
  o.seq_len = 8;
  o.max_predictions = 2;
  auto path = (dir / "refused.hdf5").string();
  CHECK(error_of([&] { write_all(path, o, {make_sample(8, 2, 1), make_sample(9, 1, 2)}); }) ==
        path + ": row 1: 9 tokens do not fit the sequence length 8");
  CHECK(error_of([&] { write_all(path, o, {make_sample(8, 3, 1)}); }) ==
        path + ": row 0: 3 predictions do not fit max_predictions 2");
  auto bad = make_sample(5, 1, 1);
  bad.masked_lm_positions[0] = 5;
  CHECK(error_of([&] { write_all(path, o, {bad}); }) ==
        path + ": row 0: masked_lm_positions: position 5 is beyond the sample's 5 tokens");
  o.layout = bk::Hdf5Layout::varlength;
  auto big = make_sample(5, 1, 1);
  big.input_ids[2] = 40000;
  CHECK(error_of([&] { write_all(path, o, {big}); }) ==
        path + ": row 0: input_ids: value 40000 does not fit the varlength layout's int16");
  CHECK_FALSE(fs::exists(path));
  for (const auto& entry : fs::directory_iterator(dir))
    CHECK(entry.path().filename().string().find("refused.hdf5.tmp") == std::string::npos);

  write_all(path, o, {make_sample(5, 1, 1)});
  CHECK(error_of([&] { write_all(path, o, {}); }) == path + ": already exists; use --force to overwrite it");
  o.overwrite = true;
  write_all(path, o, {});
  CHECK(bk::PretrainReader(path).rows() == 0);
}

namespace {

// Samples back to back in one row, as pack(1) writes them.
bk::PretrainSample join_samples(const std::vector<bk::PretrainSample>& parts) {
  bk::PretrainSample row;
  for (const auto& s : parts) {
    const auto offset = static_cast<int32_t>(row.input_ids.size());
    row.input_ids.insert(row.input_ids.end(), s.input_ids.begin(), s.input_ids.end());
    row.segment_ids.insert(row.segment_ids.end(), s.segment_ids.begin(), s.segment_ids.end());
    for (int32_t p : s.masked_lm_positions) row.masked_lm_positions.push_back(p + offset);
    row.masked_lm_ids.insert(row.masked_lm_ids.end(), s.masked_lm_ids.begin(), s.masked_lm_ids.end());
    row.pack_lengths.push_back(static_cast<int32_t>(s.length()));
    row.pack_labels.push_back(s.next_sentence_label);
  }
  row.next_sentence_label = row.pack_labels.front();
  return row;
}

}  // namespace

TEST_CASE("hdf5: the packed layout round-trips rows of one to three samples") {
  auto dir = hdf5_temp_dir();
  std::vector<bk::PretrainSample> rows;
  for (int i = 0; i < 9; ++i) {
    std::vector<bk::PretrainSample> parts;
    for (int k = 0; k <= i % 3; ++k) parts.push_back(make_sample(3 + (i * 5 + k) % 6, (i + k) % 3, i * 3 + k));
    rows.push_back(join_samples(parts));
  }
  bk::PretrainWriterOptions o;
  o.layout = bk::Hdf5Layout::packed;
  o.seq_len = 24;
  o.max_predictions = 8;
  o.max_sequences = 3;
  o.chunk_rows = 4;
  auto path = (dir / "packed.hdf5").string();
  write_all(path, o, rows);
  bk::PretrainReader reader(path);
  CHECK(reader.layout() == bk::Hdf5Layout::packed);
  CHECK(reader.seq_len() == 24);
  CHECK(reader.max_predictions() == 8);
  CHECK(reader.max_sequences() == 3);
  CHECK(read_all(path, 2) == rows);

  // A row of four samples does not fit three slots; the NVIDIA layout takes no packed rows at all.
  std::vector<bk::PretrainSample> four(4, make_sample(4, 1, 5));
  CHECK(error_of([&] { write_all((dir / "four.hdf5").string(), o, {join_samples(four)}); })
            .find("4 packed samples do not fit the 3 slots of a row") != std::string::npos);
  bk::PretrainWriterOptions nvidia;
  nvidia.seq_len = 24;
  nvidia.max_predictions = 8;
  CHECK(error_of([&] { write_all((dir / "nv.hdf5").string(), nvidia, {rows[1]}); })
            .find("cannot be written in the nvidia layout") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "nv.hdf5"));
}

TEST_CASE("hdf5: a packed row whose positions do not restart with each sample is an error naming the row") {
  auto dir = hdf5_temp_dir();
  auto path = (dir / "bad-packed.hdf5").string();
  bk::hdf5_quiet();
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  // One row of L=6: samples [101 7 102] and [101 8 102]; positions run on instead of restarting.
  std::vector<int32_t> ids = {101, 7, 102, 101, 8, 102}, positions = {0, 1, 2, 3, 4, 5};
  std::vector<int8_t> mask = {1, 1, 1, 2, 2, 2}, seg(6, 0), labels = {0, 1};
  std::vector<int32_t> mpos = {1, 4}, mids = {55, 66}, nsp_pos = {0, 3}, weights = {1, 1};
  raw_dataset(f, "input_ids", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 6}, ids.data());
  raw_dataset(f, "input_mask", H5T_STD_I8LE, H5T_NATIVE_INT8, {1, 6}, mask.data());
  raw_dataset(f, "segment_ids", H5T_STD_I8LE, H5T_NATIVE_INT8, {1, 6}, seg.data());
  raw_dataset(f, "positions", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 6}, positions.data());
  raw_dataset(f, "masked_lm_positions", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 2}, mpos.data());
  raw_dataset(f, "masked_lm_ids", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 2}, mids.data());
  raw_dataset(f, "next_sentence_positions", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 2}, nsp_pos.data());
  raw_dataset(f, "next_sentence_labels", H5T_STD_I8LE, H5T_NATIVE_INT8, {1, 2}, labels.data());
  raw_dataset(f, "next_sentence_weights", H5T_STD_I32LE, H5T_NATIVE_INT32, {1, 2}, weights.data());
  H5Fclose(f);
  CHECK(error_of([&] { read_all(path); }) ==
        path + ": row 0: positions: value 3 at column 3 (expected 0: positions restart at 0 with each packed sample)");
}

TEST_CASE("hdf5: the vocabulary stamp attribute, as the writer stores it and as another writer may") {
  auto dir = hdf5_temp_dir();
  bk::PretrainWriterOptions o;
  o.seq_len = 16;
  o.max_predictions = 3;
  o.vocab_stamp = "fnv1a64:0123456789abcdef:30522:uncased";
  const auto stamped = (dir / "stamped.hdf5").string();
  write_all(stamped, o, {make_sample(5, 1, 0)});
  CHECK(bk::PretrainReader(stamped).vocab_stamp() == o.vocab_stamp);
  o.vocab_stamp.clear();
  const auto plain = (dir / "plain.hdf5").string();
  write_all(plain, o, {make_sample(5, 1, 0)});
  CHECK(bk::PretrainReader(plain).vocab_stamp().empty());
  // A fixed-length string (numpy's bytes_ through h5py) reads the same; a number is no stamp.
  const auto fixed = raw_nvidia(dir / "fixed.hdf5", false, {1, 1, 1, 1, 1, 1, 1, 0});
  hid_t f = H5Fopen(fixed.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, 40);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "bertkit_vocab", type, space, H5P_DEFAULT, H5P_DEFAULT);
  char text[40] = "fnv1a64:0123456789abcdef:30522:cased";
  H5Awrite(a, type, text);
  H5Aclose(a);
  a = H5Acreate2(f, "other", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
  const int32_t one = 1;
  H5Awrite(a, H5T_NATIVE_INT32, &one);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
  H5Fclose(f);
  CHECK(bk::PretrainReader(fixed).vocab_stamp() == "fnv1a64:0123456789abcdef:30522:cased");
  f = H5Fopen(fixed.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  CHECK_FALSE(bk::read_string_attribute(f, "other"));
  CHECK_FALSE(bk::read_string_attribute(f, "missing"));
  H5Fclose(f);
}
