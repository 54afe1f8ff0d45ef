// The pretraining data loader over plain HDF5 inputs: coverage across ranks, batch contents, order, resume.
#include "test_data_loader_util.h"

#include "tasks/pretraining/sampler.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <utility>

using namespace loader_test;

namespace {

// Runs every rank's loader through one epoch; checks equal batch counts and that no sample is used twice.
// Returns the ids seen, all ranks together.
std::multiset<int> run_epoch_all_ranks(const std::vector<std::string>& inputs, int64_t batch_size, int world,
                                       int64_t epoch) {
  std::multiset<int> seen;
  int64_t batches = -1;
  for (int r = 0; r < world; ++r) {
    bk::PretrainDataLoader loader(config_for(inputs, batch_size, r, world));
    if (epoch > 0) loader.restore({epoch, 0, 0});
    auto epoch_batches = epoch_ids(loader);
    if (batches < 0) batches = static_cast<int64_t>(epoch_batches.size());
    CHECK(static_cast<int64_t>(epoch_batches.size()) == batches);  // equal on every rank
    for (const auto& b : epoch_batches) {
      CHECK(static_cast<int64_t>(b.size()) == batch_size);
      seen.insert(b.begin(), b.end());
    }
  }
  for (int id : seen) CHECK_MESSAGE(seen.count(id) == 1, "sample " << id << " used twice");
  CHECK(static_cast<int64_t>(seen.size()) == batches * batch_size * world);
  return seen;
}

std::set<int> all_ids(int n) {
  std::set<int> ids;
  for (int i = 0; i < n; ++i) ids.insert(i);
  return ids;
}

}  // namespace

TEST_CASE("data loader: every sample exactly once per epoch across the ranks") {
  ScratchDir dir;
  struct Case {
    std::vector<int> sizes;
    int64_t batch;
    int world;
  };
  // Sizes where every rank's share is a whole number of batches, so nothing is left over:
  //   W=1: 16 samples; W=2: 4 files of 6, two whole files each; W=3: three whole files dealt out, the fourth
  //   strided (2 rows each); W=3 over 2 files: fewer files than ranks, all rows strided (6 each).
  std::vector<Case> cases = {{{5, 7, 4}, 4, 1}, {{6, 6, 6, 6}, 3, 2}, {{6, 6, 6, 6}, 4, 3}, {{9, 9}, 3, 3}};
  for (size_t c = 0; c < cases.size(); ++c) {
    ScratchDir sub;
    auto inputs = write_files(sub, cases[c].sizes);
    int total = 0;
    for (int s : cases[c].sizes) total += s;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      CAPTURE(c);
      CAPTURE(epoch);
      auto seen = run_epoch_all_ranks(inputs, cases[c].batch, cases[c].world, epoch);
      CHECK(std::set<int>(seen.begin(), seen.end()) == all_ids(total));
    }
  }
}

TEST_CASE("data loader: uneven files give equal batch counts per rank and no repeats") {
  ScratchDir dir;
  auto inputs = write_files(dir, {7, 13, 10, 4, 9, 1});
  for (int world : {2, 3, 4}) {
    for (int64_t epoch = 0; epoch < 4; ++epoch) {
      CAPTURE(world);
      CAPTURE(epoch);
      auto seen = run_epoch_all_ranks(inputs, 2, world, epoch);
      CHECK(!seen.empty());
    }
  }
  bk::PretrainDataLoader loader(config_for(inputs, 2, 1, 3));
  CHECK(loader.total_samples() == 44);
  CHECK(loader.files() == 6);
  CHECK(loader.samples_per_epoch() == loader.batches_per_epoch() * 2 * 3);
  int64_t expected = loader.batches_per_epoch();
  CHECK(static_cast<int64_t>(epoch_ids(loader).size()) == expected);
  CHECK(loader.position() == bk::DataPosition{1, 0, loader.position().fingerprint});
}

TEST_CASE("data loader: batch rows are the samples written, truncated to the longest in the batch") {
  ScratchDir dir;
  auto inputs = write_files(dir, {11, 10});  // one NVIDIA file, one varlength file
  bk::PretrainDataLoader loader(config_for(inputs, 4));
  bk::PretrainBatch batch;
  int batches = 0;
  while (loader.next(batch)) {
    ++batches;
    REQUIRE(batch.size() == 4);
    int64_t longest = 0;
    for (int64_t b = 0; b < 4; ++b) {
      int id = row_id(batch, b);
      CHECK(row_sample(batch, b) == sample_of(id));
      longest = std::max<int64_t>(longest, default_length(id));
      // Padding: zeros after the sequence, 0 positions and -1 ids after the predictions.
      int64_t n = default_length(id);
      CHECK(batch.input_ids[b].slice(0, n).ne(0).sum().item<int64_t>() == 0);
      CHECK(batch.input_ids[b].slice(0, 0, n).eq(0).sum().item<int64_t>() == 0);
      CHECK(batch.segment_ids[b].slice(0, n).ne(0).sum().item<int64_t>() == 0);
      auto predictions = static_cast<int64_t>(sample_of(id).masked_lm_positions.size());
      CHECK(batch.masked_lm_positions[b].slice(0, predictions).eq(0).all().item<bool>());
      CHECK(batch.masked_lm_ids[b].slice(0, predictions).eq(-1).all().item<bool>());
    }
    CHECK(batch.seq_len() == longest);
    CHECK(batch.masked_lm_positions.sizes().vec() == std::vector<int64_t>{4, 8});
    CHECK(batch.masked_lm_ids.sizes().vec() == std::vector<int64_t>{4, 8});
    CHECK(batch.next_sentence_labels.sizes().vec() == std::vector<int64_t>{4});
    CHECK((batch.input_ids.scalar_type() == at::kLong));
  }
  CHECK(batches == 5);  // 21 samples, batches of 4
}

TEST_CASE("data loader: full_length pads every batch to the inputs' longest sequence (--cuda-graphs' one shape)") {
  ScratchDir dir;
  auto inputs = write_files(dir, {11, 10});
  auto config = config_for(inputs, 4);
  bk::PretrainDataLoader cut(config);
  config.full_length = true;
  bk::PretrainDataLoader full(config);
  bk::PretrainBatch a, b;
  int batches = 0;
  while (cut.next(a)) {
    REQUIRE(full.next(b));
    ++batches;
    CHECK(b.seq_len() == 128);  // the files' width, whatever the batch's longest sample
    CHECK(a.seq_len() < 128);
    // The same rows, zeros after each one's own batch length.
    const int64_t t = a.seq_len();
    CHECK(b.input_ids.slice(1, 0, t).equal(a.input_ids));
    CHECK(b.attention_mask.slice(1, 0, t).equal(a.attention_mask));
    CHECK(b.input_ids.slice(1, t).eq(0).all().item<bool>());
    CHECK(b.attention_mask.slice(1, t).eq(0).all().item<bool>());
    CHECK(b.masked_lm_ids.equal(a.masked_lm_ids));
  }
  CHECK(batches == 5);
}

TEST_CASE("data loader: order follows the seed and changes every epoch") {
  ScratchDir dir;
  auto inputs = write_files(dir, {8, 8, 8, 8, 8});
  auto run = [&](uint64_t seed, int prefetch) {
    auto config = config_for(inputs, 4);
    config.seed = seed;
    config.prefetch = prefetch;
    bk::PretrainDataLoader loader(config);
    std::vector<std::vector<std::vector<int>>> epochs;
    for (int e = 0; e < 3; ++e) epochs.push_back(epoch_ids(loader));
    return epochs;
  };
  auto a = run(7, 4);
  CHECK(a == run(7, 0));  // the prefetch thread changes nothing
  CHECK(a == run(7, 2));
  auto b = run(8, 4);
  CHECK(a != b);
  CHECK(a[0] != a[1]);
  CHECK(a[1] != a[2]);
  // The file order changes too, not only the order inside the files.
  std::vector<std::vector<size_t>> orders;
  for (int e = 0; e < 6; ++e) orders.push_back(bk::epoch_file_order(5, 7, e, 0));
  CHECK(std::set<std::vector<size_t>>(orders.begin(), orders.end()).size() > 1);
}

TEST_CASE("data loader: restore() continues exactly where an uninterrupted run goes on") {
  ScratchDir dir;
  auto inputs = write_files(dir, {9, 5, 12, 7});
  for (int world : {1, 2}) {
    for (int prefetch : {0, 3}) {
      auto config = config_for(inputs, 3, world - 1, world);
      config.prefetch = prefetch;
      // The reference: three epochs, end-of-epoch marked by an empty batch.
      std::vector<std::vector<int>> reference;
      {
        bk::PretrainDataLoader loader(config);
        bk::PretrainBatch batch;
        for (int e = 0; e < 3;) {
          if (loader.next(batch)) {
            reference.push_back(batch_ids(batch));
          } else {
            reference.push_back({});
            ++e;
          }
        }
      }
      for (size_t k = 0; k < reference.size(); k += 2) {
        CAPTURE(world);
        CAPTURE(prefetch);
        CAPTURE(k);
        std::string saved;
        {
          bk::PretrainDataLoader first(config);
          bk::PretrainBatch batch;
          for (size_t i = 0; i < k; ++i) first.next(batch);
          saved = first.position().to_json();
        }
        bk::PretrainDataLoader second(config);
        second.restore(bk::DataPosition::from_json(saved));
        bk::PretrainBatch batch;
        for (size_t i = k; i < reference.size(); ++i) {
          bool got = second.next(batch);
          CHECK(got == !reference[i].empty());
          if (got) CHECK(batch_ids(batch) == reference[i]);
        }
      }
    }
  }
}

TEST_CASE("data loader: restore() on a running loader, and positions from other runs are refused") {
  ScratchDir dir;
  auto inputs = write_files(dir, {10, 10});
  auto config = config_for(inputs, 2);
  bk::PretrainDataLoader loader(config);
  bk::PretrainBatch batch;
  loader.next(batch);
  loader.next(batch);
  auto mark = loader.position();
  CHECK(mark.epoch == 0);
  CHECK(mark.batch == 2);
  loader.next(batch);
  auto third = batch_ids(batch);
  for (int i = 0; i < 5; ++i) loader.next(batch);
  loader.restore(mark);
  loader.next(batch);
  CHECK(batch_ids(batch) == third);

  auto other = config;
  other.seed = 99;
  bk::PretrainDataLoader different(other);
  CHECK(error_of([&] { different.restore(mark); }).find("belongs to other inputs") != std::string::npos);
  CHECK(error_of([&] { loader.restore({0, 11, 0}); }).find("outside the data") != std::string::npos);
  CHECK(error_of([] { bk::DataPosition::from_json("{\"epoch\": 1}"); }).find("position") != std::string::npos);
}

TEST_CASE("data loader: directories, and errors that name the file") {
  ScratchDir dir;
  fs::create_directories(dir.path / "data");
  write_ids(dir / "data/b.hdf5", 0, 6);
  write_ids(dir / "data/a.h5", 6, 6, bk::Hdf5Layout::varlength);
  { std::ofstream(dir / "data/notes.txt") << "not data\n"; }
  bk::PretrainDataLoader loader(config_for({dir / "data"}, 4));
  CHECK(loader.files() == 2);
  CHECK(loader.total_samples() == 12);
  CHECK(epoch_ids(loader).size() == 3);

  auto error_for = [&](std::vector<std::string> inputs, int64_t batch = 4) {
    return error_of([&] { bk::PretrainDataLoader bad(config_for(inputs, batch)); });
  };
  std::string missing = dir / "nowhere.hdf5";
  CHECK(error_for({missing}).find(missing) != std::string::npos);
  std::string text = dir / "data/notes.txt";
  CHECK(error_for({dir / "data/b.hdf5", text}).find(text + ": not an HDF5 file") != std::string::npos);
  fs::create_directories(dir.path / "empty");
  CHECK(error_for({dir / "empty"}).find(dir / "empty") != std::string::npos);
  {
    // An HDF5 file that holds something else.
    hid_t file = H5Fcreate((dir / "other.hdf5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t n = 3;
    hid_t space = H5Screate_simple(1, &n, nullptr);
    hid_t set = H5Dcreate2(file, "weights", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(set);
    H5Sclose(space);
    H5Fclose(file);
  }
  CHECK(error_for({dir / "other.hdf5"}).find(dir / "other.hdf5") != std::string::npos);
  CHECK(error_for({dir / "data"}, 13).find("12 samples are too few for a batch of 13") != std::string::npos);
  CHECK(error_for({}).find("no training inputs") != std::string::npos);
  auto with_ratio = config_for({dir / "data"}, 4);
  with_ratio.bin_ratio = {1, 1};
  CHECK(error_of([&] { bk::PretrainDataLoader bad(with_ratio); }).find("bin4") != std::string::npos);
}

TEST_CASE("data loader: an error in the prefetch thread comes out of next() with its message") {
  ScratchDir dir;
  std::string path = dir / "many_predictions.hdf5";
  {
    bk::PretrainWriterOptions options;
    options.seq_len = 64;
    options.max_predictions = 10;
    bk::PretrainWriter writer(path, options);
    for (int id = 0; id < 8; ++id) writer.append(make_sample(id, 40, id == 5 ? 9 : 2));
    writer.commit();
  }
  auto config = config_for({path}, 8);
  config.max_predictions = 4;  // row 5 has 9 predictions
  config.prefetch = 2;
  bk::PretrainDataLoader loader(config);
  bk::PretrainBatch batch;
  std::string first = error_of([&] { loader.next(batch); });
  CHECK(first.find(path + ": row 5: 9 masked positions") != std::string::npos);
  CHECK(error_of([&] { loader.next(batch); }) == first);  // stays failed

  // A file removed after the loader checked it: the reading thread's error names it.
  std::string gone = dir / "gone.hdf5";
  write_ids(gone, 0, 8);
  auto config2 = config_for({gone}, 4);
  config2.prefetch = 3;
  bk::PretrainDataLoader loader2(config2);
  fs::remove(gone);
  CHECK(error_of([&] { loader2.next(batch); }).find(gone) != std::string::npos);
}

TEST_CASE("data loader: destroying a loader whose thread waits on a full queue returns") {
  ScratchDir dir;
  auto inputs = write_files(dir, {40});
  auto config = config_for(inputs, 2);
  config.prefetch = 1;
  for (int i = 0; i < 3; ++i) {
    bk::PretrainDataLoader loader(config);
    bk::PretrainBatch batch;
    CHECK(loader.next(batch));
  }
}

TEST_CASE("data loader: max predictions 0 takes the widest masked_lm_positions of the inputs") {
  ScratchDir dir;
  const std::string narrow = dir / "narrow.hdf5", wide = dir / "wide.hdf5";
  for (const auto& [path, width] : {std::pair{narrow, 8}, std::pair{wide, 12}}) {
    bk::PretrainWriterOptions options;
    options.seq_len = 96;
    options.max_predictions = width;
    bk::PretrainWriter writer(path, options);
    for (int id = 0; id < 4; ++id) writer.append(make_sample(id, 40, width == 12 ? 11 : 3));
    writer.commit();
  }
  auto config = config_for({narrow, wide}, 4);
  config.max_predictions = 0;
  bk::PretrainDataLoader loader(config);
  CHECK(loader.max_predictions() == 12);
  CHECK(loader.max_length() == 96);
  bk::PretrainBatch batch;
  REQUIRE(loader.next(batch));
  CHECK(batch.masked_lm_positions.size(1) == 12);

  // MLPerf's varlength files record no width: the count must be given.
  const std::string varlength = dir / "varlength.hdf5";
  write_ids(varlength, 0, 4, bk::Hdf5Layout::varlength);
  auto vl = config_for({varlength}, 4);
  vl.max_predictions = 0;
  CHECK(error_of([&] { bk::PretrainDataLoader bad(vl); }).find("give --max-predictions") != std::string::npos);
}
