#include "tasks/pretraining/inputs.h"

#include "datasets/shared_vocab_stamp.h"
#include "hdf5/hdf5_reader.h"
#include "util/error.h"
#include "util/json_read.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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

}  // namespace

PretrainInputs resolve_pretrain_inputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) fail("no training inputs given");
  std::vector<std::string> plain;
  PretrainInputs resolved;
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
  // Every file is opened now, so a bad one fails before training starts.
  SharedVocabStamp vocab;
  const std::string* first_masked = nullptr;
  const std::string* first_unmasked = nullptr;
  for (const auto& list : bins) {
    auto& source = resolved.sources.emplace_back();
    for (const auto& path : list) {
      const PretrainReader reader(path);
      vocab.add(reader);
      source.push_back({path, reader.rows(), reader.seq_len(), reader.max_predictions(), reader.masked(),
                        reader.max_sequences()});
      (reader.masked() ? first_masked : first_unmasked) = &path;
    }
  }
  if (first_masked && first_unmasked)
    fail("{} holds its masks and {} none (mkpretrain --masking none): give files of one kind", *first_masked,
         *first_unmasked);
  resolved.vocab = vocab.stamp();
  resolved.masked = first_unmasked == nullptr;
  return resolved;
}

}  // namespace bk
