// The sent-seg tool: documents of paragraphs in (the wiki-clean text format, JSON lines, a document per line, or
// hard-wrapped text: text/document_formats.h), documents of sentences out (one per line, a blank line after each
// document: the input format of google-research/bert create_pretraining_data.py). Document boundaries are kept
// exactly and a sentence never spans two paragraphs.
#pragma once

#include "seg/segmenter.h"
#include "text/document_formats.h"

#include <string>
#include <vector>

namespace bk {

struct SentSegConfig {
  std::vector<std::string> inputs;  // none = stdin, unless it is a terminal (io/input.h's input_or_stdin); "-" = stdin
  DocumentFormat document_format;
  std::string output = "-";
  bool force = false;
  bool quiet = false;
  int threads = 1;                 // 0 = all hardware threads
  size_t batch_bytes = 256 << 10;  // input bytes per parallel work item
  SentenceSegmenterOptions segmenter;

  // bk::UsageError naming the flag for a value no run can use.
  void validate() const;
};

struct SentSegStats {
  uint64_t documents = 0, paragraphs = 0, sentences = 0, bytes_in = 0, bytes_out = 0;
  // An input of many paragraphs that gave one document (the wrong --input-format, most likely), one line each.
  std::vector<std::string> warnings;
};

// Runs the whole tool, the config validated first; throws bk::Error (with file and line) on bad input or I/O
// failure.
SentSegStats run_sent_seg(const SentSegConfig& config);

}  // namespace bk
