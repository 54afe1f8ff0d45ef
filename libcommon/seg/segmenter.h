// Sentence segmentation of one paragraph: ICU's sentence break iterator (with ICU's own abbreviation
// suppressions for the locale) proposes the boundaries, and our rules (seg/abbreviations.h plus initials,
// ellipses, closing quotes and glued punctuation) veto the ones that are not sentence ends.
//
// A SentenceSegmenter is not thread-safe (ICU break iterators keep state); give every thread its own clone().
#pragma once

#include "seg/abbreviations.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <unicode/utext.h>

U_NAMESPACE_BEGIN
class BreakIterator;
U_NAMESPACE_END

namespace bk {

struct SentenceSegmenterOptions {
  std::string lang = "en";               // ICU locale and built-in abbreviation list
  std::string abbreviations_file;        // extra entries (see load_abbreviation_file); empty = none
};

class SentenceSegmenter {
 public:
  explicit SentenceSegmenter(const SentenceSegmenterOptions& options);
  SentenceSegmenter(std::shared_ptr<const AbbreviationTable> table, const std::string& lang);
  ~SentenceSegmenter();
  SentenceSegmenter(const SentenceSegmenter&) = delete;
  SentenceSegmenter& operator=(const SentenceSegmenter&) = delete;

  // A new segmenter with the same rules and its own ICU state (cheap: ICU shares the compiled rules).
  std::unique_ptr<SentenceSegmenter> clone() const;

  // Appends the sentences of `paragraph` (one line of valid UTF-8, as DocumentReader guarantees; a sequence cut
  // off at the end throws bk::Error) to `out`, each trimmed of leading and
  // trailing white space; nothing is appended for a blank paragraph. Sentences concatenate back to the
  // paragraph minus white space at the cuts.
  void split(std::string_view paragraph, std::vector<std::string>& out);
  std::vector<std::string> split(std::string_view paragraph);

 private:
  SentenceSegmenter(const SentenceSegmenter& other, int);  // clone
  bool keep_break(std::string_view text, size_t cut) const;
  bool ambiguous_break(std::string_view text, size_t cut) const;

  std::shared_ptr<const AbbreviationTable> table_;
  std::string lang_;
  std::unique_ptr<icu::BreakIterator> iterator_;
  std::vector<char16_t> utf16_;
  std::vector<size_t> extra_cuts_;
  UText utext_ = UTEXT_INITIALIZER;
};

}  // namespace bk
