// The bpe tool's three subcommands, behind the thin main in tools/bpe.cpp: encode (text -> byte-level BPE tokens
// or ids, tok/bpe_tokenizer.h), decode (ids -> text) and train (a tokenizer.json, tok/bpe_trainer.h). The sibling
// of tok/wordpiece.h, with its flags and output formats.
#pragma once

#include "tok/bpe_trainer.h"

#include <string>
#include <vector>

namespace bk {

struct BpeEncodeConfig {
  std::string tokenizer_path;
  std::string format = "tokens";  // tokens or ids
  bool special = false;           // wrap each line in the post-processor's template
  int threads = 1;                // 0 = all hardware threads
  std::vector<std::string> inputs;  // at most one; none = stdin
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  void validate() const;
};

// One output line per input line: the tokens (or ids) HF tokenizers gives, joined by single spaces.
void run_bpe_encode(const BpeEncodeConfig& config);

struct BpeDecodeConfig {
  std::string tokenizer_path;
  std::vector<std::string> inputs;
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  void validate() const;
};

// Lines of ids back to text, byte for byte what encode read (HF's ByteLevel decoder).
void run_bpe_decode(const BpeDecodeConfig& config);

struct BpeTrainConfig {
  BpeTrainerConfig trainer;         // its threads: 0 = all hardware threads
  std::vector<std::string> inputs;  // none = stdin
  std::string output = "-";
  bool force = false;
  bool quiet = false;

  void validate() const;
};

// Learns the tokenizer and writes its tokenizer.json.
void run_bpe_train(const BpeTrainConfig& config);

}  // namespace bk
