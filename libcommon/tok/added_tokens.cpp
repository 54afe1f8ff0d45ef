#include "tok/added_tokens.h"

#include "util/utf8.h"

#include <unicode/uchar.h>

#include <algorithm>

namespace bk {
namespace {

// Rust regex's Unicode \w: alphabetic, marks, decimal digits, connector punctuation, join controls.
bool is_word_char(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(u, UCHAR_ALPHABETIC) || u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL)) return true;
  return (U_GET_GC_MASK(u) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool is_white_space(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

// The code point that ends text[0, end) (end > 0; text is valid UTF-8), and where it starts.
char32_t code_point_before(std::string_view text, size_t end, size_t& start) {
  start = end - 1;
  while (start > 0 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
  size_t pos = start;
  return next_code_point(text, pos);
}

bool ends_with_word(std::string_view text, size_t end) {
  size_t start;
  return end > 0 && is_word_char(code_point_before(text, end, start));
}

bool starts_with_word(std::string_view text, size_t pos) {
  return pos < text.size() && is_word_char(next_code_point(text, pos));
}

// Where the white space that ends text[0, end) begins.
size_t white_space_before(std::string_view text, size_t end) {
  size_t start;
  while (end > 0 && is_white_space(code_point_before(text, end, start))) end = start;
  return end;
}

// Where the white space that starts text[pos, ...) ends.
size_t white_space_after(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    size_t next = pos;
    if (!is_white_space(next_code_point(text, next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns)
    : tokens_(std::move(tokens)), patterns_(std::move(patterns)) {
  for (size_t i = 0; i < patterns_.size(); ++i) {
    if (patterns_[i].empty()) continue;
    by_first_byte_[static_cast<uint8_t>(patterns_[i][0])].push_back(static_cast<int>(i));
    starts_pattern_[static_cast<uint8_t>(patterns_[i][0])] = true;
  }
  for (auto& bucket : by_first_byte_)
    std::stable_sort(bucket.begin(), bucket.end(),
                     [&](int a, int b) { return patterns_[a].size() > patterns_[b].size(); });
}

int AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  for (int i : by_first_byte_[static_cast<uint8_t>(text[pos])])
    if (text.substr(pos).starts_with(patterns_[i])) return i;
  return -1;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<TextSegment>& out) const {
  size_t done = 0;  // text before this is in `out`
  const auto emit_text = [&](size_t end) {
    if (end > done) out.push_back({text.substr(done, end - done), -1});
  };
  if (!empty()) {
    for (size_t pos = 0; pos < text.size();) {
      if (!starts_pattern_[static_cast<uint8_t>(text[pos])]) {
        ++pos;
        continue;
      }
      const int match = longest_at(text, pos);
      if (match < 0) {
        ++pos;
        continue;
      }
      const AddedToken& token = tokens_[match];
      size_t start = pos, stop = pos + patterns_[match].size();
      pos = stop;  // the search goes on after this match, kept or not
      if (token.single_word && (ends_with_word(text, start) || starts_with_word(text, stop))) continue;
      if (token.lstrip) start = std::max(white_space_before(text, start), done);
      if (token.rstrip) stop = white_space_after(text, stop);
      emit_text(start);
      out.push_back({text.substr(start, stop - start), token.id});
      done = pos = stop;
    }
  }
  emit_text(text.size());
}

}  // namespace bk
