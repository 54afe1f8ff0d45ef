// The tokenizer files an exported model carries (torch-free): vocab.txt (WordPiece) or tokenizer.json (byte-level
// BPE), and transformers' tokenizer_config.json and special_tokens_map.json, so that AutoTokenizer.from_pretrained(dir)
// and pipeline("fill-mask", dir) get the model's tokenizer (BERT's with the model's case handling, or the BPE one
// with its special tokens) instead of a silently empty one.
#pragma once

#include "tok/vocab_stamp.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bk {

struct TokenizerFiles {
  std::string vocab_path;
  std::string vocab_bytes;  // copied verbatim: vocab.txt, or the tokenizer.json (written from vocab.json + merges.txt)
  bool lower_case = true;
  bool byte_level = false;  // a byte-level BPE tokenizer: vocab_bytes is its tokenizer.json
  std::vector<std::pair<std::string, std::string>> special_tokens;  // transformers' names: ("cls_token", "<s>") ...
  int64_t pad_id = -1;  // a byte-level tokenizer's padding token, for an HF config's pad_token_id
  int64_t max_length = 512;  // model_max_length: the model's max_position_embeddings
};

// Reads the vocabulary and decides do_lower_case: `lower_case` when given, else a tokenizer_config.json beside
// the vocabulary, else from the vocabulary itself (tok/vocab_fit.h: Google's cased vocabularies hold upper-case
// word pieces, the uncased ones none). bk::Error naming the file when a BERT special token is missing or the size is not the
// model's vocab_size.
TokenizerFiles read_tokenizer_files(const std::string& vocab_path, std::optional<bool> lower_case,
                                    int64_t vocab_size, int64_t max_length);

// The JSON files transformers reads beside vocab.txt or tokenizer.json.
std::string tokenizer_config_json(const TokenizerFiles& files);
std::string special_tokens_map_json(const TokenizerFiles& files);

// The three files as (name, contents).
using NamedFiles = std::vector<std::pair<std::string, std::string>>;
NamedFiles tokenizer_file_set(const TokenizerFiles& files);

// The tokenizer a training run writes into each of its checkpoints: from `vocab` when given (bk::Error when it
// does not fit the model), else the vocabulary beside `checkpoint` (the one the run starts or resumes from) when it
// fits the model; empty when there is none.
NamedFiles training_tokenizer_files(const std::string& vocab, const std::string& checkpoint, int64_t vocab_size,
                                    int64_t max_length, std::optional<bool> lower_case = std::nullopt);

// A vocabulary file's stamp (tok/vocab_stamp.h), cased as `lower_case` says, else as read_tokenizer_files decides;
// a byte-level BPE file's is its tokenizer's (tok/text_tokenizer.h).
StampedVocab vocab_file_stamp(const std::string& vocab_path, std::optional<bool> lower_case);

// The vocabulary a resolved checkpoint was made with: the tokenizer beside it (vocab_beside_checkpoint), else the
// stamp its trainer_state.json records (bert-train records its data's); nullopt when it says neither.
std::optional<StampedVocab> checkpoint_vocab_stamp(const std::string& resolved);

}  // namespace bk
