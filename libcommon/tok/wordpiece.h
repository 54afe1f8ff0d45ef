// The wordpiece tool's three subcommands, behind the thin main in tools/wordpiece.cpp: encode (text -> WordPiece
// tokens or ids, tok/full_tokenizer.h), decode (ids -> text) and train (a vocabulary, tok/wordpiece_trainer.h).
#pragma once

#include "tok/wordpiece_trainer.h"

#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct WordpieceEncodeConfig {
  std::string vocab_path;
  bool cased = false;             // false: lower-case and strip accents (BERT "uncased")
  std::string format = "tokens";  // tokens or ids
  int threads = 1;                // 0 = all hardware threads
  std::vector<std::string> inputs;  // at most one; none = stdin
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  // bk::UsageError naming the flag for a value no run can use.
  void validate() const;
};

// One output line per input line: the WordPiece tokens (or ids) joined by single spaces. Byte-identical
// output for every thread count. Throws bk::Error naming the file and line for invalid UTF-8.
void run_wordpiece_encode(const WordpieceEncodeConfig& config);

struct WordpieceDecodeConfig {
  std::string vocab_path;
  std::vector<std::string> inputs;  // at most one; none = stdin
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  void validate() const;
};

// Lines of ids back to text: tokens joined by spaces, "##" pieces glued to the token before them.
// Throws bk::Error naming the line and column of an id that is not a number or not in the vocabulary.
void run_wordpiece_decode(const WordpieceDecodeConfig& config);

struct WordpieceTrainConfig {
  WordpieceTrainerConfig trainer;  // its threads: 0 = all hardware threads
  std::vector<std::string> inputs;  // none = stdin
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  void validate() const;
};

// Learns the vocabulary and writes it, one token per line (what Vocab::load reads).
void run_wordpiece_train(const WordpieceTrainConfig& config);

// --special-tokens as text: "[PAD],[UNK]" <-> {"[PAD]", "[UNK]"} (empty items are dropped).
std::vector<std::string> split_special_tokens(std::string_view list);
std::string join_special_tokens(const std::vector<std::string>& tokens);

// --initial-alphabet: one entry per character. An entry starts at every byte that is not a UTF-8 continuation
// byte, so bytes that are not UTF-8 stay in the entries (alone or with the character before them), where
// validate() finds them.
std::vector<std::string> split_characters(std::string_view text);

}  // namespace bk
