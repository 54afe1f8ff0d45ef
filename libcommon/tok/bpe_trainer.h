// Learning byte-level BPE merges as HF tokenizers' BpeTrainer learns them (models/bpe/trainer.rs): special tokens
// first, then the 256 byte-level characters in code-point order, then one token per merge; each merge is the
// most frequent adjacent pair (counted over distinct words times their frequency), the smaller pair of ids first
// among equals, until the vocabulary is full or the best pair is seen fewer than min_frequency times.
#pragma once

#include "tok/bpe_tokenizer.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace bk {

struct BpeTrainerConfig {
  size_t vocab_size = 50265;  // RoBERTa's
  uint64_t min_frequency = 2;
  std::vector<std::string> special_tokens = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  bool add_prefix_space = false;
  std::vector<NormalForm> normalizer;
  int threads = 1;
};

// Distinct pre-tokenized words (raw bytes) and how often each was seen.
using WordCounts = std::unordered_map<std::string, uint64_t>;

// The tokenizer the trainer's settings describe, before it has a vocabulary: what counts the words.
BpeTokenizerSpec untrained_spec(const BpeTrainerConfig& config);

// Learns the vocabulary and merges from the word counts and returns the whole tokenizer: the special tokens as
// added tokens, and the template of RoBERTa (<s> A </s>) or BERT ([CLS] A [SEP]) when those tokens are among them.
BpeTokenizerSpec train_bpe(const WordCounts& words, const BpeTrainerConfig& config);

}  // namespace bk
