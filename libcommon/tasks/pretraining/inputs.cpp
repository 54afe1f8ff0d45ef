#include "tasks/pretraining/inputs.h"
#include "pretraining_data/masking_kind.h"

#include "datasets/shared_vocab_stamp.h"
#include "hdf5/hdf5_reader.h"
#include "util/error.h"
#include "util/json_read.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace bk {

namespace fs = std::filesystem;

namespace {

bool is_hdf5_name(const fs::path& p) { return p.extension() == ".hdf5" || p.extension() == ".h5"; }

std::vector<std::string> hdf5_files_in(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_hdf5_name(it->path()) && it->is_regular_file()) files.push_back(it->path().string());
  if (ec) fail("{}: cannot list the directory: {}", dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// Appends a bin4 directory's shards to `bins` (one list per bin), checking them against its bin4.json.
void add_bin4_dir(const fs::path& dir, std::vector<int>& bounds, std::vector<std::vector<std::string>>& bins) {
  fs::path marker = dir / "bin4.json";
  std::ifstream in(marker);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) fail("{}: cannot read", marker.string());
  nlohmann::json json;
  std::vector<int> these;
  std::vector<std::vector<std::string>> files;
  try {
    json = parse_json(text.str(), marker.string());
    for (const auto& bin : json.at("bins")) {
      these.push_back(bin.at("max_length").get<int>());
      fs::path bin_dir = dir / bin.at("dir").get<std::string>();
      files.push_back(hdf5_files_in(bin_dir));
      auto shards = bin.at("shards").get<size_t>();
      if (files.back().size() != shards)
        fail("{}: bin4.json lists {} shard{} for bin {}, {} holds {}", marker.string(), shards, shards == 1 ? "" : "s",
             these.back(), bin_dir.string(), files.back().size());
    }
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a bin4.json: {}", marker.string(), json_error_text(e));
  }
  if (these.empty()) fail("{}: lists no bins", marker.string());
  if (!bounds.empty() && these != bounds)
    fail("{}: bins {} differ from the other bin4 input's {}", marker.string(), fmt::join(these, ","),
         fmt::join(bounds, ","));
  bounds = these;
  bins.resize(files.size());
  for (size_t b = 0; b < files.size(); ++b) bins[b].insert(bins[b].end(), files[b].begin(), files[b].end());
}

// One file named twice (two spellings, a link, a directory and a file in it) would be read twice an epoch, every
// copy of a sample with the same masks.
void refuse_repeated_files(const std::vector<std::vector<std::string>>& bins) {
  std::map<std::pair<dev_t, ino_t>, const std::string*> seen;
  for (const auto& list : bins)
    for (const auto& path : list) {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) continue;  // the reader says why
      const auto [at, fresh] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), &path);
      if (!fresh) usage_fail("{}: given twice (also as {}); name each file once", path, *at->second);
    }
}

// The ids an unmasked file's rows hold, as far as two reads tell: mkpretrain numbers a file's rows from a base of
// its own, so a file whose last id is its first plus its rows less one holds that whole run of ids.
struct SampleIdRun {
  const std::string* path;
  int64_t first, last;
};

// Dynamic masks are a function of (seed, epoch, sample_id): two samples of one id get the same masks. Warned, not
// refused: the samples still train, with less variety (files of another writer, or ids made twice by hand).
void warn_shared_sample_ids(std::vector<SampleIdRun> runs, std::vector<std::string>& warnings) {
  std::sort(runs.begin(), runs.end(), [](const SampleIdRun& a, const SampleIdRun& b) { return a.first < b.first; });
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].first <= runs[i - 1].last) {
      warnings.push_back(fmt::format("{} and {} hold the same sample ids ({} and on): their samples get the same "
                                     "dynamic masks; remake one of them with this version's mkpretrain",
                                     *runs[i - 1].path, *runs[i].path, runs[i].first));
      return;  // one line says it
    }
}

// What the first rows of the first file say of the data, before anything trains: masked rows without a prediction
// (they would train at mlm_loss 0) are an error; whether every sample is labelled "is next" (single-segment data:
// mkpretrain --no-nsp or --full-sentences), read from at least 32 samples (a real NSP set has half of them random:
// 2^-32 by chance), or whether some is "random next".
struct FirstRows {
  bool all_next = true;
  size_t samples = 0;
};

FirstRows first_rows(const std::string& path) {
  PretrainReader reader(path);
  std::vector<PretrainSample> block;
  if (!reader.read_block(block)) return {};
  size_t samples = 0;
  bool all_next = true;
  for (size_t row = 0; row < block.size(); ++row) {
    const PretrainSample& s = block[row];
    if (reader.masked() && s.masked_lm_positions.empty())
      fail("{}: row {}: no masked-LM prediction (masked_lm_positions all 0); masked data holds at least one per row "
           "(mkpretrain), unmasked data (--masking none) holds sample_ids and no masked_lm_* columns", path, row);
    all_next = all_next && (s.pack_labels.empty() ? s.next_sentence_label == 0
                                                  : std::all_of(s.pack_labels.begin(), s.pack_labels.end(),
                                                                [](int32_t l) { return l == 0; }));
    samples += s.sequences();
  }
  return {all_next, samples};
}

}  // namespace

PretrainInputs resolve_pretrain_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) fail("no training inputs given");
  std::vector<std::string> plain;
  PretrainInputs resolved;
  resolved.names = inputs;
  std::vector<std::vector<std::string>> bins;
  for (const auto& input : inputs) {
    std::error_code ec;
    fs::file_status st = fs::status(input, ec);
    if (!fs::exists(st)) fail("{}: cannot open: No such file or directory", input);
    if (!fs::is_directory(st)) {
      plain.push_back(input);
    } else if (fs::exists(fs::path(input) / "bin4.json")) {
      add_bin4_dir(input, resolved.bin_bounds, bins);
    } else {
      std::vector<std::string> files = hdf5_files_in(input);
      if (files.empty()) fail("{}: no *.hdf5 or *.h5 files in the directory", input);
      plain.insert(plain.end(), files.begin(), files.end());
    }
  }
  if (!bins.empty() && !plain.empty())
    fail("{}: plain HDF5 inputs and bin4 directories cannot be mixed", plain.front());
  if (bins.empty()) bins.push_back(plain);
  refuse_repeated_files(bins);
  // Every file is opened now, so a bad one fails before training starts.
  SharedVocabStamp vocab;
  MaskingKinds kinds;
  std::vector<SampleIdRun> id_runs;
  for (const auto& list : bins) {
    auto& source = resolved.sources.emplace_back();
    for (const auto& path : list) {
      PretrainReader reader(path);
      vocab.add(reader);
      source.push_back({path, reader.rows(), reader.seq_len(), reader.max_predictions(), reader.masked(),
                        reader.max_sequences()});
      kinds.add(path, reader.masked());
      if (reader.masked() || reader.rows() == 0) continue;
      const int64_t first = reader.sample_id_at(0), last = reader.sample_id_at(reader.rows() - 1);
      if (reader.rows() > 1 && first >= 0 && first == last)
        resolved.warnings.push_back(fmt::format("{}: rows 1 and {} have the same sample_id {}: they get the same "
                                                "dynamic masks", path, reader.rows(), first));
      else if (first >= 0 && last - first == static_cast<int64_t>(reader.rows()) - 1)
        id_runs.push_back({&path, first, last});
    }
  }
  warn_shared_sample_ids(id_runs, resolved.warnings);
  if (const std::string note = vocab.unstamped_note(); !note.empty()) resolved.warnings.push_back(note);
  resolved.vocab = vocab.stamp();
  resolved.masked = kinds.masked();
  const std::vector<SampleFile>& first_source = resolved.sources.front();
  if (!first_source.empty()) {
    const FirstRows first = first_rows(first_source.front().path);
    resolved.single_segment = first.all_next && first.samples >= 32;
    resolved.next_sentence_labels = !first.all_next;
  }
  return resolved;
}

std::vector<SampleFile> PretrainInputs::files() const {
  std::vector<SampleFile> all;
  for (const auto& source : sources) all.insert(all.end(), source.begin(), source.end());
  return all;
}

uint64_t PretrainInputs::rows() const {
  uint64_t total = 0;
  for (const auto& source : sources)
    for (const auto& file : source) total += file.rows;
  return total;
}

std::string PretrainInputs::named() const { return fmt::format("{}", fmt::join(names, ", ")); }

void check_max_predictions(int64_t max_predictions, const PretrainInputs& inputs, int64_t max_positions) {
  int64_t longest = 0;
  for (const auto& source : inputs.sources)
    for (const auto& file : source) longest = std::max<int64_t>(longest, file.seq_len);
  const int64_t bound = longest > 0 ? longest : max_positions;
  if (bound > 0 && max_predictions > bound)
    usage_fail("--max-predictions {}: more than the {} tokens of the {}; give at most that", max_predictions, bound,
               longest > 0 ? "inputs' longest row" : "model's longest sequence (max_position_embeddings)");
}

}  // namespace bk
