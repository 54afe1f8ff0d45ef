#include "seg/sent_seg.h"

#include "io/output_over_input.h"
#include "util/error.h"
#include "io/progress.h"
#include "io/input.h"
#include "io/output.h"
#include "text/documents.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>

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
  input_or_stdin(input, "a text file");
  refuse_output_over_inputs("-o", output, OutputKind::file, {input});
}

SentSegStats run_sent_seg(const SentSegConfig& config) {
  config.validate();
  const int threads = worker_threads(config.threads);
  SentenceSegmenter prototype(config.segmenter);
  Input input(input_or_stdin(config.input, "a text file"), threads);
  DocumentReader reader(input);
  Output output(config.output, config.force);
  Progress progress(config.quiet);
  progress.set_total(input.raw_size());  // the file as on disk, compressed or not; none for a pipe
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
      progress.update(input.raw_offset(), fmt::format("{} documents, {} sentences", stats.documents, stats.sentences));
  };
  ordered_parallel<Batch, SegmentedBatch>(threads, produce, work, consume);
  output.commit();
  stats.bytes_out = output.bytes_written();
  progress.finish(reader.bytes_read(), fmt::format("{} documents, {} paragraphs, {} sentences", stats.documents,
                                                   stats.paragraphs, stats.sentences));
  return stats;
}

}  // namespace bk
