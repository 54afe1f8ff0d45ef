// The first half of BERT tokenization (google-research/bert BasicTokenizer at HEAD): text -> words.
//
// Per line, in this order:
//   1. clean: drop U+0000, U+FFFD and every Cc/Cf character except \t \n \r; \t \n \r ' ' and Zs are spaces.
//   2. every "Chinese" (CJK ideograph block) character becomes a word of its own.
//   3. split on whitespace as Python's str.split() does; after step 1 that adds U+2028 and U+2029.
//   4. uncased only: Python str.lower() of each whitespace token (full case mapping with the Final_Sigma
//      context, so "ΟΔΟΣ" -> "οδος" and U+0130 -> "i" + U+0307), then NFD, then drop every Mn character.
//   5. each punctuation character (ASCII 33-47, 58-64, 91-96, 123-126, and all of Unicode P*) is its own word.
// Lowercasing must see the whole whitespace token (the sigma rule looks at neighbours), so step 5 comes after.
//
// Pure-ASCII whitespace tokens take a table-driven path with no ICU call; any token holding a non-ASCII
// character is redone through ICU (u_strToLower with the root locale, the NFD Normalizer2, u_charType).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

// The words of one line, stored back to back: word i is bytes[ends[i-1] .. ends[i]).
struct LineWords {
  std::string bytes;
  std::vector<uint32_t> ends;

  void clear() {
    bytes.clear();
    ends.clear();
  }
  size_t size() const { return ends.size(); }
  std::string_view operator[](size_t i) const {
    uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(bytes).substr(begin, ends[i] - begin);
  }
};

// Rule predicates, exposed for the tests and for other tools that need the same character classes.
bool is_chinese_char(char32_t cp);
bool is_bert_punctuation(char32_t cp);
bool is_bert_control(char32_t cp);     // dropped by the clean step: U+0000, U+FFFD, Cc and Cf but \t \n \r
bool is_bert_whitespace(char32_t cp);  // a separator after cleaning: \t \n \r ' ', Zs, U+2028, U+2029

class BasicTokenizer {
 public:
  explicit BasicTokenizer(bool lower_case) : lower_case_(lower_case) {}

  // Appends the words of `line` (valid UTF-8; check it first) to `out`.
  void tokenize(std::string_view line, LineWords& out);

 private:
  // Handles one whitespace token that holds non-ASCII text, starting at line[pos]; advances pos past it.
  void tokenize_unicode_token(std::string_view line, size_t& pos, LineWords& out);
  // Lowercases (if uncased), strips accents and splits punctuation of the UTF-16 text collected in utf16_.
  void flush_unicode_token(LineWords& out);
  void append_split_on_punctuation(const char16_t* text, size_t length, bool drop_marks, LineWords& out);

  bool lower_case_;
  std::u16string utf16_, lowered_, normalized_;  // scratch, reused across lines
};

}  // namespace bk
