// The Unicode normalization forms a tokenizer.json may ask for (NFC, NFKC, NFD, NFKD, or a Sequence of them),
// through ICU. Text that is already in the form (all of ASCII, and for NFC any text without a code point at or
// above U+0300) is returned as it is, without a copy. One instance per thread (it owns scratch buffers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class NormalForm { nfc, nfkc, nfd, nfkd };

// "NFC" -> nfc ...; false for any other name.
bool parse_normal_form(std::string_view name, NormalForm& form);
const char* normal_form_name(NormalForm form);

class UnicodeNormalizer {
 public:
  explicit UnicodeNormalizer(std::vector<NormalForm> forms = {}) : forms_(std::move(forms)) {}
  bool empty() const { return forms_.empty(); }
  const std::vector<NormalForm>& forms() const { return forms_; }

  // `text` (valid UTF-8) in the forms, applied in order; the view points into `text` or into this object (valid
  // until the next call).
  std::string_view normalize(std::string_view text);

  // A stretch of normalized text and the raw text it came from, as byte ends (the previous chunk's ends are where
  // it begins).
  struct Chunk {
    uint32_t raw_end, normalized_end;
  };
  // normalize(text), and in `chunks` the alignment of the result with `text`: the text cut where every form has a
  // boundary before a code point (nothing there composes or reorders across the cut), each piece normalized on its
  // own. Where that would not give normalize(text) the whole text is one chunk, so the alignment is never wrong,
  // only coarse.
  std::string_view normalize_aligned(std::string_view text, std::vector<Chunk>& chunks);

 private:
  std::string_view apply(NormalForm form, std::string_view text, std::string& out);

  std::vector<NormalForm> forms_;
  std::u16string utf16_, normalized_;
  std::string buffers_[2];
  std::string aligned_;  // normalize_aligned's result
};

}  // namespace bk
