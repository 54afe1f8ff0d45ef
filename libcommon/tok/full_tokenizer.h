// BERT's FullTokenizer: BasicTokenizer words, each through the WordPiece matcher.
//
// One instance per thread (it owns scratch buffers and a WordCache); the Vocab it points at is shared and
// read-only.
#pragma once

#include "tok/basic_tokenizer.h"
#include "tok/vocab_fit.h"
#include "tok/vocab.h"
#include "tok/word_cache.h"
#include "tok/wordpiece_matcher.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

class FullTokenizer {
 public:
  FullTokenizer(const Vocab& vocab, bool lower_case) : basic_(lower_case), matcher_(vocab) {}

  // Replaces ids with the WordPiece ids of one line (valid UTF-8).
  void encode(std::string_view line, std::vector<int32_t>& ids) {
    ids.clear();
    append(line, ids);
  }
  // Appends them instead.
  void append(std::string_view line, std::vector<int32_t>& ids) {
    const size_t first = ids.size();
    words_.clear();
    basic_.tokenize(line, words_);
    for (size_t i = 0; i < words_.size(); ++i) {
      const std::string_view word = words_[i];
      if (matcher_.encode_vocabulary_word(word, ids) || cache_.append(word, ids)) continue;
      const size_t mark = ids.size();
      matcher_.encode_word(word, ids);
      cache_.insert(word, ids.data() + mark, ids.size() - mark);
    }
    unknown_.add(std::span<const int32_t>(ids.data() + first, ids.size() - first), matcher_.unk_id());
  }

  // The pieces made since the last call and how many were [UNK] (tok/vocab_fit.h); the count starts again.
  UnknownCount take_unknown() { return std::exchange(unknown_, {}); }

  // The token strings of one line (convenience for tests and small tools; allocates).
  std::vector<std::string> tokenize(std::string_view line) {
    std::vector<int32_t> ids;
    encode(line, ids);
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) tokens.emplace_back(matcher_.vocab().token(id));
    return tokens;
  }

  const Vocab& vocab() const { return matcher_.vocab(); }

 private:
  BasicTokenizer basic_;
  WordPieceMatcher matcher_;
  WordCache cache_;
  LineWords words_;
  UnknownCount unknown_;
};

}  // namespace bk
