// A byte-level BPE tokenizer as a tokenizer.json describes it (RoBERTa's, GPT-2's, GPT-NeoX's, ModernBERT's), and
// the per-thread encoder that turns a line into the ids HF tokenizers gives
// (`Tokenizer.from_file(F).encode(line, add_special_tokens=False).ids`):
//   added tokens in the raw text -> normalizer -> added tokens in the normalized text -> pre-tokenizer (Split
//   patterns, then ByteLevel: a prefix space, GPT-2's pattern) -> BPE model on each piece.
// tok/tokenizer_json.h reads and writes the file; this header holds no JSON.
#pragma once

#include "tok/added_tokens.h"
#include "tok/bpe_model.h"
#include "tok/split_pattern.h"
#include "tok/unicode_normalizer.h"
#include "tok/vocab_fit.h"
#include "tok/word_cache.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bk {

// One item of a post-processor's template: an input sequence (A or B) or special tokens.
struct TemplateItem {
  char sequence = 0;            // 'A' or 'B', or 0 for special tokens
  std::vector<int32_t> ids;     // the special tokens' ids
};

struct PostTemplate {
  std::vector<TemplateItem> single, pair;
  bool empty() const { return single.empty(); }
  // cls A sep and cls A sep B sep (BERT's), with a second sep before B for RoBERTa's <s> A </s></s> B </s>.
  static PostTemplate bert_like(int32_t cls, int32_t sep, bool roberta);
  // The ids of `a` (and `b`, for a pair template) wrapped in the template.
  std::vector<int32_t> apply(const std::vector<int32_t>& a, const std::vector<int32_t>* b = nullptr) const;
};

struct BpeTokenizerSpec {
  std::string path;                    // for messages
  std::unique_ptr<BpeModel> model;
  std::vector<NormalForm> normalizer;  // applied in order
  std::vector<SplitPattern> splits;    // Split pre-tokenizers before ByteLevel
  bool add_prefix_space = false;       // ByteLevel's: a space before each piece that does not start with one
  bool byte_level_regex = true;        // ByteLevel's use_regex: GPT-2's pattern after the splits
  std::vector<AddedToken> added_tokens;
  PostTemplate post;
  AddedTokenMatcher raw_added, normalized_added;  // built by finish()

  // Builds the matchers and the id tables (after the model, normalizer and added tokens are set).
  void finish();
  // Ids 0 .. vocab_size()-1: the model's tokens and the added ones (which may lie beyond the model's).
  size_t vocab_size() const;
  // The token string of an id (an added token's content), or nullopt for an id with neither.
  std::optional<std::string_view> token(int32_t id) const;
  // The id of a token string, the model's or an added one's, or -1.
  int32_t id_of(std::string_view token) const;
  // What the decoder reads for an id: an added token's content in its normalized form (HF's decode does so).
  std::optional<std::string_view> decoder_text(int32_t id) const;

 private:
  std::vector<int32_t> added_index_;       // by id: the index in added_tokens, or -1
  std::vector<std::string_view> texts_;    // by id: token(id), empty for an id with no token
  std::vector<std::string> decoder_texts_;  // by index in added_tokens
};

// Bytes [begin, end) of a text.
struct ByteSpan {
  uint32_t begin = 0, end = 0;
};

// Where the words of one pre-tokenizer piece lie in the text they came from: a word may point into a copy that
// starts with ByteLevel's added prefix space, which lies nowhere in the text.
struct WordLocator {
  const char* base;     // what the words point into
  size_t piece_offset;  // where the piece starts in the text
  size_t prefix;        // 1 when base starts with an added space, else 0
  ByteSpan span(std::string_view word) const {
    const size_t begin = static_cast<size_t>(word.data() - base), end = begin + word.size();
    return {static_cast<uint32_t>(piece_offset + (begin > prefix ? begin - prefix : 0)),
            static_cast<uint32_t>(piece_offset + (end > prefix ? end - prefix : 0))};
  }
};

// The pre-tokenizer's half of a spec (Split patterns, then ByteLevel's prefix space and GPT-2's pattern): the pieces
// the model sees, as raw bytes. One per thread.
class ByteLevelPreTokenizer {
 public:
  explicit ByteLevelPreTokenizer(const BpeTokenizerSpec& spec) : spec_(spec) {}

  // Calls words(pieces) with the pieces of `text` (normalized, without added tokens), in order, a few at a time
  // (those of one pre-tokenizer piece, as a std::span<const std::string_view>); the views are valid during the
  // call only. A callback that also takes a WordLocator is told where the words lie in `text`.
  template <typename Words>
  void for_each_words(std::string_view text, Words&& words) {
    pieces_.assign(1, text);
    for (SplitPattern pattern : spec_.splits) {
      next_pieces_.clear();
      for (std::string_view piece : pieces_) split_by_pattern(pattern, piece, next_pieces_);
      pieces_.swap(next_pieces_);
    }
    for (std::string_view piece : pieces_) {
      WordLocator where{piece.data(), static_cast<size_t>(piece.data() - text.data()), 0};
      if (spec_.add_prefix_space && piece.front() != ' ') {
        prefixed_.assign(1, ' ');
        prefixed_.append(piece);
        piece = prefixed_;
        where.base = prefixed_.data();
        where.prefix = 1;
      }
      words_.clear();
      if (spec_.byte_level_regex) split_by_pattern(SplitPattern::gpt2, piece, words_);
      else words_.push_back(piece);
      if constexpr (std::is_invocable_v<Words&, std::span<const std::string_view>, const WordLocator&>)
        words(std::span<const std::string_view>(words_), where);
      else
        words(std::span<const std::string_view>(words_));
    }
  }

 private:
  const BpeTokenizerSpec& spec_;
  std::vector<std::string_view> pieces_, next_pieces_, words_;
  std::string prefixed_;
};

class BpeTokenizer {
 public:
  explicit BpeTokenizer(const BpeTokenizerSpec& spec) : spec_(spec), normalizer_(spec.normalizer), pre_(spec) {}

  void encode(std::string_view line, std::vector<int32_t>& ids) {
    ids.clear();
    append(line, ids);
  }
  // Appends the ids of one line (valid UTF-8).
  void append(std::string_view line, std::vector<int32_t>& ids);
  // The same, and for each id the bytes of `line` it stands for (HF's offsets, in bytes: a piece's leading space
  // included; through a normalizer that changes the text, the stretch of the line a normalized stretch came from).
  void append_with_spans(std::string_view line, std::vector<int32_t>& ids, std::vector<ByteSpan>& spans);

  const BpeTokenizerSpec& spec() const { return spec_; }
  // The pieces made since the last call and how many were the unknown token, if the model has one.
  UnknownCount take_unknown();

 private:
  void append_word(const WordCache::Key& key, std::vector<int32_t>& ids);
  // The spans of ids[first..] made from the word at `word` (normalized bytes), whose first `phantom` bytes are
  // not in the text.
  void append_token_spans(const std::vector<int32_t>& ids, size_t first, ByteSpan word, size_t phantom,
                          std::vector<ByteSpan>& spans);

  const BpeTokenizerSpec& spec_;
  UnicodeNormalizer normalizer_;
  ByteLevelPreTokenizer pre_;
  WordCache cache_;
  BpeScratch scratch_;
  std::vector<TextSegment> raw_segments_, normalized_segments_;
  std::vector<WordCache::Key> keys_;
  UnknownCount unknown_;
  std::vector<UnicodeNormalizer::Chunk> chunks_;  // append_with_spans' scratch
  std::string token_bytes_;
};

// The text of `ids` as HF's ByteLevel decoder gives it: each token's bytes (an added token, or a token with a
// character outside the byte-level alphabet, gives its own UTF-8), joined, ill-formed UTF-8 replaced by U+FFFD.
// Ids the tokenizer does not have are skipped, as HF skips them; callers check the range first.
std::string decode_byte_level(const BpeTokenizerSpec& spec, const std::vector<int32_t>& ids);

}  // namespace bk
