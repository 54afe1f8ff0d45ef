// A WordPiece vocabulary: one token per line, id = 0-based line number.
//
// Loading follows google-research/bert's load_vocab: every line is stripped of leading and trailing
// whitespace (Python str.strip(), so NBSP, U+3000, U+2028... count too), a repeated token keeps the id of its
// LAST line (a Python dict assignment), and a last line without '\n' is still a token.
//
// Lookups are by string_view into a flat open-addressing table, so the matcher never allocates. A second
// table answers "is ##REST in the vocabulary" without building the "##" string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk::tok {

class Vocab {
 public:
  static constexpr int32_t kNotFound = -1;

  // Reads a vocab file ("-" is not accepted: the vocabulary is needed before the input is read).
  // Throws bk::Error naming the file (and the line, for invalid UTF-8).
  static Vocab load(const std::string& path);
  // Builds a vocabulary from tokens in id order (tests, tools that make a vocabulary).
  static Vocab from_tokens(const std::vector<std::string>& tokens, std::string name = "<memory>");

  int32_t find(std::string_view token) const;                 // id of the exact token or kNotFound
  int32_t find_continuation(std::string_view rest) const;     // id of "##" + rest or kNotFound
  std::string_view token(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }
  size_t size() const { return tokens_.size(); }
  const std::string& name() const { return name_; }

  // Longest key in bytes in each table; the matcher never tries a longer piece.
  size_t max_token_bytes() const { return max_token_bytes_; }
  size_t max_continuation_bytes() const { return max_continuation_bytes_; }

  // The id of "[UNK]", or throws bk::Error naming the vocab file when it has none.
  int32_t require_unk() const;

 private:
  struct Table {
    std::vector<uint32_t> slots;  // 0 = empty, else id + 1
    uint64_t mask = 0;
  };
  void build();
  void insert(Table& table, std::string_view key, int32_t id, size_t skip);
  int32_t lookup(const Table& table, std::string_view key, size_t skip) const;

  std::string name_;
  std::vector<std::string> tokens_;
  Table full_, continuation_;
  size_t max_token_bytes_ = 0, max_continuation_bytes_ = 0;
};

// Python's str.isspace() for one code point (the set str.split() and str.strip() use).
bool is_python_space(char32_t cp);

// Python's str.strip() on UTF-8 text (text must be valid UTF-8).
std::string_view python_strip(std::string_view text);

}  // namespace bk::tok
