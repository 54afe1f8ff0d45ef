// A tokenizer's added tokens (tokenizer.json "added_tokens": the special tokens and any the user added), found in
// text before the BPE model sees it and never split, as HF tokenizers' AddedVocabulary finds them: leftmost-longest
// matches, a single_word token only between non-word characters, lstrip/rstrip taking the white space beside it.
// Tokens with normalized=false are found in the raw text, the others in the normalized text, in their normalized
// form.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// A stretch of text: an added token (id >= 0) or text for the model (id -1).
struct TextSegment {
  std::string_view text;
  int32_t id = -1;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // Finds `tokens` by their `patterns` (the content, or its normalized form); both lists in the same order.
  AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns);
  bool empty() const { return tokens_.empty(); }

  // Appends the segments of `text`, in order; empty text segments are left out.
  void split(std::string_view text, std::vector<TextSegment>& out) const;

 private:
  // The longest pattern at text[pos], or -1.
  int longest_at(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> patterns_;
  std::array<std::vector<int>, 256> by_first_byte_;  // pattern indices, longest first
  std::array<bool, 256> starts_pattern_{};          // whether by_first_byte_[b] has any
};

}  // namespace bk
