#include <doctest/doctest.h>

#include "util/error.h"
#include "datasets/bin4.h"
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace {

fs::path bin4_temp_dir(const std::string& name) {
  // Removed when the test binary exits.
  static struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("bertkit-unit-bin4-" + std::to_string(::getpid()));
    ~Scratch() { std::error_code ec; fs::remove_all(dir, ec); }
  } scratch;
  auto dir = scratch.dir / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

bk::PretrainSample sample_of_length(int n, int tag) {
  bk::PretrainSample s;
  for (int i = 0; i < n; ++i) {
    s.input_ids.push_back(i == 0 ? 101 : 1000 + tag);
    s.segment_ids.push_back(i >= n / 2 ? 1 : 0);
  }
  s.masked_lm_positions = {1};
  s.masked_lm_ids = {tag % 30000};
  s.next_sentence_label = tag % 2;
  return s;
}

std::vector<bk::PretrainSample> read_all(const fs::path& path) {
  bk::PretrainReader reader(path.string());
  std::vector<bk::PretrainSample> all, part;
  while (reader.read_block(part, 7)) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace

TEST_CASE("bin4: bin boundaries are inclusive upper bounds") {
  std::vector<int> bins = {128, 256, 384, 512};
  CHECK(bk::bin_index(bins, 1) == 0);
  CHECK(bk::bin_index(bins, 128) == 0);
  CHECK(bk::bin_index(bins, 129) == 1);
  CHECK(bk::bin_index(bins, 256) == 1);
  CHECK(bk::bin_index(bins, 257) == 2);
  CHECK(bk::bin_index(bins, 384) == 2);
  CHECK(bk::bin_index(bins, 385) == 3);
  CHECK(bk::bin_index(bins, 512) == 3);
  CHECK(bk::bin_index(bins, 513) == -1);
}

TEST_CASE("bin4: --bins parsing and checking, and shard names") {
  CHECK(bk::parse_bins("128,256,384,512") == std::vector<int>{128, 256, 384, 512});
  CHECK(bk::parse_bins("64") == std::vector<int>{64});
  CHECK(bk::format_bins(bk::Bin4Config().bins) == "128,256,384,512");
  CHECK_THROWS_AS(bk::parse_bins("128,,256"), bk::UsageError);
  CHECK_THROWS_AS(bk::parse_bins("12x"), bk::UsageError);
  // Integers that are no bounds are the config's to refuse.
  bk::Bin4Config c;
  c.inputs = {"in.hdf5"};
  for (const char* bad : {"128,128", "256,128", "0,128"}) {
    CAPTURE(bad);
    c.bins = bk::parse_bins(bad);
    CHECK_THROWS_AS(c.validate(), bk::UsageError);
  }
  CHECK(bk::shard_file_name(0, 4) == "part-00000-of-00004.hdf5");
  CHECK(bk::shard_file_name(12, 128) == "part-00012-of-00128.hdf5");
}

TEST_CASE("bin4: samples are dealt round-robin to shards in input order, and --trim narrows each bin") {
  auto dir = bin4_temp_dir("deal");
  fs::create_directories(dir);
  // Two inputs: lengths chosen on both sides of each boundary.
  std::vector<int> lengths_a = {128, 129, 5, 512, 256, 257, 100}, lengths_b = {384, 385, 1 + 1, 130};
  std::vector<bk::PretrainSample> all;
  bk::PretrainWriterOptions w;
  w.seq_len = 512;
  w.max_predictions = 4;
  w.chunk_rows = 3;
  int tag = 0;
  for (auto [name, lengths] : {std::pair{"a.hdf5", lengths_a}, std::pair{"b.hdf5", lengths_b}}) {
    bk::PretrainWriter writer((dir / name).string(), w);
    for (int n : lengths) {
      all.push_back(sample_of_length(n, tag++));
      writer.append(all.back());
    }
    writer.commit();
  }
  bk::Bin4Config o;
  o.shards_per_bin = 2;
  o.trim = true;
  o.quiet = true;
  o.output_dir = (dir / "out").string();
  o.inputs = {(dir / "a.hdf5").string(), (dir / "b.hdf5").string()};
  auto result = bk::run_bin4(o);
  CHECK(result.samples == 11);
  CHECK(result.per_bin == std::vector<uint64_t>{4, 3, 2, 2});

  // Expected: within each bin, the k-th sample (in input order) goes to shard k % 2.
  std::map<std::pair<int, int>, std::vector<bk::PretrainSample>> expected;
  std::map<int, int> seen;
  for (const auto& s : all) {
    int bound = o.bins[bk::bin_index(o.bins, s.length())];
    expected[{bound, seen[bound]++ % 2}].push_back(s);
  }
  for (int bound : o.bins)
    for (int k = 0; k < 2; ++k) {
      auto path = dir / "out" / std::to_string(bound) / bk::shard_file_name(k, 2);
      CAPTURE(path);
      REQUIRE(fs::exists(path));
      CHECK(bk::PretrainReader(path.string()).seq_len() == bound);
      CHECK(read_all(path) == expected[{bound, k}]);
    }
  std::ifstream marker(dir / "out" / "bin4.json");
  std::stringstream text;
  text << marker.rdbuf();
  CHECK(text.str().find("\"samples\": 11") != std::string::npos);

  SUBCASE("an existing non-empty directory needs force") {
    CHECK_THROWS_WITH_AS(bk::run_bin4(o), (o.output_dir + ": output directory exists and is not empty; use --force to replace it").c_str(),
                         bk::Error);
    o.force = true;
    o.layout = "varlength";
    CHECK(bk::run_bin4(o).per_bin == std::vector<uint64_t>{4, 3, 2, 2});
    CHECK(bk::PretrainReader((dir / "out" / "512" / bk::shard_file_name(1, 2)).string()).layout() ==
          bk::Hdf5Layout::varlength);
  }
  SUBCASE("a sample longer than the last bin is an error, or dropped with drop_long") {
    o.bins = {128, 256};
    o.output_dir = (dir / "short").string();
    CHECK_THROWS_WITH_AS(bk::run_bin4(o),
                         (o.inputs[0] + ": row 3: 512 tokens, longer than the last bin (256); use --drop-long to skip "
                                        "such samples").c_str(),
                         bk::Error);
    // No shard, no temporary, and not the directories it created: the same run can simply be repeated.
    CHECK_FALSE(fs::exists(dir / "short"));
    CHECK_THROWS_WITH_AS(bk::run_bin4(o), doctest::Contains("longer than the last bin"), bk::Error);
    o.drop_long = true;
    auto r = bk::run_bin4(o);
    CHECK(r.dropped == 4);  // 512, 257, 384, 385
    CHECK(r.per_bin == std::vector<uint64_t>{4, 3});
  }
}
