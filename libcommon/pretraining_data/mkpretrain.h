// What `mkpretrain` does, behind the thin main in tools/mkpretrain.cpp: read sentence-per-line documents,
// tokenize them, make the reference's instances, write them as TFRecord (Google's layout) or HDF5.
#pragma once

#include "pretraining_data/instances.h"
#include "tok/text_tokenizer.h"
#include "util/choices.h"

#include <optional>
#include <string>
#include <vector>

namespace bk {

enum class PretrainFormat { tfrecord, hdf5 };

// --masking: static (the masks drawn and written, as create_pretraining_data.py does) or none (MkpretrainConfig).
inline constexpr Choice<bool> kMkpretrainMasking[] = {{"static", false}, {"none", true}};

struct MkpretrainConfig {
  TokenizerFlags tokenizer;        // --vocab (and --cased) or --tokenizer
  InstanceConfig instances;        // its dupe_factor is dupe_factor's, resolved (instance_config())
  std::optional<int> dupe_factor;  // --dupe-factor; unset: 10, or 1 with --masking none
  // --masking none: the same instances, their masks drawn (so the random stream stays the reference's) and dropped;
  // HDF5 with each sample's sample_id, for a loader that masks at every epoch (bertkit-formats(5)).
  bool unmasked = false;
  std::string seed = "12345";      // a Python int, in decimal (may exceed 64 bits)
  std::string format;              // tfrecord or hdf5; "" = from the output's name, else tfrecord
  std::string hdf5_layout = "nvidia";  // nvidia or varlength (hdf5 output)
  int gzip_level = 0;              // HDF5 deflate level 1-9, 0 = none
  std::string output;
  std::vector<std::string> inputs;
  int threads = 1;                 // tokenization threads, 0 = all (instance creation is one random stream)
  bool force = false;
  bool quiet = false;

  // bk::UsageError naming the flag for a value no run can use.
  void validate() const;
  // The format written: format, else the output's name, else tfrecord (a validated config).
  PretrainFormat output_format() const;
  // `instances` with the dupe factor resolved.
  InstanceConfig instance_config() const;
};

// Validates the config, then runs; returns the number of instances written.
size_t run_mkpretrain(const MkpretrainConfig& config);

// Picks the format from an output file name (.tfrecord/.tf_record/.tfrec -> tfrecord, .hdf5/.h5 -> hdf5);
// returns false when the name says nothing.
bool format_from_name(const std::string& path, PretrainFormat& format);

}  // namespace bk
