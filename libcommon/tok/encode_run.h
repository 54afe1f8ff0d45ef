// What `wordpiece encode` and `wordpiece decode` do, behind the thin main in tools/wordpiece.cpp.
#pragma once

#include <string>

namespace bk::tok {

enum class OutputFormat { Tokens, Ids };

struct EncodeConfig {
  std::string vocab_path;
  bool cased = false;  // false: lower-case and strip accents (BERT "uncased")
  OutputFormat format = OutputFormat::Tokens;
  int threads = 1;     // already resolved: >= 1
  std::string input = "-";
  std::string output = "-";
  bool force = false;
  bool quiet = false;
};

// One output line per input line: the WordPiece tokens (or ids) joined by single spaces. Byte-identical
// output for every thread count. Throws bk::Error naming the file and line for invalid UTF-8.
void run_encode(const EncodeConfig& config);

struct DecodeConfig {
  std::string vocab_path;
  std::string input = "-";
  std::string output = "-";
  bool force = false;
  bool quiet = false;
};

// Lines of ids back to text: tokens joined by spaces, "##" pieces glued to the token before them.
// Throws bk::Error naming the line and column of an id that is not a number or not in the vocabulary.
void run_decode(const DecodeConfig& config);

}  // namespace bk::tok
