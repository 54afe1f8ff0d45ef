#include "seg/sent_seg.h"

#include "io/output_over_input.h"
#include "util/error.h"
#include "io/progress.h"
#include "io/input.h"
#include "io/output.h"
#include "text/documents.h"
#include "util/ordered_parallel.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>

namespace bk {

namespace {

struct Batch {
  std::vector<Document> documents;
};

struct SegmentedBatch {
  std::vector<std::vector<std::string>> documents;  // sentences per document
  uint64_t paragraphs = 0, sentences = 0, bytes_in = 0;
};

SegmentedBatch segment_batch(SentenceSegmenter& segmenter, const Batch& batch) {
  SegmentedBatch result;
  result.documents.resize(batch.documents.size());
  for (size_t i = 0; i < batch.documents.size(); ++i) {
    const Document& doc = batch.documents[i];
    auto& sentences = result.documents[i];
    for (const std::string& paragraph : doc.lines) segmenter.split(paragraph, sentences);
    result.paragraphs += doc.lines.size();
    result.sentences += sentences.size();
    result.bytes_in += doc.bytes();
  }
  return result;
}

}  // namespace

void SentSegConfig::validate() const {
  if (threads < 0) usage_fail("--threads must be 0 (all cores) or positive, got {}", threads);
  static const std::regex kLang("[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*");
  if (!std::regex_match(segmenter.lang, kLang))
    usage_fail("--lang expects a locale such as en or de_CH, got '{}'", segmenter.lang);
  validate_document_format(document_format);
  if (std::count(inputs.begin(), inputs.end(), "-") > 1) usage_fail("stdin (-) can be given only once");
  if (inputs.empty()) input_or_stdin("", "a text file");
  refuse_output_over_inputs("-o", output, OutputKind::file, inputs);
}

namespace {

// The inputs one after the other, as one stream of documents; what each gave, for the warnings.
class InputDocuments {
 public:
  InputDocuments(const SentSegConfig& config, int threads) : config_(config), threads_(threads) {
    names_ = config.inputs.empty() ? std::vector<std::string>{"-"} : config.inputs;
    for (const std::string& name : names_) {
      std::error_code ec;
      const uintmax_t size = name == "-" ? 0 : std::filesystem::file_size(name, ec);
      if (!ec) total_ += size;
    }
  }
  bool next(Document& doc) {
    while (true) {
      if (!reader_ && !open_next()) return false;
      if (reader_->next(doc)) {
        ++documents_, paragraphs_ += doc.lines.size();
        return true;
      }
      close_current();
    }
  }
  uint64_t raw_offset() const { return done_ + (input_ ? input_->raw_offset() : 0); }
  uint64_t bytes_read() const { return bytes_ + (reader_ ? reader_->bytes_read() : 0); }
  uint64_t total() const { return total_; }
  std::vector<std::string> warnings;

 private:
  bool open_next() {
    if (next_input_ >= names_.size()) return false;
    input_ = std::make_unique<Input>(names_[next_input_++], threads_);
    reader_ = std::make_unique<FormattedDocumentReader>(*input_, config_.document_format);
    documents_ = paragraphs_ = 0;
    return true;
  }
  void close_current() {
    // Many paragraphs and one document: JSON lines or a document per line read as the text format, or hard-wrapped
    // text whose blank lines were taken for document ends the other way round.
    if (documents_ == 1 && paragraphs_ > 100 && config_.document_format.format == TextFormat::text &&
        !config_.document_format.unwrap)
      warnings.push_back(fmt::format("{}: {} paragraphs made one document; for one document per line give "
                                     "--input-format lines, for JSON lines --input-format jsonl", input_->name(),
                                     paragraphs_));
    done_ += input_->raw_offset();
    bytes_ += reader_->bytes_read();
    reader_.reset();
    input_.reset();
  }

  const SentSegConfig& config_;
  int threads_;
  std::vector<std::string> names_;
  size_t next_input_ = 0;
  std::unique_ptr<Input> input_;
  std::unique_ptr<FormattedDocumentReader> reader_;
  uint64_t documents_ = 0, paragraphs_ = 0, done_ = 0, bytes_ = 0, total_ = 0;
};

}  // namespace

SentSegStats run_sent_seg(const SentSegConfig& config) {
  config.validate();
  const int threads = worker_threads(config.threads);
  SentenceSegmenter prototype(config.segmenter);
  InputDocuments reader(config, threads);
  Output output(config.output, config.force);
  Progress progress(config.quiet);
  progress.set_total(reader.total());  // the files as on disk, compressed or not; none for a pipe
  SentSegStats stats;
  std::mutex clone_mutex;

  auto produce = [&](Batch& batch) {
    size_t bytes = 0;
    Document doc;
    while (bytes < config.batch_bytes && reader.next(doc)) {
      bytes += doc.bytes();
      batch.documents.push_back(std::move(doc));
      doc = Document();
    }
    return !batch.documents.empty();
  };
  // With one thread the prototype does the work; otherwise every batch gets its own clone, because ICU
  // iterators are not thread-safe (cloning shares ICU's compiled rules, so it costs microseconds).
  auto work = [&](Batch& batch) {
    if (threads <= 1) return segment_batch(prototype, batch);
    std::unique_ptr<SentenceSegmenter> segmenter;
    {
      std::lock_guard<std::mutex> lock(clone_mutex);  // ICU does not promise concurrent clones of one iterator
      segmenter = prototype.clone();
    }
    return segment_batch(*segmenter, batch);
  };
  auto consume = [&](SegmentedBatch& result) {
    // A document whose every line is white space (Unicode spaces) has no sentence; it is dropped, because an
    // empty document cannot be written in this format.
    for (const auto& sentences : result.documents) {
      write_document(output, sentences);
      stats.documents += sentences.empty() ? 0 : 1;
    }
    stats.paragraphs += result.paragraphs;
    stats.sentences += result.sentences;
    stats.bytes_in += result.bytes_in;
    if (progress.wants_update())
      progress.update(reader.raw_offset(), fmt::format("{} documents, {} sentences", stats.documents, stats.sentences));
  };
  ordered_parallel<Batch, SegmentedBatch>(threads, produce, work, consume);
  output.commit();
  stats.bytes_out = output.bytes_written();
  stats.warnings = std::move(reader.warnings);
  if (!config.quiet)
    for (const std::string& warning : stats.warnings) print_warning(warning);
  progress.finish(reader.bytes_read(), fmt::format("{} documents, {} paragraphs, {} sentences", stats.documents,
                                                   stats.paragraphs, stats.sentences));
  return stats;
}

}  // namespace bk
