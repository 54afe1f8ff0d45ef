// What `wordpiece encode` and `wordpiece decode` do, behind the thin main in tools/wordpiece.cpp.
#pragma once

#include <string>

namespace bk {

enum class WordpieceOutputFormat { Tokens, Ids };

struct WordpieceEncodeConfig {
  std::string vocab_path;
  bool cased = false;  // false: lower-case and strip accents (BERT "uncased")
  WordpieceOutputFormat format = WordpieceOutputFormat::Tokens;
  int threads = 1;     // already resolved: >= 1
  std::string input = "-";
  std::string output = "-";
  bool force = false;
  bool quiet = false;
};

// One output line per input line: the WordPiece tokens (or ids) joined by single spaces. Byte-identical
// output for every thread count. Throws bk::Error naming the file and line for invalid UTF-8.
void run_wordpiece_encode(const WordpieceEncodeConfig& config);

struct WordpieceDecodeConfig {
  std::string vocab_path;
  std::string input = "-";
  std::string output = "-";
  bool force = false;
  bool quiet = false;
};

// Lines of ids back to text: tokens joined by spaces, "##" pieces glued to the token before them.
// Throws bk::Error naming the line and column of an id that is not a number or not in the vocabulary.
void run_wordpiece_decode(const WordpieceDecodeConfig& config);

}  // namespace bk
