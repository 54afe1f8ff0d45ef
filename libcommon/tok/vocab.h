// A WordPiece vocabulary: one token per line, id = 0-based line number.
//
// Loading follows google-research/bert's load_vocab: every line is stripped of leading and trailing
// whitespace (Python str.strip(), so NBSP, U+3000, U+2028... count too), a repeated token keeps the id of its
// LAST line (a Python dict assignment), and a last line without '\n' is still a token.
//
// Lookups are by string_view into a flat open-addressing table, so the matcher never allocates; a hash tag in
// each slot settles most misses without reading the token. A second
// table answers "is ##REST in the vocabulary" without building the "##" string.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

class Vocab {
 public:
  static constexpr int32_t kNotFound = -1;

  // Reads a vocab file ("-" is not accepted: the vocabulary is needed before the input is read).
  // Throws bk::Error naming the file (and the line, for invalid UTF-8).
  static Vocab load(const std::string& path);
  // Builds a vocabulary from tokens in id order (tests, tools that make a vocabulary).
  static Vocab from_tokens(const std::vector<std::string>& tokens, std::string name = "<memory>");

  int32_t find(std::string_view token) const;                 // id of the exact token or kNotFound
  // The id of a token the caller cannot do without ([CLS], [MASK], ...): bk::Error "VOCAB: the vocabulary has no
  // TOKEN token" when it is absent.
  int32_t require(std::string_view token) const;
  int32_t find_continuation(std::string_view rest) const;     // id of "##" + rest or kNotFound
  std::string_view token(int32_t id) const {
    const size_t i = static_cast<size_t>(id);
    return std::string_view(bytes_).substr(begin_[i], begin_[i + 1] - begin_[i]);
  }
  size_t size() const { return begin_.size() - 1; }
  // Python's list(vocab.keys()) for load_vocab's dict: each distinct token once, in the order of its first line,
  // as the id find() gives it (that of its last line).
  std::vector<int32_t> distinct_ids() const;
  const std::string& name() const { return name_; }

  // Longest key in bytes in each table; the matcher never tries a longer piece.
  size_t max_token_bytes() const { return max_token_bytes_; }
  size_t max_continuation_bytes() const { return max_continuation_bytes_; }

  // The id of "[UNK]", or throws bk::Error naming the vocab file when it has none.
  int32_t require_unk() const;

 private:
  // A 32-bit slot holds id + 1 in its low id_bits_ bits (0 = empty) and, above them, as many bits of the key's
  // hash as a tag. Four bytes a slot keep the tables small enough to stay in cache.
  struct Table {
    std::vector<uint32_t> slots;
    uint64_t mask = 0;
  };
  void add_token(std::string_view token);
  void build();
  bool insert(Table& table, std::string_view key, int32_t id, size_t skip);  // false: a repeated key
  int32_t lookup(const Table& table, std::string_view key, size_t skip) const;
  uint32_t tag(uint64_t hash) const { return static_cast<uint32_t>(hash >> 32) & ~id_mask_; }

  std::string name_;
  std::string bytes_;                // the tokens back to back
  std::vector<uint32_t> begin_{0};   // token i is bytes_[begin_[i] .. begin_[i+1])
  std::vector<uint8_t> repeated_;    // repeated_[i]: an earlier line holds the same token
  uint32_t id_mask_ = 0;
  Table full_, continuation_;
  size_t max_token_bytes_ = 0, max_continuation_bytes_ = 0;
};

// Python's str.isspace() for one code point (the set str.split() and str.strip() use).
bool is_python_space(char32_t cp);

// Python's str.strip() on UTF-8 text (text must be valid UTF-8).
std::string_view python_strip(std::string_view text);

}  // namespace bk
