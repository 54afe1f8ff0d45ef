#include "seg/segmenter.h"

#include "util/error.h"
#include "util/utf8.h"

#include <cstring>

#include <unicode/brkiter.h>
#include <unicode/filteredbrk.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

namespace bk {

namespace {

// Decodes the code point that ends just before `pos` (text is valid UTF-8) and moves pos to its first byte.
char32_t previous_code_point(std::string_view text, size_t& pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  size_t p = start;
  char32_t cp = next_code_point(text, p);
  pos = start;
  return cp;
}

char32_t code_point_at(std::string_view text, size_t pos) {
  return pos < text.size() ? next_code_point(text, pos) : 0;
}

bool is_white(char32_t cp) { return cp == ' ' || cp == '\t' || u_isUWhiteSpace(cp); }

// Closing brackets and quotes that may follow a sentence's final punctuation: ."  .)  .”  .»
bool is_closer(char32_t cp) {
  if (cp == '"' || cp == '\'') return true;
  if (cp < 0x80) return cp == ')' || cp == ']' || cp == '}';
  int8_t type = u_charType(cp);
  return type == U_END_PUNCTUATION || type == U_FINAL_PUNCTUATION || type == U_INITIAL_PUNCTUATION;
}

// Opening brackets and quotes in front of a word: (The  "The  “The
bool is_opener(char32_t cp) {
  if (cp == '"' || cp == '\'') return true;
  if (cp < 0x80) return cp == '(' || cp == '[' || cp == '{';
  int8_t type = u_charType(cp);
  return type == U_START_PUNCTUATION || type == U_INITIAL_PUNCTUATION || type == U_FINAL_PUNCTUATION;
}

bool is_upper(char32_t cp) { return u_isupper(cp) || u_istitle(cp); }

// "Ph.D", "U.S.A", "a.m": letters in groups of one or two separated by single periods, at least two groups.
bool is_dotted_acronym(std::string_view token) {
  int groups = 0, run = 0;
  for (size_t i = 0; i <= token.size(); ++i) {
    if (i == token.size() || token[i] == '.') {
      if (run == 0 || run > 2) return false;
      ++groups;
      run = 0;
    } else if ((token[i] >= 'a' && token[i] <= 'z') || (token[i] >= 'A' && token[i] <= 'Z')) {
      ++run;
    } else {
      return false;
    }
  }
  return groups >= 2;
}

std::string_view trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end) {
    size_t p = begin;
    if (!is_white(next_code_point(text, p))) break;
    begin = p;
  }
  while (end > begin) {
    size_t p = end;
    if (!is_white(previous_code_point(text, p))) break;
    end = p;
  }
  return text.substr(begin, end - begin);
}

// Converts valid UTF-8 to UTF-16 (the caller validated it; the document reader does). ICU iterates UTF-16
// faster than a UTF-8 UText, and this plain loop beats u_strFromUTF8 on mostly-ASCII text.
int32_t to_utf16(std::string_view text, std::vector<char16_t>& out) {
  out.resize(text.size() + 1);  // never more UTF-16 units than UTF-8 bytes
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  char16_t* d = out.data();
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c >= 0x80 && i + (c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4) > n)
      fail("truncated UTF-8 sequence at byte {} of a paragraph", i);
    if (c < 0x80) {
      *d++ = static_cast<char16_t>(c);
      i += 1;
    } else if (c < 0xE0) {
      *d++ = static_cast<char16_t>(((c & 0x1F) << 6) | (s[i + 1] & 0x3F));
      i += 2;
    } else if (c < 0xF0) {
      *d++ = static_cast<char16_t>(((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F));
      i += 3;
    } else {
      char32_t cp = ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
      *d++ = static_cast<char16_t>(0xD7C0 + (cp >> 10));
      *d++ = static_cast<char16_t>(0xDC00 | (cp & 0x3FF));
      i += 4;
    }
  }
  return static_cast<int32_t>(d - out.data());
}

std::unique_ptr<icu::BreakIterator> make_iterator(const std::string& lang, const AbbreviationTable& table) {
  UErrorCode status = U_ZERO_ERROR;
  icu::Locale locale(lang.c_str());
  std::unique_ptr<icu::BreakIterator> plain(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status)) fail("ICU sentence break iterator for '{}': {}", lang, u_errorName(status));
  // ICU's own per-locale suppression list (the data behind the "@ss=standard" keyword).
  std::unique_ptr<icu::FilteredBreakIteratorBuilder> builder(
      icu::FilteredBreakIteratorBuilder::createInstance(locale, status));
  if (status == U_MISSING_RESOURCE_ERROR) {  // a language without a list (ja, zh, ...): nothing to suppress
    status = U_ZERO_ERROR;
    builder.reset(icu::FilteredBreakIteratorBuilder::createEmptyInstance(status));
  }
  if (U_FAILURE(status)) fail("ICU abbreviation suppressions for '{}': {}", lang, u_errorName(status));
  for (const std::string& entry : table.icu_unsuppress())
    builder->unsuppressBreakAfter(icu::UnicodeString::fromUTF8(entry), status);
  status = U_ZERO_ERROR;  // an entry missing from this ICU version's list is fine
  std::unique_ptr<icu::BreakIterator> filtered(builder->wrapIteratorWithFilter(plain.release(), status));
  if (U_FAILURE(status)) fail("ICU filtered sentence iterator for '{}': {}", lang, u_errorName(status));
  return filtered;
}

}  // namespace

SentenceSegmenter::SentenceSegmenter(const SentenceSegmenterOptions& options) : lang_(options.lang) {
  auto table = std::make_shared<AbbreviationTable>(builtin_abbreviations(options.lang));
  if (!options.abbreviations_file.empty()) load_abbreviation_file(options.abbreviations_file, *table);
  table_ = std::move(table);
  iterator_ = make_iterator(lang_, *table_);
}

SentenceSegmenter::SentenceSegmenter(std::shared_ptr<const AbbreviationTable> table, const std::string& lang)
    : table_(std::move(table)), lang_(lang), iterator_(make_iterator(lang, *table_)) {}

SentenceSegmenter::SentenceSegmenter(const SentenceSegmenter& other, int)
    : table_(other.table_), lang_(other.lang_), iterator_(other.iterator_->clone()) {
  if (!iterator_) fail("cannot clone the ICU sentence break iterator");
}

SentenceSegmenter::~SentenceSegmenter() { utext_close(&utext_); }

std::unique_ptr<SentenceSegmenter> SentenceSegmenter::clone() const {
  return std::unique_ptr<SentenceSegmenter>(new SentenceSegmenter(*this, 0));
}

std::vector<std::string> SentenceSegmenter::split(std::string_view paragraph) {
  std::vector<std::string> out;
  split(paragraph, out);
  return out;
}

void SentenceSegmenter::split(std::string_view paragraph, std::vector<std::string>& out) {
  if (paragraph.empty()) return;
  if (paragraph.size() > INT32_MAX / 2) fail("paragraph of {} bytes is too long to segment", paragraph.size());
  const int32_t length = to_utf16(paragraph, utf16_);
  UErrorCode status = U_ZERO_ERROR;
  utext_openUChars(&utext_, utf16_.data(), length, &status);
  iterator_->setText(&utext_, status);
  if (U_FAILURE(status)) fail("ICU setText failed: {}", u_errorName(status));

  // ICU does not break before a sentence that starts with a number when a lower-case word follows it
  // ("...383 species. 113 of these..."); such positions are offered to keep_break as extra candidates.
  extra_cuts_.clear();
  for (const char* dot = paragraph.data(); (dot = static_cast<const char*>(std::memchr(
           dot, '.', paragraph.data() + paragraph.size() - dot))) != nullptr; ++dot) {
    size_t j = dot - paragraph.data() + 1;
    while (j < paragraph.size() && (paragraph[j] == '"' || paragraph[j] == ')' || paragraph[j] == ']')) ++j;
    size_t k = j;
    while (k < paragraph.size() && (paragraph[k] == ' ' || paragraph[k] == '\t')) ++k;
    if (k > j && k < paragraph.size() && paragraph[k] >= '0' && paragraph[k] <= '9') extra_cuts_.push_back(k);
  }
  size_t next_extra = 0;

  // Walk UTF-16 boundaries and the matching UTF-8 offsets together.
  size_t u8 = 0, piece_start = 0;
  int32_t u16 = 0;
  auto emit = [&](size_t end) {
    std::string_view sentence = trim(paragraph.substr(piece_start, end - piece_start));
    if (!sentence.empty()) out.emplace_back(sentence);
    piece_start = end;
  };
  for (int32_t b = iterator_->first(); (b = iterator_->next()) != icu::BreakIterator::DONE;) {
    if (b >= length) break;
    while (u16 < b) {
      auto lead = static_cast<unsigned char>(paragraph[u8]);
      if (lead < 0x80) u8 += 1, u16 += 1;
      else if (lead < 0xE0) u8 += 2, u16 += 1;
      else if (lead < 0xF0) u8 += 3, u16 += 1;
      else u8 += 4, u16 += 2;
    }
    for (; next_extra < extra_cuts_.size() && extra_cuts_[next_extra] < u8; ++next_extra)
      if (keep_break(paragraph, extra_cuts_[next_extra])) emit(extra_cuts_[next_extra]);
    if (next_extra < extra_cuts_.size() && extra_cuts_[next_extra] == u8) ++next_extra;
    if (keep_break(paragraph, u8)) emit(u8);
  }
  for (; next_extra < extra_cuts_.size(); ++next_extra)
    if (keep_break(paragraph, extra_cuts_[next_extra])) emit(extra_cuts_[next_extra]);
  emit(paragraph.size());
}

// Decides whether ICU's boundary at byte `cut` (0 < cut < size) is a sentence end.
bool SentenceSegmenter::keep_break(std::string_view text, size_t cut) const {
  size_t end = cut, p = cut;
  while (end > 0 && is_white(previous_code_point(text, p = end))) end = p;
  const bool spaced = end < cut;
  bool closed = false;
  while (end > 0 && is_closer(previous_code_point(text, p = end))) end = p, closed = true;
  if (end == 0) return true;
  size_t term_start = end;
  const char32_t term = previous_code_point(text, term_start);

  size_t next = cut;
  char32_t first = code_point_at(text, next);
  while (next < text.size() && is_opener(first)) first = code_point_at(text, next += U8_LENGTH(first));

  // "hello.World", "what?The": glued punctuation is not a sentence end (ICU breaks there).
  if (!spaced && (term == '.' || term == '?' || term == '!') && u_isalnum(code_point_at(text, cut))) return false;
  // A quotation or bracket that goes on in lower case: "Why?" he asked.  (see below.) and then
  if (closed && u_islower(first)) return false;
  if (term == 0x2026) return u_islower(first) ? false : ambiguous_break(text, next);  // …
  if (term != '.') return true;

  // Ellipses: "..." or ". . ." mid-sentence.
  size_t q = term_start;
  if (q > 0) {
    char32_t before = previous_code_point(text, q);
    if (before == '.' || (before == ' ' && q > 0 && text[q - 1] == '.')) return ambiguous_break(text, next);
  }

  // The token before the period: back to white space or an opening bracket or quote.
  size_t token_start = term_start;
  while (token_start > 0) {
    size_t s = token_start;
    char32_t c = previous_code_point(text, s);
    if (is_white(c) || is_opener(c)) break;
    token_start = s;
  }
  std::string_view token = text.substr(token_start, term_start - token_start);
  if (token.empty()) return true;

  size_t after_first = 0;
  char32_t initial = next_code_point(token, after_first);
  const bool single_capital = after_first == token.size() && is_upper(initial);
  // Single letters in the table are lower case ("c. 1900", "p. 12"); a capital is an initial instead.
  if (auto kind = single_capital ? std::nullopt : table_->find(token)) {
    switch (*kind) {
      case AbbrevKind::never_break: return false;
      case AbbrevKind::before_number: return !u_isdigit(first);
      case AbbrevKind::before_lowercase: return !u_islower(first);
      case AbbrevKind::ambiguous: return ambiguous_break(text, next);
    }
  }
  if (single_capital) {
    // A single capital: an initial ("J. R. R. Tolkien", "George W. Bush") unless a sentence clearly starts.
    if (!table_->has_starters()) return !(is_upper(first) || u_islower(first) || u_isdigit(first));
    return ambiguous_break(text, next);
  }
  if (is_dotted_acronym(token)) {
    if (!table_->has_starters()) return !(u_islower(first) || u_isdigit(first));
    return ambiguous_break(text, next);
  }
  return true;
}

// After an abbreviation that may or may not end the sentence: break only before a capitalised word that
// usually starts sentences ("He", "The", "In"), never before lower case, digits, or another initial.
bool SentenceSegmenter::ambiguous_break(std::string_view text, size_t next) const {
  if (next >= text.size()) return true;
  size_t p = next;
  char32_t first = next_code_point(text, p);
  if (u_islower(first) || u_isdigit(first)) return false;
  if (!is_upper(first)) return true;
  if (p < text.size() && text[p] == '.') return false;  // another initial: "J. R. Smith"
  size_t word_end = p;
  while (word_end < text.size()) {
    size_t w = word_end;
    if (!u_isalpha(next_code_point(text, w))) break;
    word_end = w;
  }
  if (!table_->has_starters()) return false;
  return table_->is_starter(text.substr(next, word_end - next));
}

}  // namespace bk
