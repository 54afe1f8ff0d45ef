#include "wiki/article.h"

#include "wiki/markup.h"

#include <nlohmann/json.hpp>

namespace bk {
namespace {

void append_attribute_escaped(std::string_view s, std::string& out) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
}

}  // namespace

bool parse_wiki_format(std::string_view name, WikiOutputFormat& format) {
  if (name == "text") format = WikiOutputFormat::text;
  else if (name == "jsonl") format = WikiOutputFormat::jsonl;
  else if (name == "wikiextractor") format = WikiOutputFormat::wikiextractor;
  else return false;
  return true;
}

const char* article_skip_reason(const WikiPage& page, bool keep_disambiguation) {
  if (page.ns != 0) return "namespace";
  if (page.redirect) return "redirect";
  if (!keep_disambiguation && is_disambiguation(page.title, page.text)) return "disambiguation";
  return nullptr;
}

bool article_long_enough(const std::vector<std::string>& paragraphs, size_t min_chars) {
  size_t chars = 0;
  for (const auto& p : paragraphs) chars += p.size() + 1;
  return !paragraphs.empty() && chars - 1 >= min_chars;
}

bool format_article(const WikiPage& page, const std::vector<std::string>& paragraphs, WikiOutputFormat format,
                    size_t min_chars, const std::string& url_base, std::string& out) {
  if (!article_long_enough(paragraphs, min_chars)) return false;
  size_t chars = 0;
  for (const auto& p : paragraphs) chars += p.size() + 1;
  switch (format) {
    case WikiOutputFormat::text:
      // The document format of text/documents.h: one paragraph per line, a blank line after the article.
      for (const auto& p : paragraphs) out.append(p).push_back('\n');
      out.push_back('\n');
      break;
    case WikiOutputFormat::jsonl: {
      nlohmann::ordered_json record;
      record["id"] = std::to_string(page.id);
      record["title"] = page.title;
      std::string text;
      text.reserve(chars);
      for (size_t i = 0; i < paragraphs.size(); ++i) {
        if (i) text.push_back('\n');
        text += paragraphs[i];
      }
      record["text"] = std::move(text);
      out += record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      out.push_back('\n');
      break;
    }
    case WikiOutputFormat::wikiextractor:
      // WikiExtractor 3's layout: header, title, blank line, paragraphs, blank line, footer.
      out += "<doc id=\"";
      out += std::to_string(page.id);
      out += "\" url=\"";
      append_attribute_escaped(url_base, out);
      out += "?curid=";
      out += std::to_string(page.id);
      out += "\" title=\"";
      append_attribute_escaped(page.title, out);
      out += "\">\n";
      out += page.title;
      out += "\n\n";
      for (const auto& p : paragraphs) out.append(p).push_back('\n');
      out += "\n</doc>\n";
      break;
  }
  return true;
}

std::string wiki_url_base(const std::string& base) {
  size_t slash = base.rfind('/');
  if (base.empty() || slash == std::string::npos || slash < 8) return "https://en.wikipedia.org/wiki";
  return base.substr(0, slash);
}

}  // namespace bk
