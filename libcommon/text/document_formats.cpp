#include "text/document_formats.h"

#include "util/error.h"
#include "util/json_read.h"
#include "util/utf8.h"

#include <fmt/format.h>

namespace bk {

void validate_document_format(const DocumentFormat& format) {
  if (format.unwrap && format.format == TextFormat::lines)
    usage_fail("--unwrap joins a paragraph's lines; with --input-format lines every line is a document");
  if (format.text_field != DocumentFormat().text_field && format.format != TextFormat::jsonl)
    usage_fail("--text-field names a JSON field: give --input-format jsonl");
  if (format.text_field.empty()) usage_fail("--text-field must name a field");
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> text_paragraphs(std::string_view text, bool unwrap) {
  std::vector<std::string> paragraphs;
  std::string joined;
  auto end_paragraph = [&] {
    if (!joined.empty()) paragraphs.push_back(std::move(joined));
    joined.clear();
  };
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (is_blank_line(line)) {
      end_paragraph();
    } else if (!unwrap) {
      paragraphs.emplace_back(line);
    } else {
      if (!joined.empty()) joined += ' ';
      joined += line;
    }
  }
  end_paragraph();
  return paragraphs;
}

FormattedDocumentReader::FormattedDocumentReader(Input& input, const DocumentFormat& format)
    : input_(input), format_(format) {
  if (format.format == TextFormat::text && !format.unwrap) documents_.emplace(input);
  else lines_.emplace(input);
}

bool FormattedDocumentReader::next(Document& doc) {
  doc.lines.clear();
  switch (format_.format) {
    case TextFormat::text: return format_.unwrap ? next_unwrapped_file(doc) : documents_->next(doc);
    case TextFormat::lines: return next_line(doc);
    case TextFormat::jsonl: return next_json(doc);
  }
  return false;
}

void FormattedDocumentReader::check_utf8(std::string_view line) const {
  if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
    fail("{}: line {}: invalid UTF-8 at column {}", input_.name(), lines_->line_number(), bad + 1);
}

// The whole input as one document of unwrapped paragraphs.
bool FormattedDocumentReader::next_unwrapped_file(Document& doc) {
  if (file_done_) return false;
  file_done_ = true;
  std::string text;
  std::string_view line;
  while (lines_->next(line)) {
    check_utf8(line);
    if (doc.first_line == 0 && !is_blank_line(line)) doc.first_line = lines_->line_number();
    text.append(line).push_back('\n');
  }
  doc.lines = text_paragraphs(text, true);
  return !doc.lines.empty();
}

bool FormattedDocumentReader::next_line(Document& doc) {
  std::string_view line;
  while (lines_->next(line)) {
    if (is_blank_line(line)) continue;
    check_utf8(line);
    doc.first_line = lines_->line_number();
    doc.lines.emplace_back(trimmed(line));
    return true;
  }
  return false;
}

bool FormattedDocumentReader::next_json(Document& doc) {
  std::string_view line;
  while (lines_->next(line)) {
    if (is_blank_line(line)) continue;
    const std::string where = fmt::format("{}: line {}", input_.name(), lines_->line_number());
    const nlohmann::json object = parse_json(line, where);
    if (!object.is_object()) fail("{}: not a JSON object (--input-format jsonl: one object per line)", where);
    const auto field = object.find(format_.text_field);
    if (field == object.end())
      fail("{}: no field \"{}\" (--text-field names the one holding the text)", where, format_.text_field);
    if (!field->is_string()) fail("{}: field \"{}\" is {}, not a string", where, format_.text_field, field->type_name());
    const std::string& text = field->get_ref<const std::string&>();
    if (size_t bad = utf8_invalid_offset(text); bad != std::string_view::npos)
      fail("{}: field \"{}\": invalid UTF-8 at byte {} of its text", where, format_.text_field, bad);
    doc.lines = text_paragraphs(text, format_.unwrap);
    if (doc.lines.empty()) continue;  // an empty text is no document
    doc.first_line = lines_->line_number();
    return true;
  }
  return false;
}

}  // namespace bk
