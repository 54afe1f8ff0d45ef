#include "tok/basic_tokenizer.h"

#include "util/error.h"
#include "util/utf8.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <array>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bk {
namespace {

// What the ASCII fast path does with each byte.
enum AsciiClass : uint8_t { kWord, kSpace, kDrop, kPunct, kNonAscii };

constexpr std::array<uint8_t, 256> make_ascii_classes() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c >= 0x80) t[c] = kNonAscii;
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') t[c] = kSpace;
    else if (c < 0x20 || c == 0x7F) t[c] = kDrop;  // NUL and the other Cc characters
    else if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
      t[c] = kPunct;
    else t[c] = kWord;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kAsciiClass = make_ascii_classes();

#if defined(__SSE2__)
// Copies the leading run of ASCII letters and digits (kWord) among 16 bytes at `in` to `out` (all 16 bytes
// are stored; those after the run are scratch), lower-casing A-Z if asked, and returns the run's length.
size_t copy_word_bytes16(const unsigned char* in, char* out, bool lower_case) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  // Bytes >= 0x80 are negative as signed bytes, so every range test below is false for them.
  auto in_range = [](__m128i x, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(x, _mm_set1_epi8(static_cast<char>(hi + 1))));
  };
  const __m128i upper = in_range(v, 'A', 'Z');
  const __m128i word = _mm_or_si128(_mm_or_si128(upper, in_range(v, 'a', 'z')), in_range(v, '0', '9'));
  const __m128i lowered = lower_case ? _mm_add_epi8(v, _mm_and_si128(upper, _mm_set1_epi8(32))) : v;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), lowered);
  const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(word));
  return static_cast<size_t>(__builtin_ctz(~mask));  // ~mask has bit 16 set, so this is at most 16
}
#endif

const UNormalizer2* nfd() {
  static const UNormalizer2* instance = [] {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFDInstance(&err);
    if (U_FAILURE(err)) fail("ICU: cannot load the NFD normalizer: {}", u_errorName(err));
    return n;
  }();
  return instance;
}

// Runs an ICU "preflighting" call into dest, growing it once if needed; dest ends up exactly the result.
template <typename Call>
void icu_into(std::u16string& dest, size_t hint, Call&& call) {
  if (dest.size() < hint) dest.resize(hint);
  UErrorCode err = U_ZERO_ERROR;
  int32_t n = call(dest.data(), static_cast<int32_t>(dest.size()), &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) {
    dest.resize(static_cast<size_t>(n));
    err = U_ZERO_ERROR;
    n = call(dest.data(), static_cast<int32_t>(dest.size()), &err);
  }
  if (U_FAILURE(err)) fail("ICU: {}", u_errorName(err));
  dest.resize(static_cast<size_t>(n));
}

void append_utf16(std::u16string& out, char32_t cp) {
  if (cp < 0x10000) {
    out.push_back(static_cast<char16_t>(cp));
  } else {
    out.push_back(static_cast<char16_t>(U16_LEAD(cp)));
    out.push_back(static_cast<char16_t>(U16_TRAIL(cp)));
  }
}

}  // namespace

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_bert_punctuation(char32_t cp) {
  if (cp < 0x80) return kAsciiClass[cp] == kPunct;
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_P_MASK) != 0;
}

bool is_bert_control(char32_t cp) {
  if (cp < 0x80) return kAsciiClass[cp] == kDrop;
  if (cp == 0xFFFD) return true;
  int8_t type = u_charType(static_cast<UChar32>(cp));
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR;
}

bool is_bert_whitespace(char32_t cp) {
  if (cp < 0x80) return kAsciiClass[cp] == kSpace;
  // Zs became ' ' in the clean step; U+2028 (Zl) and U+2029 (Zp) survive it but Python's str.split() splits
  // on them. The other characters str.split() knows (U+001C-U+001F, U+0085, U+000B, U+000C) are Cc, and the
  // clean step has already dropped them.
  return cp == 0x2028 || cp == 0x2029 || u_charType(static_cast<UChar32>(cp)) == U_SPACE_SEPARATOR;
}

void BasicTokenizer::tokenize(std::string_view line, LineWords& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(line.data());
  const size_t n = line.size();
  // The ASCII path writes at most one byte per input byte, straight into out.bytes sized for the rest of the
  // line (plus a block of slack); `w` is the real end. The Unicode path appends, so the size is made exact around it.
  size_t w = out.bytes.size();
  out.bytes.resize(w + n + 16);  // 16: the vector path stores whole blocks
  size_t pos = 0;
  while (pos < n) {
    uint8_t cls = kAsciiClass[s[pos]];
    if (cls == kSpace || cls == kDrop) {
      ++pos;
      continue;
    }
    // A whitespace token starts here. Try the ASCII path; on the first non-ASCII byte undo it and hand the
    // whole token to the Unicode path (its lowercasing and accent stripping need the full token).
    const size_t token_start = pos, bytes_mark = w, words_mark = out.ends.size();
    char* bytes = out.bytes.data();
    bool in_word = false, unicode = false;
    while (pos < n) {
      unsigned char c = s[pos];
      cls = kAsciiClass[c];
      if (cls == kWord) {  // a run of word bytes (ASCII letters and digits), copied and lower-cased
        for (;;) {
#if defined(__SSE2__)
          if (pos + 16 <= n) {  // 16 bytes at a time: the run's length from a mask, no branch per byte
            const size_t run = copy_word_bytes16(s + pos, bytes + w, lower_case_);
            w += run;
            pos += run;
            if (run < 16) break;
            continue;
          }
#endif
          // A run of whole blocks can end exactly at the end of the line: stop there, never read past it (the
          // line is often a view into a larger buffer whose next byte may be a letter).
          if (pos == n) break;
          c = s[pos];
          if (kAsciiClass[c] != kWord) break;
          bytes[w++] = static_cast<char>(lower_case_ && static_cast<unsigned>(c - 'A') < 26u ? c + 32 : c);
          if (++pos == n) break;
        }
        in_word = true;
        continue;
      }
      if (cls == kPunct) {
        if (in_word) out.ends.push_back(static_cast<uint32_t>(w));
        bytes[w++] = static_cast<char>(c);
        out.ends.push_back(static_cast<uint32_t>(w));
        in_word = false;
      } else if (cls == kSpace) {
        break;
      } else if (cls == kNonAscii) {
        unicode = true;
        break;
      }  // kDrop: nothing
      ++pos;
    }
    if (unicode) {
      out.bytes.resize(bytes_mark);
      out.ends.resize(words_mark);
      pos = token_start;
      tokenize_unicode_token(line, pos, out);
      w = out.bytes.size();
      out.bytes.resize(w + (n - pos) + 16);
    } else if (in_word) {
      out.ends.push_back(static_cast<uint32_t>(w));
    }
  }
  out.bytes.resize(w);
}

void BasicTokenizer::tokenize_unicode_token(std::string_view line, size_t& pos, LineWords& out) {
  utf16_.clear();
  while (pos < line.size()) {
    size_t next = pos;
    char32_t cp = next_code_point(line, next);
    if (is_bert_whitespace(cp)) {
      pos = next;
      break;
    }
    if (is_chinese_char(cp)) {
      if (!utf16_.empty()) break;  // the ideograph starts the next token
      pos = next;
      // Unified ideographs have no case and no decomposition: no ICU needed. The compatibility ideographs
      // (U+F900.., U+2F800..) decompose under NFD, so they take the full path when uncased.
      if (!lower_case_ || !((cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F))) {
        append_utf8(out.bytes, cp);
        out.ends.push_back(static_cast<uint32_t>(out.bytes.size()));
        return;
      }
      append_utf16(utf16_, cp);
      break;
    }
    if (!is_bert_control(cp)) append_utf16(utf16_, cp);
    pos = next;
  }
  flush_unicode_token(out);
}

void BasicTokenizer::flush_unicode_token(LineWords& out) {
  if (utf16_.empty()) return;
  if (!lower_case_) {
    append_split_on_punctuation(utf16_.data(), utf16_.size(), false, out);
    return;
  }
  // Root locale: the language-neutral full mappings (SpecialCasing without tr/az/lt rules) plus Final_Sigma,
  // which is what Python's str.lower() does.
  icu_into(lowered_, utf16_.size() + 8, [&](char16_t* dest, int32_t cap, UErrorCode* err) {
    return u_strToLower(dest, cap, utf16_.data(), static_cast<int32_t>(utf16_.size()), "", err);
  });
  icu_into(normalized_, lowered_.size() * 2 + 8, [&](char16_t* dest, int32_t cap, UErrorCode* err) {
    return unorm2_normalize(nfd(), lowered_.data(), static_cast<int32_t>(lowered_.size()), dest, cap, err);
  });
  append_split_on_punctuation(normalized_.data(), normalized_.size(), true, out);
}

void BasicTokenizer::append_split_on_punctuation(const char16_t* text, size_t length, bool drop_marks, LineWords& out) {
  bool in_word = false;
  size_t i = 0;
  while (i < length) {
    UChar32 cp;
    U16_NEXT(text, i, length, cp);
    if (drop_marks && u_charType(cp) == U_NON_SPACING_MARK) continue;
    if (is_bert_punctuation(static_cast<char32_t>(cp))) {
      if (in_word) out.ends.push_back(static_cast<uint32_t>(out.bytes.size()));
      append_utf8(out.bytes, static_cast<char32_t>(cp));
      out.ends.push_back(static_cast<uint32_t>(out.bytes.size()));
      in_word = false;
    } else {
      append_utf8(out.bytes, static_cast<char32_t>(cp));
      in_word = true;
    }
  }
  if (in_word) out.ends.push_back(static_cast<uint32_t>(out.bytes.size()));
}

}  // namespace bk
