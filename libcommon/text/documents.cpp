#include "text/documents.h"

#include "util/error.h"
#include "util/utf8.h"

namespace bk {

size_t Document::bytes() const {
  size_t total = 1;
  for (const auto& l : lines) total += l.size() + 1;
  return total;
}

bool DocumentReader::next(Document& doc) {
  doc.lines.clear();
  std::string_view line;
  while (lines_.next(line)) {
    if (is_blank_line(line)) {
      if (!doc.lines.empty()) return true;
      continue;
    }
    if (size_t bad = utf8_invalid_offset(line); bad != std::string_view::npos)
      fail("{}: line {}: invalid UTF-8 at column {}", lines_.input().name(), lines_.line_number(), bad + 1);
    if (doc.lines.empty()) doc.first_line = lines_.line_number();
    doc.lines.emplace_back(line);
  }
  return !doc.lines.empty();
}

void write_document(Output& out, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  for (const auto& l : lines) {
    out.write(l);
    out.put('\n');
  }
  out.put('\n');
}

}  // namespace bk
