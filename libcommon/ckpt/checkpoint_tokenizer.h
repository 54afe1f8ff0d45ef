// Which tokenizer the text for a checkpoint goes through: one rule for every tool that tokenizes for a trained
// model (bert-eval --fill-mask, bert-finetune train's SQuAD evaluation, bert-finetune predict). Torch-free.
//
// The rule:
//   1. the file: --vocab or --tokenizer when given, else the one beside the checkpoint (vocab.txt, else a
//      tokenizer.json or vocab.json: checkpoint_path.h), else an error naming both flags;
//   2. WordPiece's casing: --cased when given, else the casing the checkpoint records (its training data's stamp,
//      or the tokenizer_config.json beside its vocabulary), else the vocabulary's own (tok/vocab_fit.h);
//      a byte-level BPE file keeps the text as it is;
//   3. the choice is compared with the vocabulary the checkpoint records, and another one is refused in one line
//      (a warning with --allow-vocab-mismatch).
#pragma once

#include "tok/text_tokenizer.h"

#include <string>

namespace bk {

struct CheckpointTokenizer {
  std::string path;
  bool cased = false;
  TextTokenizer load() const { return TextTokenizer::load(path, !cased); }
};

// `checkpoint` resolved (checkpoint_path.h); the error when there is no file says what the text is for
// (`needed_for`: "--fill-mask") and which flags the tool takes (`flags_taken`: "--vocab or --tokenizer").
CheckpointTokenizer checkpoint_tokenizer(const std::string& checkpoint, const TokenizerFlags& flags,
                                         bool allow_mismatch, const std::string& needed_for,
                                         const std::string& flags_taken);

}  // namespace bk
