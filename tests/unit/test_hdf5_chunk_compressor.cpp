// ChunkCompressor: HDF5 files written with chunks deflated on worker threads are byte for byte the files HDF5's own
// deflate filter writes, for any number of threads, with several writers sharing one compressor as bin4's do.
#include <doctest/doctest.h>

#include "../scratch_dir.h"
#include "hdf5/hdf5_chunk_compressor.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"

#include <zlib.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// Samples of 5 to 200 tokens with varied ids, from a fixed LCG (so the chunks compress unevenly).
std::vector<bk::PretrainSample> make_samples(size_t count, uint64_t seed) {
  uint64_t state = seed;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % bound;
  };
  std::vector<bk::PretrainSample> samples(count);
  for (auto& s : samples) {
    const auto length = static_cast<int32_t>(5 + next(196));
    for (int32_t j = 0; j < length; ++j) {
      s.input_ids.push_back(j == 0 ? 101 : static_cast<int32_t>(1000 + next(29000)));
      s.segment_ids.push_back(j > length / 2 ? 1 : 0);
    }
    for (int32_t k = 0; k < 1 + static_cast<int32_t>(next(19)); ++k) {
      s.masked_lm_positions.push_back(1 + k * (length - 2) / 20);
      s.masked_lm_ids.push_back(static_cast<int32_t>(1000 + next(29000)));
    }
    s.next_sentence_label = static_cast<int32_t>(next(2));
  }
  return samples;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Deals the samples round-robin to `files` writers (as bin4 deals a bin to its shards) and commits them in order.
void write_dealt(const std::vector<std::string>& paths, const std::vector<bk::PretrainSample>& samples,
                 bk::Hdf5Layout layout, int gzip, bk::ChunkCompressor* compressor) {
  bk::PretrainWriterOptions o;
  o.layout = layout;
  o.seq_len = 256;
  o.max_predictions = 20;
  o.gzip_level = gzip;
  o.chunk_rows = 64;
  o.compressor = compressor;
  std::vector<std::unique_ptr<bk::PretrainWriter>> writers;
  for (const auto& p : paths) writers.push_back(std::make_unique<bk::PretrainWriter>(p, o));
  for (size_t i = 0; i < samples.size(); ++i) writers[i % writers.size()]->append(samples[i]);
  for (auto& w : writers) w->commit();
}

}  // namespace

TEST_CASE("deflate_chunk is zlib's compress2 and round-trips") {
  std::vector<uint8_t> bytes(100000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 7919) % 251 < 40 ? i % 13 : 0);
  const std::vector<uint8_t> packed = bk::deflate_chunk(bytes, 4);
  CHECK(packed.size() < bytes.size());
  std::vector<uint8_t> back(bytes.size());
  uLongf size = back.size();
  REQUIRE(uncompress(back.data(), &size, packed.data(), packed.size()) == Z_OK);
  CHECK(size == bytes.size());
  CHECK(back == bytes);
}

TEST_CASE("ChunkCompressor: the files equal HDF5's own deflate, byte for byte, for 1, 2 and 5 threads") {
  bk_test::ScratchDir dir;
  // 1000 samples over 3 writers: 5 full chunks of 64 rows and a partial one per file, chunks from the three files
  // interleaved in the compressor's queue, more chunks in flight than its window.
  const auto samples = make_samples(1000, 17);
  for (const bk::Hdf5Layout layout : {bk::Hdf5Layout::nvidia, bk::Hdf5Layout::packed}) {
    const std::string name = bk::layout_name(layout);
    CAPTURE(name);
    const std::vector<std::string> reference = {dir / (name + "-ref0.hdf5"), dir / (name + "-ref1.hdf5"),
                                                dir / (name + "-ref2.hdf5")};
    write_dealt(reference, samples, layout, 4, nullptr);
    for (const int threads : {1, 2, 5}) {
      CAPTURE(threads);
      const std::string tag = name + "-" + std::to_string(threads);
      const std::vector<std::string> ours = {dir / ("t" + tag + "-0.hdf5"), dir / ("t" + tag + "-1.hdf5"),
                                             dir / ("t" + tag + "-2.hdf5")};
      {
        bk::ChunkCompressor compressor(threads);
        write_dealt(ours, samples, layout, 4, &compressor);
      }
      for (size_t f = 0; f < ours.size(); ++f) {
        CAPTURE(f);
        CHECK(file_bytes(ours[f]) == file_bytes(reference[f]));
      }
    }
    // And the reader gets the samples back.
    bk::PretrainReader reader(reference[1]);
    std::vector<bk::PretrainSample> rows;
    REQUIRE(reader.read_block(rows, 10));
    CHECK(rows[0].input_ids == samples[1].input_ids);
    CHECK(rows[3].masked_lm_ids == samples[10].masked_lm_ids);
  }
}

TEST_CASE("ChunkCompressor: without deflate (level 0) the writer does not use it") {
  bk_test::ScratchDir dir;
  const auto samples = make_samples(200, 5);
  write_dealt({dir / "plain.hdf5"}, samples, bk::Hdf5Layout::nvidia, 0, nullptr);
  bk::ChunkCompressor compressor(3);
  write_dealt({dir / "with.hdf5"}, samples, bk::Hdf5Layout::nvidia, 0, &compressor);
  CHECK(file_bytes(dir / "with.hdf5") == file_bytes(dir / "plain.hdf5"));
}
