#include "pretraining_data/mkpretrain.h"

#include "io/output_over_input.h"
#include "util/error.h"
#include "util/tool_name.h"
#include "io/progress.h"
#include "pretraining_data/instance_record.h"
#include "hdf5/hdf5_handle.h"
#include "hdf5/hdf5_writer.h"
#include "tfrecord/tfrecord.h"
#include "io/input.h"
#include "io/line_batch.h"
#include "io/output.h"
#include "util/utf8.h"
#include "tok/full_tokenizer.h"
#include "tok/tokenizer_json.h"
#include "tok/vocab_fit.h"
#include "tok/vocab_stamp.h"
#include "util/ordered_parallel.h"
#include "util/fnv1a.h"

#include <fmt/format.h>

#include <filesystem>

namespace bk {
namespace {

// One batch of tokenized input lines, flat: line i is blank (a document boundary) or has the token ids
// ids[ends[i-1] .. ends[i]) (possibly none).
struct TokenizedLines {
  std::vector<int32_t> ids;
  std::vector<uint32_t> ends;
  std::vector<uint8_t> blank;
  UnknownCount unknown;
};

// Reads every input into one Corpus, as the reference's create_training_instances does: a line that is empty
// after Python's str.strip() starts a new document, a line whose tokens are empty is skipped, and documents run
// on across input files unless a blank line separates them.
Corpus read_corpus(const MkpretrainConfig& cfg, int threads, const TextTokenizer& text_tokenizer, Progress& progress, uint64_t& bytes,
                   uint64_t& lines_read, UnknownCount& unknown) {
  Corpus corpus;
  // English text makes about one token per 4 to 5 bytes: reserving one per 3 bytes of the regular input files
  // avoids copying the token array as it grows (pages never touched cost nothing).
  uint64_t file_bytes = 0;
  for (const auto& path : cfg.inputs) {
    std::error_code ec;
    if (path != "-" && std::filesystem::is_regular_file(path, ec)) file_bytes += std::filesystem::file_size(path, ec);
  }
  corpus.tokens.reserve(file_bytes / 3);
  // The share done counts the bytes read from the files (compressed ones too) against their sizes; stdin or a
  // pipe adds bytes but no size, so the percentage then stays below 100 until the end.
  progress.stage(cfg.inputs.size() > 1 ? fmt::format("reading {} files", cfg.inputs.size()) : "reading", file_bytes);
  uint64_t raw_before = 0;
  for (const auto& path : cfg.inputs) {
    Input input(path, cfg.threads);
    LineReader reader(input);
    auto produce = [&](LineBatch& batch) {  // on this thread, as consume is
      if (progress.wants_update())
        progress.update(raw_before + input.raw_offset(), fmt::format("{} documents", corpus.num_docs()));
      return read_line_batch(reader, batch);
    };
    auto work = [&](LineBatch& batch) {
      // One encoder per thread, kept for the next batch while the same tokenizer is in use (an encoder keeps its
      // tokenizer alive, so another one is never at the same address).
      thread_local std::unique_ptr<TextTokenizer::Encoder> tokenizer;
      thread_local const void* tokenizer_of = nullptr;
      if (!tokenizer || tokenizer_of != text_tokenizer.identity()) {
        tokenizer = std::make_unique<TextTokenizer::Encoder>(text_tokenizer);
        tokenizer_of = text_tokenizer.identity();
      }
      TokenizedLines out;
      out.ends.resize(batch.size());
      out.blank.resize(batch.size());
      for (size_t i = 0; i < batch.size(); ++i) {
        const std::string_view line = batch.line(i);
        if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
          fail("{}: line {}: invalid UTF-8 at column {}", batch.file, batch.first_line + i, bad + 1);
        // The reference tokenizes the stripped line; the edges matter to a byte-level BPE ("Ġ" pieces).
        const std::string_view stripped = python_strip(line);
        if (stripped.empty()) out.blank[i] = 1;
        else tokenizer->append(stripped, out.ids);
        out.ends[i] = static_cast<uint32_t>(out.ids.size());
      }
      out.unknown = tokenizer->take_unknown();
      return out;
    };
    auto consume = [&](TokenizedLines& lines) {
      unknown.add(lines.unknown);
      for (size_t i = 0, begin = 0; i < lines.ends.size(); begin = lines.ends[i], ++i) {
        if (lines.blank[i]) corpus.end_document();
        else if (lines.ends[i] > begin) corpus.add_sentence({lines.ids.data() + begin, lines.ends[i] - begin});
      }
    };
    ordered_parallel<LineBatch, TokenizedLines>(threads, produce, work, consume);
    bytes += input.offset();
    raw_before += input.raw_offset();
    lines_read += reader.line_number();
  }
  corpus.end_document();
  return corpus;
}


// How many instances ahead the writers ask for the tokens they will read.
constexpr size_t kPrefetchDistance = 4;

// Records are serialised and framed (CRCs included) in parallel chunks and written in order.
void write_tfrecord(const Corpus& corpus, const Instances& instances, const MaskingVocab& vocab,
                    const MkpretrainConfig& cfg, int threads, Progress& progress) {
  Output out(cfg.output, cfg.force);
  constexpr size_t kChunk = 2048;
  const size_t count = instances.list.size();
  size_t next = 0;
  ordered_parallel<std::pair<size_t, size_t>, std::pair<size_t, std::string>>(
      threads,
      [&](std::pair<size_t, size_t>& range) {
        if (next == count) return false;
        range = {next, std::min(count, next + kChunk)};
        next = range.second;
        return true;
      },
      [&](std::pair<size_t, size_t>& range) {
        thread_local InstanceTokens inst;
        std::string framed;
        // About what a record takes (ids of up to 3 bytes, two 1-byte columns, weights of 4): one allocation.
        const size_t L = static_cast<size_t>(cfg.instances.max_seq_length);
        const size_t P = static_cast<size_t>(cfg.instances.max_predictions);
        framed.reserve((range.second - range.first) * (5 * L + 10 * P + 256));
        for (size_t i = range.first; i < range.second; ++i) {
          prefetch_instance(corpus, instances, i + kPrefetchDistance);
          instance_tokens(corpus, instances, i, vocab, inst);
          const size_t start = open_tfrecord(framed);
          append_instance_record(inst, cfg.instances.max_seq_length, cfg.instances.max_predictions, framed);
          close_tfrecord(framed, start);
        }
        return std::make_pair(range.second, std::move(framed));
      },
      [&](std::pair<size_t, std::string>& chunk) {
        out.write(chunk.second);
        progress.update(chunk.first);
      });
  out.commit();
}

// --masking none: the original tokens back at the masked positions, the masks dropped, the sample's id set.
void unmask(PretrainSample& sample, int64_t id) {
  for (size_t k = 0; k < sample.masked_lm_positions.size(); ++k)
    sample.input_ids[static_cast<size_t>(sample.masked_lm_positions[k])] = sample.masked_lm_ids[k];
  sample.masked_lm_positions.clear();
  sample.masked_lm_ids.clear();
  sample.sample_id = id;
}

// The output's directory name and file name: "phase1/part_00001.hdf5".
std::string sample_id_key(const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(fs::absolute(output, ec), ec);
  return (where.parent_path().filename() / where.filename()).string();
}

void write_hdf5(const Corpus& corpus, const Instances& instances, const MaskingVocab& vocab,
                const MkpretrainConfig& cfg, const std::string& vocab_stamp, Progress& progress) {
  PretrainWriterOptions options;
  options.vocab_stamp = vocab_stamp;
  parse_layout(cfg.hdf5_layout, options.layout);  // a known name: validate() checked it
  options.seq_len = cfg.instances.max_seq_length;
  options.max_predictions = cfg.instances.max_predictions;
  options.gzip_level = cfg.gzip_level;
  options.overwrite = cfg.force;
  options.masked = !cfg.unmasked;
  PretrainWriter writer(cfg.output, options);
  // Unmasked samples' ids: a hash of the output's directory and name (phase1/part_00001.hdf5, however the path was
  // spelt) in the high 31 bits, the row in the low 32, so that the shards of one corpus, and the same shard names
  // of two phases, give their samples different masks.
  const uint64_t first_id = (fnv1a64(sample_id_key(cfg.output)) & 0x7fffffffull) << 32;
  InstanceTokens inst;
  PretrainSample sample;
  for (size_t i = 0; i < instances.list.size(); ++i) {
    prefetch_instance(corpus, instances, i + kPrefetchDistance);
    instance_tokens(corpus, instances, i, vocab, inst);
    sample.input_ids = inst.input_ids;
    sample.segment_ids.assign(inst.input_ids.size(), 1);
    std::fill_n(sample.segment_ids.begin(), inst.a_length + 2, 0);
    sample.masked_lm_positions = inst.masked_lm_positions;
    sample.masked_lm_ids = inst.masked_lm_ids;
    if (cfg.unmasked) unmask(sample, static_cast<int64_t>(first_id + i));
    sample.next_sentence_label = inst.is_random_next ? 1 : 0;
    writer.append(sample);
    progress.update(i + 1);
  }
  writer.commit();
}

// What a corpus that is not sentences in documents looks like: one document (JSON lines or a document per line
// read as the text format: sent-seg --input-format), or lines that are paragraphs or whole documents, far longer
// than any instance (over twice --max-seq-length, 1% of them or more: real sentences are that long far more
// rarely), which are cut. Lines on stderr, unless -q.
void warn_if_not_sentences(const Corpus& corpus, const MkpretrainConfig& cfg, int max_seq_length) {
  const std::string what = cfg.inputs.size() == 1 ? cfg.inputs[0] : "the inputs";
  const size_t sentences = corpus.sentence_begin.size() - 1;
  const InstanceConfig ic = cfg.instance_config();
  if (corpus.num_docs() == 1 && sentences > 1 && ic.next_sentence && !ic.full_sentences)
    print_warning(fmt::format("{}: one document of {} sentences: a blank line ends each document, and next-sentence "
                              "pairs need several (sent-seg --input-format jsonl or lines for other corpora)",
                              what, sentences));
  size_t longer = 0;
  uint64_t longest = 0;
  for (size_t i = 0; i < sentences; ++i) {
    const uint64_t length = corpus.sentence_begin[i + 1] - corpus.sentence_begin[i];
    longer += length > 2 * static_cast<uint64_t>(max_seq_length);
    longest = std::max(longest, length);
  }
  if (longer > 0 && longer * 100 >= sentences)
    print_warning(fmt::format("{}: {} of {} lines are over twice --max-seq-length {} tokens (the longest {}) and are "
                              "cut: give one sentence per line (sent-seg)", what, longer, sentences, max_seq_length,
                              longest));
}

}  // namespace

bool format_from_name(const std::string& path, PretrainFormat& format) {
  for (const char* ext : {".tfrecord", ".tf_record", ".tfrec", ".tfrecords"})
    if (path.ends_with(ext)) return format = PretrainFormat::tfrecord, true;
  for (const char* ext : {".hdf5", ".h5"})
    if (path.ends_with(ext)) return format = PretrainFormat::hdf5, true;
  return false;
}

void MkpretrainConfig::validate() const {
  if (threads < 0) usage_fail("--threads must be >= 0");
  if (!format.empty() && format != "tfrecord" && format != "hdf5")
    usage_fail("--format must be tfrecord or hdf5, got '{}'", format);
  if (gzip_level < 0 || gzip_level > 9) usage_fail("--gzip must be 0-9, got {}", gzip_level);
  const InstanceConfig ic = instance_config();
  if (ic.max_seq_length < 5) usage_fail("--max-seq-length must be at least 5, got {}", ic.max_seq_length);
  if (ic.max_predictions < 1) usage_fail("--max-predictions must be at least 1, got {}", ic.max_predictions);
  if (!(ic.masked_lm_prob > 0 && ic.masked_lm_prob <= 1)) usage_fail("--masked-lm-prob must be in (0, 1]");
  if (!(ic.short_seq_prob >= 0 && ic.short_seq_prob <= 1)) usage_fail("--short-seq-prob must be in [0, 1]");
  if (ic.dupe_factor < 1) usage_fail("--dupe-factor must be at least 1, got {}", ic.dupe_factor);
  if (inputs.empty()) usage_fail("no input files");
  if (ic.full_sentences && !unmasked)
    usage_fail("--full-sentences writes unmasked rows, for bert-train to mask at every epoch: add --masking none");
  if (unmasked && output_format() != PretrainFormat::hdf5)
    usage_fail("--masking none writes HDF5 (TFRecord readers expect masks): name an .hdf5 output or give --format hdf5");
  Hdf5Layout layout;
  if (output_format() == PretrainFormat::hdf5 && !parse_layout(hdf5_layout, layout))
    usage_fail("--layout must be nvidia or varlength");
  if (output_format() == PretrainFormat::hdf5)
    refuse_stdout_output(output, "HDF5 output", kHdf5NeedsFile, "part-00000.hdf5");
  const std::string tokenizer_path = tokenizer.path();
  if (tokenizer_path.empty()) usage_fail("give the vocabulary: --vocab FILE (WordPiece) or --tokenizer FILE (byte-level BPE)");
  std::vector<std::string> read = inputs;
  for (const std::string& path : tokenizer_file_paths(tokenizer_path)) read.push_back(path);
  refuse_output_over_inputs("-o", output, OutputKind::file, read);
}

InstanceConfig MkpretrainConfig::instance_config() const {
  InstanceConfig ic = instances;
  ic.dupe_factor = dupe_factor.value_or(unmasked ? 1 : 10);
  return ic;
}

PretrainFormat MkpretrainConfig::output_format() const {
  PretrainFormat resolved = PretrainFormat::tfrecord;
  if (format == "hdf5") resolved = PretrainFormat::hdf5;
  else if (format.empty()) format_from_name(output, resolved);
  return resolved;
}

size_t run_mkpretrain(const MkpretrainConfig& cfg) {
  cfg.validate();
  const InstanceConfig ic = cfg.instance_config();
  const PretrainFormat format = cfg.output_format();
  const int threads = worker_threads(cfg.threads);
  if (format == PretrainFormat::tfrecord) check_overwrite(cfg.output, cfg.force);
  else check_hdf5_output(cfg.output, cfg.force);  // before reading the corpus, not after

  Progress progress(cfg.quiet);
  const TextTokenizer tokenizer = TextTokenizer::load(cfg.tokenizer);
  if (tokenizer.wordpiece()) tokenizer.wordpiece()->require_unk();
  MaskingVocab masking = masking_vocab(tokenizer);
  PyRandom rng;
  rng.seed_words(py_seed_words(cfg.seed));

  uint64_t bytes = 0, lines = 0;
  UnknownCount unknown;
  Corpus corpus = read_corpus(cfg, threads, tokenizer, progress, bytes, lines, unknown);
  if (corpus.num_docs() == 0)
    fail("{}: no documents: the input has no line with tokens", cfg.inputs.size() == 1 ? cfg.inputs[0] : "the inputs");
  if (!cfg.quiet) warn_if_not_sentences(corpus, cfg, ic.max_seq_length);
  progress.stage("making instances");
  progress.update(0, fmt::format("{} documents, {} passes", corpus.num_docs(), ic.dupe_factor));
  const Instances instances = create_instances(corpus, ic, masking, rng);
  progress.stage("writing", instances.list.size(), "instances");
  if (format == PretrainFormat::tfrecord) write_tfrecord(corpus, instances, masking, cfg, threads, progress);
  else write_hdf5(corpus, instances, masking, cfg, tokenizer.stamp().text(), progress);
  // The unknown token's share, where the tokenizer can make one (a byte-level BPE model without unk_token cannot)
  const bool makes_unknown = !tokenizer.byte_level() || tokenizer.bpe()->model->unk_id() >= 0;
  const std::string unknown_share = makes_unknown ? ", " + unknown.summary() : "";
  progress.finish(bytes, fmt::format("{} documents, {} sentences, {} instances{}", corpus.num_docs(),
                                     corpus.sentence_begin.size() - 1, instances.list.size(), unknown_share));
  if (!cfg.quiet) tokenizer.warn_if_misfit(unknown);
  return instances.list.size();
}

}  // namespace bk
