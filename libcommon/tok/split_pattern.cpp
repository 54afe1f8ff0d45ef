#include "tok/split_pattern.h"

#include "util/utf8.h"

#include <unicode/uchar.h>

#include <array>
#include <memory>

namespace bk {
namespace {

constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kCl100k =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum CharClass : uint8_t { kLetter, kNumber, kSpace, kOther };

CharClass classify_with_icu(char32_t c) {
  if (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE)) return kSpace;
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  if (mask & U_GC_L_MASK) return kLetter;
  if (mask & U_GC_N_MASK) return kNumber;
  return kOther;
}

// The class of every BMP code point, computed once; the other planes ask ICU.
const std::array<uint8_t, 0x10000>& bmp_classes() {
  static const auto table = [] {
    auto t = std::make_unique<std::array<uint8_t, 0x10000>>();
    for (char32_t c = 0; c < 0x10000; ++c) (*t)[c] = classify_with_icu(c);
    return t;
  }();
  return *table;
}

// A cursor over the text that reads one code point and its class at a time.
struct Scanner {
  std::string_view text;
  const std::array<uint8_t, 0x10000>& classes = bmp_classes();

  struct Char {
    char32_t c = 0;
    CharClass cls = kOther;
    size_t end = 0;  // offset after it
  };
  // The character at pos (pos < text.size()).
  Char at(size_t pos) const {
    const auto b = static_cast<uint8_t>(text[pos]);
    if (b < 0x80) return {b, static_cast<CharClass>(classes[b]), pos + 1};
    size_t end = pos;
    const char32_t c = next_code_point(text, end);
    return {c, c < 0x10000 ? static_cast<CharClass>(classes[c]) : classify_with_icu(c), end};
  }
  bool is(size_t pos, CharClass cls) const { return pos < text.size() && at(pos).cls == cls; }
  // The end of the run of `cls` characters starting at pos (pos itself when there is none), at most `limit` long.
  size_t run(size_t pos, CharClass cls, size_t limit = SIZE_MAX) const {
    if (limit == SIZE_MAX) {  // most text is ASCII: a byte and a table lookup per character until it is not
      while (pos < text.size()) {
        const auto b = static_cast<uint8_t>(text[pos]);
        if (b >= 0x80) break;
        if (classes[b] != cls) return pos;
        ++pos;
      }
    }
    for (size_t n = 0; n < limit && pos < text.size(); ++n) {
      const Char ch = at(pos);
      if (ch.cls != cls) break;
      pos = ch.end;
    }
    return pos;
  }
};

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// The end of a contraction ('s 't 're 've 'm 'll 'd) at pos, or pos. `fold`: ASCII case-insensitive, with the long
// s (U+017F), which Unicode case folding makes an s.
size_t contraction(std::string_view text, size_t pos, bool fold) {
  if (text[pos] != '\'') return pos;
  const std::string_view rest = text.substr(pos + 1);
  static constexpr std::array<std::string_view, 7> kSuffixes = {"s", "t", "re", "ve", "m", "ll", "d"};
  for (std::string_view suffix : kSuffixes) {
    if (rest.size() < suffix.size()) continue;
    bool same = true;
    for (size_t i = 0; i < suffix.size() && same; ++i) same = (fold ? ascii_lower(rest[i]) : rest[i]) == suffix[i];
    if (same) return pos + 1 + suffix.size();
    if (fold && suffix == "s" && rest.starts_with("\xC5\xBF")) return pos + 3;
  }
  return pos;
}

// \s+(?!\S)|\s+ at a space character: the whole run when it ends the text or one more space follows, else the run
// without its last character, which then starts the next piece (" ?\p{L}+" takes it with the word).
size_t space_run(const Scanner& s, size_t pos) {
  size_t end = pos, last = pos;
  while (end < s.text.size()) {
    const Scanner::Char ch = s.at(end);
    if (ch.cls != kSpace) break;
    last = end;
    end = ch.end;
  }
  if (end == s.text.size() || last == pos) return end;
  return last;
}

size_t next_gpt2(const Scanner& s, size_t pos) {
  if (size_t end = contraction(s.text, pos, false); end != pos) return end;
  const Scanner::Char first = s.at(pos);
  size_t start = pos;
  CharClass cls = first.cls;
  if (first.c == ' ' && first.end < s.text.size()) {
    const CharClass next = s.at(first.end).cls;
    if (next != kSpace) {
      start = first.end;
      cls = next;
    }
  }
  if (cls == kSpace) return space_run(s, pos);
  return s.run(start, cls);
}

bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }

size_t next_cl100k(const Scanner& s, size_t pos) {
  if (size_t end = contraction(s.text, pos, true); end != pos) return end;
  const Scanner::Char first = s.at(pos);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (first.cls == kLetter) return s.run(pos, kLetter);
  if (first.cls != kNumber && !is_newline(first.c) && s.is(first.end, kLetter)) return s.run(first.end, kLetter);
  // \p{N}{1,3}
  if (first.cls == kNumber) return s.run(pos, kNumber, 3);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const size_t others = first.c == ' ' && s.is(first.end, kOther) ? first.end : pos;
  if (s.is(others, kOther)) {
    size_t end = s.run(others, kOther);
    while (end < s.text.size() && is_newline(static_cast<unsigned char>(s.text[end]))) ++end;
    return end;
  }
  // \s*[\r\n]+ : up to the run's last newline
  size_t end = pos, after_newline = pos;
  while (end < s.text.size()) {
    const Scanner::Char ch = s.at(end);
    if (ch.cls != kSpace) break;
    end = ch.end;
    if (is_newline(ch.c)) after_newline = end;
  }
  if (after_newline != pos) return after_newline;
  return space_run(s, pos);
}

}  // namespace

std::optional<SplitPattern> recognize_split_pattern(std::string_view regex) {
  if (regex == kGpt2) return SplitPattern::gpt2;
  if (regex == kCl100k) return SplitPattern::cl100k;
  return std::nullopt;
}

const char* split_pattern_regex(SplitPattern pattern) { return pattern == SplitPattern::gpt2 ? kGpt2 : kCl100k; }

void split_by_pattern(SplitPattern pattern, std::string_view text, std::vector<std::string_view>& pieces) {
  const Scanner scanner{text};
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = pattern == SplitPattern::gpt2 ? next_gpt2(scanner, pos) : next_cl100k(scanner, pos);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
}

}  // namespace bk
