#include "tok/unicode_normalizer.h"

#include "util/error.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "util/utf8.h"

#include <algorithm>

namespace bk {
namespace {

const UNormalizer2* icu_instance(NormalForm form) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* n = nullptr;
  switch (form) {
    case NormalForm::nfc: n = unorm2_getNFCInstance(&err); break;
    case NormalForm::nfkc: n = unorm2_getNFKCInstance(&err); break;
    case NormalForm::nfd: n = unorm2_getNFDInstance(&err); break;
    case NormalForm::nfkd: n = unorm2_getNFKDInstance(&err); break;
  }
  if (U_FAILURE(err)) fail("ICU: cannot load the {} normalizer: {}", normal_form_name(form), u_errorName(err));
  return n;
}

// True when no normalization form can change `text`: ASCII only, or for NFC no code point at or above U+0300
// (their UTF-8 lead bytes are 0xCC and up), the first that NFC can compose with what precedes it.
bool unchanged_by(NormalForm form, std::string_view text) {
  const uint8_t limit = form == NormalForm::nfc ? 0xCC : 0x80;
  return std::all_of(text.begin(), text.end(), [limit](char c) { return static_cast<uint8_t>(c) < limit; });
}

// Calls `convert(dest, capacity, &err)` into `out`, growing it once if the first guess was short.
template <typename Out, typename Convert>
void icu_into(Out& out, size_t guess, Convert convert) {
  out.resize(std::max<size_t>(guess, 16));
  UErrorCode err = U_ZERO_ERROR;
  int32_t n = convert(out.data(), static_cast<int32_t>(out.size()), &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) {
    out.resize(n);
    err = U_ZERO_ERROR;
    n = convert(out.data(), static_cast<int32_t>(out.size()), &err);
  }
  if (U_FAILURE(err)) fail("ICU: Unicode normalization failed: {}", u_errorName(err));
  out.resize(n);
}

}  // namespace

bool parse_normal_form(std::string_view name, NormalForm& form) {
  for (NormalForm f : {NormalForm::nfc, NormalForm::nfkc, NormalForm::nfd, NormalForm::nfkd}) {
    if (name == normal_form_name(f)) {
      form = f;
      return true;
    }
  }
  return false;
}

const char* normal_form_name(NormalForm form) {
  switch (form) {
    case NormalForm::nfc: return "NFC";
    case NormalForm::nfkc: return "NFKC";
    case NormalForm::nfd: return "NFD";
    case NormalForm::nfkd: return "NFKD";
  }
  return "?";
}

std::string_view UnicodeNormalizer::normalize(std::string_view text) {
  int which = 0;
  for (NormalForm form : forms_) {
    text = apply(form, text, buffers_[which]);
    which ^= 1;
  }
  return text;
}

std::string_view UnicodeNormalizer::apply(NormalForm form, std::string_view text, std::string& out) {
  if (unchanged_by(form, text)) return text;
  icu_into(utf16_, text.size(), [&](char16_t* dest, int32_t cap, UErrorCode* err) {
    int32_t n = 0;
    u_strFromUTF8(reinterpret_cast<UChar*>(dest), cap, &n, text.data(), static_cast<int32_t>(text.size()), err);
    return n;
  });
  const UNormalizer2* icu = icu_instance(form);
  UErrorCode err = U_ZERO_ERROR;
  const auto size = static_cast<int32_t>(utf16_.size());
  if (unorm2_spanQuickCheckYes(icu, reinterpret_cast<const UChar*>(utf16_.data()), size, &err) == size) return text;
  icu_into(normalized_, utf16_.size() * 2, [&](char16_t* dest, int32_t cap, UErrorCode* e) {
    return unorm2_normalize(icu, reinterpret_cast<const UChar*>(utf16_.data()), size, reinterpret_cast<UChar*>(dest),
                            cap, e);
  });
  icu_into(out, normalized_.size() * 3, [&](char* dest, int32_t cap, UErrorCode* e) {
    int32_t n = 0;
    u_strToUTF8(dest, cap, &n, reinterpret_cast<const UChar*>(normalized_.data()),
                static_cast<int32_t>(normalized_.size()), e);
    return n;
  });
  return out;
}

std::string_view UnicodeNormalizer::normalize_aligned(std::string_view text, std::vector<Chunk>& chunks) {
  chunks.clear();
  const std::string_view whole = normalize(text);
  if (whole.data() == text.data() || whole == text) {
    chunks.push_back({static_cast<uint32_t>(text.size()), static_cast<uint32_t>(text.size())});
    return text;
  }
  aligned_.clear();
  size_t chunk_begin = 0;
  const auto close_chunk = [&](size_t end) {
    aligned_.append(normalize(text.substr(chunk_begin, end - chunk_begin)));
    chunks.push_back({static_cast<uint32_t>(end), static_cast<uint32_t>(aligned_.size())});
    chunk_begin = end;
  };
  for (size_t at = 0; at < text.size();) {
    const size_t here = at;
    const char32_t cp = next_code_point(text, at);
    const bool boundary = std::all_of(forms_.begin(), forms_.end(), [cp](NormalForm form) {
      return unorm2_hasBoundaryBefore(icu_instance(form), static_cast<UChar32>(cp));
    });
    if (boundary && here > chunk_begin) close_chunk(here);
  }
  close_chunk(text.size());
  if (aligned_ != normalize(text)) {  // a sequence of forms can undo a cut: fall back to one chunk
    chunks.assign(1, {static_cast<uint32_t>(text.size()), 0});
    aligned_.assign(normalize(text));
    chunks[0].normalized_end = static_cast<uint32_t>(aligned_.size());
  }
  return aligned_;
}

}  // namespace bk
