// Documents from text that is not already in the document format (text/documents.h): the corpora users bring.
//
//   text   the document format: one paragraph per line, a blank line after every document (wiki-clean's output);
//   jsonl  one JSON object per line, the document in a string field (--text-field, default "text"), as HF datasets,
//          the Pile and most web corpora ship them; its newlines end paragraphs, blank lines are skipped;
//   lines  one document per line, the line its one paragraph (a sentence-per-line dump, a one-document-a-line file).
//
// unwrap joins hard-wrapped lines (man pages, the text of PDFs, e-mails) into paragraphs: a blank line ends a
// paragraph, a line break inside one becomes a space. With text, each input file is then one document, since blank
// lines no longer end documents; with jsonl it applies inside each document's text. Torch-free.
#pragma once

#include "io/input.h"
#include "text/documents.h"
#include "util/choices.h"

#include <optional>
#include <string>
#include <vector>

namespace bk {

enum class TextFormat { text, jsonl, lines };
inline constexpr Choice<TextFormat> kTextFormats[] = {
    {"text", TextFormat::text}, {"jsonl", TextFormat::jsonl}, {"lines", TextFormat::lines}};

struct DocumentFormat {
  TextFormat format = TextFormat::text;
  std::string text_field = "text";  // jsonl: the field holding each document
  bool unwrap = false;
};

// bk::UsageError for a combination no run can use (--unwrap with lines, another --text-field without jsonl).
void validate_document_format(const DocumentFormat& format);

// Reads the documents of one input in `format`. Errors (invalid UTF-8, a line that is not a JSON object, a missing
// or non-string field) name the input and its line.
class FormattedDocumentReader {
 public:
  FormattedDocumentReader(Input& input, const DocumentFormat& format);
  bool next(Document& doc);  // false at the end of the input; a document is never empty
  uint64_t bytes_read() const { return input_.offset(); }

 private:
  bool next_text(Document& doc);
  bool next_unwrapped_file(Document& doc);
  bool next_line(Document& doc);
  bool next_json(Document& doc);
  void check_utf8(std::string_view line) const;

  Input& input_;
  DocumentFormat format_;
  std::optional<DocumentReader> documents_;  // the text format, as every tool reads it
  std::optional<LineReader> lines_;          // the others
  bool file_done_ = false;
};

// The paragraphs of a document's text: its lines (blank ones dropped), or with `unwrap` its blank-line-separated
// blocks with each block's lines joined by a space. White space at the ends of a paragraph is trimmed.
std::vector<std::string> text_paragraphs(std::string_view text, bool unwrap);

}  // namespace bk
