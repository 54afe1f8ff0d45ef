// The second half of BERT tokenization: one word -> WordPiece ids, greedy longest match first.
//
// At each position the longest vocabulary entry that matches is taken ("##"-prefixed entries after the first
// piece). A word with more than max_chars code points, or one that cannot be covered completely, becomes a
// single [UNK]. Candidate pieces are never longer than the vocabulary's longest entry, which keeps the
// search linear in practice.
#pragma once

#include "tok/vocab.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace bk {

class WordPieceMatcher {
 public:
  static constexpr size_t kGoogleMaxChars = 200;

  // Throws bk::Error naming the vocab file when it has no [UNK].
  explicit WordPieceMatcher(const Vocab& vocab, size_t max_chars = kGoogleMaxChars);

  // Appends the ids of `word` (valid UTF-8, no whitespace) to ids.
  void encode_word(std::string_view word, std::vector<int32_t>& ids) const;
  // When `word` is itself a vocabulary entry (what encode_word tries first), appends its id and returns true:
  // one lookup, the common case.
  bool encode_vocabulary_word(std::string_view word, std::vector<int32_t>& ids) const {
    if (word.size() > max_chars_ || word.size() > vocab_.max_token_bytes()) return false;
    const int32_t id = vocab_.find(word);
    if (id == Vocab::kNotFound) return false;
    ids.push_back(id);
    return true;
  }

  const Vocab& vocab() const { return vocab_; }
  int32_t unk_id() const { return unk_id_; }

 private:
  const Vocab& vocab_;
  size_t max_chars_;
  int32_t unk_id_;
};

}  // namespace bk
