// Unmasked instances and their dynamic masks (torch-free): the HDF5 layer round-trips them, and the loader's
// sample streams draw each sample's masks from (seed, epoch, sample_id) alone, whatever rank reads it, skip or not.
#include "hdf5/hdf5_reader.h"
#include "hdf5/hdf5_writer.h"
#include "pretraining_data/dynamic_masks.h"
#include "tasks/pretraining/sampler.h"
#include "util/error.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr int32_t kCls = 1, kSep = 2, kMask = 3;

bk::DynamicMasking masking() {
  bk::DynamicMasking m;
  m.vocab.cls_id = kCls;
  m.vocab.sep_id = kSep;
  m.vocab.mask_id = kMask;
  for (int32_t id = 0; id < 100; ++id) m.vocab.random_word_ids.push_back(id);
  m.vocab.is_continuation.assign(100, 0);
  m.rule = {0.15, 8, false};
  return m;
}

// n unmasked samples of 10..40 tokens, ids 10.., sample_id 1000 + i.
std::vector<bk::PretrainSample> unmasked(int n) {
  std::vector<bk::PretrainSample> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& s = out[static_cast<size_t>(i)];
    const int length = 10 + (i * 7) % 31;
    s.input_ids = {kCls};
    for (int k = 1; k < length - 1; ++k) s.input_ids.push_back(10 + (i + k) % 80);
    s.input_ids.push_back(kSep);
    s.segment_ids.assign(s.input_ids.size(), 0);
    s.next_sentence_label = i % 2;
    s.sample_id = 1000 + i;
  }
  return out;
}

std::string write(const fs::path& path, bk::Hdf5Layout layout, const std::vector<bk::PretrainSample>& samples) {
  bk::PretrainWriterOptions o;
  o.layout = layout;
  o.seq_len = 64;
  o.masked = false;
  o.chunk_rows = 16;
  bk::PretrainWriter writer(path.string(), o);
  for (const auto& s : samples) writer.append(s);
  writer.commit();
  return path.string();
}

fs::path scratch() {
  static struct Scratch {  // removed when the test binary exits
    fs::path dir = fs::temp_directory_path() / ("bertkit-unit-dynamic-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

// Every sample a stream of (rank, world) gives in an epoch, by sample_id.
void collect(const std::vector<bk::SampleFile>& files, int64_t epoch, int rank, int world, uint64_t skip,
             std::map<int64_t, bk::PretrainSample>& out) {
  const bk::DynamicMasking m = masking();
  bk::SampleStream stream(files, bk::epoch_slices(files, 9, epoch, 0, rank, world), 9, epoch, 0, 8, &m);
  stream.skip(skip);
  for (bk::PretrainSample s; stream.next(s);) out[s.sample_id] = s;
}

}  // namespace

TEST_CASE("unmasked instances: both layouts round-trip without predictions, with their sample ids") {
  const auto samples = unmasked(37);
  for (auto layout : {bk::Hdf5Layout::nvidia, bk::Hdf5Layout::varlength}) {
    const std::string path = write(scratch() / fmt::format("u-{}.h5", bk::layout_name(layout)), layout, samples);
    bk::PretrainReader reader(path);
    CHECK_FALSE(reader.masked());
    CHECK(reader.max_predictions() == 0);
    std::vector<bk::PretrainSample> block, all;
    while (reader.read_block(block, 10)) all.insert(all.end(), block.begin(), block.end());
    CHECK(all == samples);
  }
  bk::PretrainWriterOptions o;
  o.masked = false;
  o.layout = bk::Hdf5Layout::nvidia;
  o.seq_len = 64;
  bk::PretrainWriter writer((scratch() / "bad.h5").string(), o);
  auto masked = unmasked(1);
  masked[0].masked_lm_positions = {1};
  masked[0].masked_lm_ids = {11};
  CHECK_THROWS_WITH(writer.append(masked[0]), doctest::Contains("an unmasked file takes samples without predictions"));
  auto no_id = unmasked(1);
  no_id[0].sample_id = -1;
  CHECK_THROWS_WITH(writer.append(no_id[0]), doctest::Contains("needs each sample's sample_id"));
}

TEST_CASE("dynamic masks: a sample's masks depend on (seed, epoch, sample_id) alone") {
  const auto samples = unmasked(60);
  const std::vector<bk::SampleFile> files = {
      {write(scratch() / "a.h5", bk::Hdf5Layout::nvidia, {samples.begin(), samples.begin() + 25}), 25, 64, 0, false},
      {write(scratch() / "b.h5", bk::Hdf5Layout::varlength, {samples.begin() + 25, samples.end()}), 35, 0, 0, false}};
  std::map<int64_t, bk::PretrainSample> one, two, skipped, next_epoch;
  collect(files, 0, 0, 1, 0, one);
  collect(files, 0, 0, 2, 0, two);
  collect(files, 0, 1, 2, 0, two);
  collect(files, 0, 0, 1, 13, skipped);
  collect(files, 1, 0, 1, 0, next_epoch);
  REQUIRE(one.size() == 60);
  CHECK(two == one);  // two ranks, each its share
  for (const auto& [id, s] : skipped) CHECK(s == one.at(id));  // a stream that skipped (a resume) draws the rest alike
  size_t changed = 0, masks = 0, tokens = 0;
  for (const auto& [id, s] : one) {
    const auto& original = samples[static_cast<size_t>(id - 1000)];
    CHECK(s.masked_lm_positions.size() == masking().rule.count(static_cast<uint32_t>(s.length())));
    for (size_t k = 0; k < s.masked_lm_positions.size(); ++k)
      CHECK(s.masked_lm_ids[k] == original.input_ids[static_cast<size_t>(s.masked_lm_positions[k])]);
    changed += next_epoch.at(id).masked_lm_positions != s.masked_lm_positions;
    masks += s.masked_lm_positions.size();
    tokens += s.length();
  }
  CHECK(changed > 50);  // another epoch, other masks
  CHECK(static_cast<double>(masks) / static_cast<double>(tokens) == doctest::Approx(0.15).epsilon(0.2));
}

TEST_CASE("dynamic masks: a sample with nothing to mask is an error naming the file and row") {
  auto samples = unmasked(3);
  samples[1].input_ids = {kCls, kSep};
  samples[1].segment_ids = {0, 0};
  const std::vector<bk::SampleFile> files = {
      {write(scratch() / "empty.h5", bk::Hdf5Layout::nvidia, samples), 3, 64, 0, false}};
  const bk::DynamicMasking m = masking();
  bk::SampleStream stream(files, bk::epoch_slices(files, 9, 0, 0, 0, 1), 9, 0, 0, 8, &m);
  bk::PretrainSample s;
  // The masks are drawn as each sample is taken (by the rule of the batch it goes to): the error comes with it.
  auto take_all = [&] { while (stream.next(s)) continue; };
  CHECK_THROWS_WITH(take_all(), doctest::Contains("empty.h5: row 1: no token to mask"));
}

namespace {

// Unmasked samples back to back in one row, as pack(1) writes them.
bk::PretrainSample packed_row(const std::vector<bk::PretrainSample>& parts) {
  bk::PretrainSample row;
  for (const auto& s : parts) {
    row.input_ids.insert(row.input_ids.end(), s.input_ids.begin(), s.input_ids.end());
    row.segment_ids.insert(row.segment_ids.end(), s.segment_ids.begin(), s.segment_ids.end());
    row.pack_lengths.push_back(static_cast<int32_t>(s.length()));
    row.pack_labels.push_back(s.next_sentence_label);
    row.pack_sample_ids.push_back(s.sample_id);
  }
  row.next_sentence_label = row.pack_labels.front();
  return row;
}

}  // namespace

TEST_CASE("dynamic masks: a packed row of unmasked samples round-trips and gets each sample's own masks") {
  const auto samples = unmasked(30);
  std::vector<bk::PretrainSample> rows;
  for (size_t i = 0; i < samples.size();) {
    const size_t n = std::min<size_t>(1 + rows.size() % 3, samples.size() - i);
    rows.push_back(packed_row({samples.begin() + static_cast<ptrdiff_t>(i), samples.begin() + static_cast<ptrdiff_t>(i + n)}));
    i += n;
  }
  bk::PretrainWriterOptions o;
  o.layout = bk::Hdf5Layout::packed;
  o.seq_len = 128;
  o.max_sequences = 3;
  o.masked = false;
  o.chunk_rows = 4;
  const std::string path = (scratch() / "packed-unmasked.h5").string();
  {
    bk::PretrainWriter writer(path, o);
    for (const auto& row : rows) writer.append(row);
    writer.commit();
  }
  bk::PretrainReader reader(path);
  CHECK_FALSE(reader.masked());
  CHECK(reader.max_sequences() == 3);
  std::vector<bk::PretrainSample> block, all;
  while (reader.read_block(block, 5)) all.insert(all.end(), block.begin(), block.end());
  REQUIRE(all == rows);
  {  // A row of several samples needs the id of each (a file the reader would refuse is never written).
    bk::PretrainWriter writer((scratch() / "packed-no-ids.h5").string(), o);
    auto row = rows[1];
    REQUIRE(row.sequences() > 1);
    row.sample_id = row.pack_sample_ids.front();
    row.pack_sample_ids.clear();
    CHECK_THROWS_WITH(writer.append(row), doctest::Contains("needs each sample's sample_id"));
  }

  // Masked in its row, each sample gets the masks it gets alone, at its place in the row; the row's count stays
  // within packed_row_predictions.
  const bk::DynamicMasking m = masking();
  size_t sample = 0;
  for (auto row : all) {
    const size_t row_length = row.length();
    REQUIRE(bk::mask_sample(row, m.rule, m.vocab, 9, 2) > 0);
    CHECK(row.masked_lm_positions.size() <= bk::packed_row_predictions(m.rule, static_cast<int>(row_length), 3));
    std::vector<int32_t> positions, ids, tokens;
    int32_t offset = 0;
    for (size_t k = 0; k < row.pack_lengths.size(); ++k, ++sample) {
      auto alone = samples[sample];
      bk::mask_sample(alone, m.rule, m.vocab, 9, 2);
      for (size_t j = 0; j < alone.masked_lm_positions.size(); ++j) {
        positions.push_back(alone.masked_lm_positions[j] + offset);
        ids.push_back(alone.masked_lm_ids[j]);
      }
      tokens.insert(tokens.end(), alone.input_ids.begin(), alone.input_ids.end());
      offset += row.pack_lengths[k];
    }
    CHECK(row.masked_lm_positions == positions);
    CHECK(row.masked_lm_ids == ids);
    CHECK(row.input_ids == tokens);
  }
  CHECK(sample == samples.size());
}

TEST_CASE("a masking-rate schedule: the rate of a micro-batch's step, from the first rate to the final one") {
  bk::DynamicMasking m;
  m.rule.masked_lm_prob = 0.3;
  CHECK(m.rule_at(7).masked_lm_prob == 0.3);  // no schedule: the rule itself
  m.final_prob = 0.05;
  m.steps = 11;
  m.batches = {2};
  CHECK(m.scheduled());
  CHECK(m.rule_at(0).masked_lm_prob == 0.3);   // step 1
  CHECK(m.rule_at(1).masked_lm_prob == 0.3);   // its second micro-batch
  CHECK(m.rule_at(10).masked_lm_prob == doctest::Approx(0.175));  // step 6 of 11: half way
  CHECK(m.rule_at(20).masked_lm_prob == doctest::Approx(0.05));   // the last step
  CHECK(m.rule_at(500).masked_lm_prob == doctest::Approx(0.05));  // past it: the final rate
  CHECK(m.rule_at(10).max_predictions == m.rule.max_predictions);
}
