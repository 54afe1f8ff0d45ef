// The document text format shared by wiki-clean (writer), sent-seg (reader and writer), shard and mkpretrain:
// UTF-8, LF line ends, one paragraph (or sentence) per line, and a blank line after every document. One or more
// blank (or whitespace-only) lines end a document, so `cat a.txt b.txt` keeps every boundary; a document is never
// empty. This is the input format of google-research/bert create_pretraining_data.py.
#pragma once

#include "io/input.h"
#include "io/output.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct Document {
  std::vector<std::string> lines;  // never blank
  uint64_t first_line = 0;         // 1-based line number in the input, for error messages
  size_t bytes() const;            // size as written, including newlines and the closing blank line
};

class DocumentReader {
 public:
  // Invalid UTF-8 is an error naming the file and line.
  explicit DocumentReader(Input& input) : lines_(input) {}
  bool next(Document& doc);  // false at the end of the input
  uint64_t bytes_read() const { return lines_.input().offset(); }

 private:
  LineReader lines_;
};

void write_document(Output& out, const std::vector<std::string>& lines);

}  // namespace bk
