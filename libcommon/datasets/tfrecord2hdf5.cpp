#include "datasets/tfrecord2hdf5.h"

#include "io/output_over_input.h"
#include "io/staged_output.h"
#include "util/error.h"
#include "util/printable.h"
#include "io/progress.h"
#include "tfrecord/example.h"
#include "hdf5/hdf5_columns.h"
#include "hdf5/hdf5_handle.h"
#include "hdf5/hdf5_writer.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"
#include "io/output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

namespace bk {
namespace {

// A record in hand: its decoded Example and where it came from, for error messages.
struct Record {
  Example example;
  std::string where;  // "FILE: record N at byte OFFSET"
};

// What the progress line counts across all inputs: bytes read from the files (compressed ones too, against
// their sizes) and records.
struct ProgressCount {
  Progress& progress;
  uint64_t raw_done = 0, records = 0;
};

// Iterates over the records of several inputs, one file open at a time.
class RecordStream {
 public:
  RecordStream(std::vector<std::string> paths, bool skip_corrupt, ProgressCount& count)
      : paths_(std::move(paths)), skip_corrupt_(skip_corrupt), count_(count) {}

  bool next(Record& record) {
    for (;;) {
      if (!reader_) {
        if (next_path_ == paths_.size()) return false;
        input_ = std::make_unique<Input>(paths_[next_path_++]);
        reader_ = std::make_unique<TFRecordReader>(*input_, TFRecordReaderOptions{skip_corrupt_});
      }
      std::string_view bytes;
      if (reader_->next(bytes)) {
        record.where = fmt::format("{}: record {} at byte {}", reader_->name(), reader_->record_index(), reader_->record_offset());
        decode_example(bytes, record.example, record.where);
        ++records_;
        ++count_.records;
        if (count_.progress.wants_update())
          count_.progress.update(count_.raw_done + input_->raw_offset(), fmt::format("{} records", count_.records));
        return true;
      }
      skipped_ += reader_->skipped();
      bytes_ += reader_->bytes_read();
      count_.raw_done += input_->raw_offset();
      reader_.reset();
      input_.reset();
    }
  }
  uint64_t records() const { return records_; }
  uint64_t skipped() const { return skipped_; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<std::string> paths_;
  bool skip_corrupt_;
  size_t next_path_ = 0;
  std::unique_ptr<Input> input_;
  std::unique_ptr<TFRecordReader> reader_;
  uint64_t records_ = 0, skipped_ = 0, bytes_ = 0;
  ProgressCount& count_;
};

// Without --max-seq-length and --max-predictions the row width comes from the first record, and the writer
// buffers a chunk of 256 rows that wide: a hostile 4 MB record would make that gigabytes. Longer than this is
// no BERT sequence; a real one needs the flag.
constexpr size_t kMaxInferredWidth = 65536;

const char* kind_name(const Feature& f) {
  return f.is_int64() ? "int64" : f.is_float() ? "float" : f.is_bytes() ? "bytes" : "empty";
}

// Feature `name` of the record as int64s; missing or of another kind is an error naming file and record.
const Int64List& int64_feature(const Record& r, const char* name) {
  const Feature* f = r.example.find(name);
  if (!f) fail("{}: no feature '{}'{}", r.where, name, r.example.size() == 0 ? " (the record has no features)" : "");
  if (!f->is_int64()) fail("{}: feature '{}' is a {} list, expected int64", r.where, name, kind_name(*f));
  return f->int64s();
}

// The row width of a column inferred from the first record, or `given` when the flag set it.
int row_width(const Record& first, const char* feature, int given, const char* flag) {
  if (given > 0) return given;
  size_t width = int64_feature(first, feature).size();
  if (width > kMaxInferredWidth)
    fail("{}: {} has {} values, more than the {} a width inferred from the first record may have; give {} to "
         "convert such records", first.where, feature, width, kMaxInferredWidth, flag);
  return static_cast<int>(width);
}

bool is_pretraining(const Example& e) {
  for (const char* name : {"input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids",
                           "next_sentence_labels"})
    if (!e.find(name)) return false;
  return true;
}

// The first `count` int64 values of feature `name` as the sample's int32s. A value outside int32 is an error
// naming the record and feature: a plain cast would wrap it (2^40 -> 0, 2^32 + 3 -> 3) into a plausible id.
void narrow(const Record& r, const char* name, const std::vector<int64_t>& from, size_t count, std::vector<int32_t>& to) {
  to.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (from[i] < INT32_MIN || from[i] > INT32_MAX)
      fail("{}: {}: value {} at index {} does not fit the HDF5 column's int32", r.where, name, from[i], i);
    to[i] = static_cast<int32_t>(from[i]);
  }
}

// One pretraining record as a sample: real tokens = the 1s of input_mask (which must be a prefix), real
// predictions = the non-zero masked_lm_weights when present, else the positions before the first 0.
PretrainSample to_sample(const Record& r, size_t max_len, size_t max_preds) {
  const Example& e = r.example;
  const auto &ids = int64_feature(r, "input_ids"), &mask = int64_feature(r, "input_mask"),
             &segments = int64_feature(r, "segment_ids");
  const auto &positions = int64_feature(r, "masked_lm_positions"), &masked = int64_feature(r, "masked_lm_ids");
  const auto& labels = int64_feature(r, "next_sentence_labels");
  if (ids.size() != mask.size() || ids.size() != segments.size())
    fail("{}: input_ids, input_mask and segment_ids have {}, {} and {} values", r.where, ids.size(), mask.size(), segments.size());
  if (positions.size() != masked.size())
    fail("{}: masked_lm_positions has {} values but masked_lm_ids {}", r.where, positions.size(), masked.size());
  if (labels.size() != 1) fail("{}: next_sentence_labels has {} values, expected 1", r.where, labels.size());
  size_t length = 0;
  while (length < mask.size() && mask[length] == 1) ++length;
  for (size_t i = length; i < mask.size(); ++i)
    if (mask[i] != 0) fail("{}: input_mask is not a run of 1s followed by 0s (value {} at {})", r.where, mask[i], i);
  if (length > max_len) fail("{}: {} tokens, more than the {} of --max-seq-length", r.where, length, max_len);
  size_t predictions = 0;
  if (const Feature* w = e.find("masked_lm_weights"); w && w->is_float()) {
    while (predictions < w->floats().size() && w->floats()[predictions] != 0.0f) ++predictions;
    predictions = std::min(predictions, positions.size());
  } else {
    while (predictions < positions.size() && positions[predictions] != 0) ++predictions;
  }
  if (predictions > max_preds) fail("{}: {} predictions, more than the {} of --max-predictions", r.where, predictions, max_preds);
  PretrainSample s;
  narrow(r, "input_ids", ids, length, s.input_ids);
  narrow(r, "segment_ids", segments, length, s.segment_ids);
  narrow(r, "masked_lm_positions", positions, predictions, s.masked_lm_positions);
  narrow(r, "masked_lm_ids", masked, predictions, s.masked_lm_ids);
  std::vector<int32_t> label;
  narrow(r, "next_sentence_labels", labels, 1, label);
  s.next_sentence_label = label[0];
  if (std::string problem = check_sample(s); !problem.empty()) fail("{}: {}", r.where, problem);
  return s;
}

void write_pretraining(RecordStream& stream, Record& first, const Tfrecord2hdf5Config& cfg, Hdf5Layout layout,
                       const std::string& path) {
  PretrainWriterOptions options;
  options.layout = layout;
  options.seq_len = row_width(first, "input_ids", cfg.max_seq_length, "--max-seq-length");
  options.max_predictions = row_width(first, "masked_lm_positions", cfg.max_predictions, "--max-predictions");
  options.gzip_level = cfg.gzip_level;
  options.overwrite = cfg.force;
  PretrainWriter writer(path, options);
  Record* record = &first;
  do {
    writer.append(to_sample(*record, static_cast<size_t>(options.seq_len), static_cast<size_t>(options.max_predictions)));
    record = &first;  // reuse the storage for the next record
  } while (stream.next(*record));
  writer.commit();
}

void write_generic(RecordStream& stream, Record& first, const Tfrecord2hdf5Config& cfg, const std::string& path) {
  // Columns from the first record, by name so that map order does not matter.
  if (first.example.size() == 0) fail("{}: the record has no features; its columns cannot be inferred", first.where);
  std::vector<Feature> features = first.example.features();
  std::sort(features.begin(), features.end(), [](const Feature& a, const Feature& b) { return a.name < b.name; });
  std::vector<Hdf5ColumnWriter::ColumnSpec> specs;
  for (const auto& f : features) {
    if (f.is_int64()) specs.push_back({f.name, Hdf5ColumnWriter::Kind::int64, f.int64s().size()});
    else if (f.is_float()) specs.push_back({f.name, Hdf5ColumnWriter::Kind::float32, f.floats().size()});
    else fail("{}: feature {} is not an int64 or float list; only those convert to HDF5 columns", first.where,
                 printable_excerpt(f.name));
    if (specs.back().width == 0) fail("{}: feature {} is empty; its column width cannot be inferred", first.where,
                                            printable_excerpt(f.name));
  }
  Hdf5ColumnWriter writer(path, specs, cfg.gzip_level, cfg.force);
  Record& record = first;
  do {
    if (record.example.size() != specs.size())
      fail("{}: {} features, but the first record has {}", record.where, record.example.size(), specs.size());
    for (size_t c = 0; c < specs.size(); ++c) {
      const Feature* f = record.example.find(specs[c].name);
      if (!f) fail("{}: no feature {} (the first record has it)", record.where, printable_excerpt(specs[c].name));
      size_t width = f->is_int64() ? f->int64s().size() : f->is_float() ? f->floats().size() : 0;
      bool kind_ok = specs[c].kind == Hdf5ColumnWriter::Kind::int64 ? f->is_int64() : f->is_float();
      if (!kind_ok || width != specs[c].width)
        fail("{}: feature {} has {} {} values, but the first record has {} {}", record.where, printable_excerpt(specs[c].name), width,
             kind_name(*f), specs[c].width,
             specs[c].kind == Hdf5ColumnWriter::Kind::int64 ? "int64" : "float");
      if (f->is_int64()) writer.set_int64(c, f->int64s().data());
      else writer.set_float(c, f->floats().data());
    }
    writer.end_row();
  } while (stream.next(record));
  writer.commit();
}

// Converts `inputs` into one HDF5 file at `path`.
void convert(const std::vector<std::string>& inputs, const std::string& path, const Tfrecord2hdf5Config& cfg,
             Tfrecord2hdf5Stats& stats, ProgressCount& count) {
  RecordStream stream(inputs, cfg.skip_corrupt, count);
  Record first;
  if (!stream.next(first)) fail("{}: no records", inputs.size() == 1 ? inputs[0] : "the inputs");
  std::string layout = cfg.layout;
  if (layout == "auto") layout = is_pretraining(first.example) ? "nvidia" : "generic";
  if (layout == "generic") {
    write_generic(stream, first, cfg, path);
  } else {
    if (!is_pretraining(first.example))
      fail("{}: not a pretraining record (it needs input_ids, input_mask, segment_ids, masked_lm_positions, "
           "masked_lm_ids, next_sentence_labels); use --layout generic", first.where);
    write_pretraining(stream, first, cfg, layout == "varlength" ? Hdf5Layout::varlength : Hdf5Layout::nvidia, path);
  }
  stats.records += stream.records();
  stats.skipped += stream.skipped();
  stats.bytes += stream.bytes();
  ++stats.outputs;
}

}  // namespace

void Tfrecord2hdf5Config::validate() const {
  if (max_seq_length < 0 || max_predictions < 0) usage_fail("--max-seq-length and --max-predictions must be >= 0");
  if (gzip_level < 0 || gzip_level > 9) usage_fail("--gzip must be 0-9, got {}", gzip_level);
  if (layout != "auto" && layout != "nvidia" && layout != "varlength" && layout != "generic")
    usage_fail("--layout must be auto, nvidia, varlength or generic, got '{}'", layout);
  if (inputs.empty()) usage_fail("no input files");
  if (output.empty() == output_dir.empty()) usage_fail("give either -o FILE or --output-dir DIR");
  if (output_dir.empty()) refuse_stdout_output(output, "HDF5 output", kHdf5NeedsFile, "part-00000.hdf5");
  if (output_dir == "-")
    usage_fail("--output-dir -: the output is a directory of HDF5 files, not stdout; give a directory name");
  if (!output_dir.empty() && std::count(inputs.begin(), inputs.end(), "-") > 0)
    usage_fail("--output-dir needs file inputs to name its outputs; use -o for stdin");
  refuse_output_over_inputs("-o", output, OutputKind::file, inputs);
}

Tfrecord2hdf5Stats run_tfrecord2hdf5(const Tfrecord2hdf5Config& cfg) {
  cfg.validate();
  Progress progress(cfg.quiet);
  uint64_t total = 0;
  for (const auto& in : cfg.inputs) {
    std::error_code ec;
    if (in != "-" && std::filesystem::is_regular_file(in, ec)) total += std::filesystem::file_size(in, ec);
  }
  progress.set_total(total);
  ProgressCount count{progress};
  Tfrecord2hdf5Stats stats;
  if (!cfg.output.empty()) {
    check_hdf5_output(cfg.output, cfg.force);  // refuse before converting anything
    convert(cfg.inputs, cfg.output, cfg, stats, count);
  } else {
    namespace fs = std::filesystem;
    std::vector<std::string> outputs;
    for (const auto& in : cfg.inputs) {
      std::string name = fs::path(in).filename().string();
      for (const char* ext : {".gz", ".bz2", ".xz", ".zst", ".tfrecord", ".tf_record", ".tfrecords", ".tfrec"})
        if (name.size() > std::string_view(ext).size() && name.ends_with(ext)) name.resize(name.size() - std::string_view(ext).size());
      outputs.push_back((fs::path(cfg.output_dir) / (name + ".hdf5")).string());
      refuse_output_over_inputs("--output-dir", outputs.back(), OutputKind::file, cfg.inputs);
      if (std::count(outputs.begin(), outputs.end(), outputs.back()) > 1)
        fail("{} and another input would both write {}", in, outputs.back());
      check_hdf5_output(outputs.back(), cfg.force);  // refuse before converting anything
    }
    // All outputs or none: each written into a staging directory in DIR (made if missing, and removed again if the
    // run fails) and renamed into place together once every input has converted.
    StagedFiles staged;
    try {
      std::vector<std::string> staged_paths;
      for (const std::string& output : outputs) staged_paths.push_back(staged.stage(output));
      for (size_t i = 0; i < cfg.inputs.size(); ++i) convert({cfg.inputs[i]}, staged_paths[i], cfg, stats, count);
      staged.commit();
    } catch (const Error& e) {
      throw Error(staged.as_destination(e.what()));  // an output as the user knows it, not its staging name
    }
  }
  progress.finish(stats.bytes, fmt::format("{} records{}, {} output file{}", stats.records,
                                           stats.skipped ? fmt::format(" ({} corrupt skipped)", stats.skipped) : "",
                                           stats.outputs, stats.outputs == 1 ? "" : "s"));
  return stats;
}

}  // namespace bk
