// Learning a WordPiece vocabulary from text (`wordpiece train`).
//
// Modelled on Hugging Face tokenizers' BertWordPieceTokenizer.train (a BPE trainer whose merges produce "##"
// continuation pieces), with the same knobs and defaults, but words come from our own BasicTokenizer (Google's
// rules), so the vocabulary fits what `wordpiece encode` and mkpretrain will do with it:
//   1. count the words of the text (uncased: lower-cased and accent-stripped first);
//   2. the alphabet: the limit_alphabet most frequent characters (plus any initial_alphabet), sorted by code point;
//      every word becomes its first character and "##"-prefixed following characters (characters outside the
//      alphabet are dropped from the word);
//   3. repeatedly merge the most frequent adjacent pair (ties: the pair whose pieces were created first) into
//      one piece, until the vocabulary has vocab_size entries or the best pair is seen fewer than min_frequency
//      times.
// The vocabulary is: special tokens, the alphabet, the "##" single characters, then merges in the order made.
// Deterministic: the same text and options give the same file, whatever the number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

struct WordpieceTrainerConfig {
  size_t vocab_size = 30000;
  uint64_t min_frequency = 2;
  size_t limit_alphabet = 1000;
  std::vector<std::string> initial_alphabet;  // single characters always kept
  std::vector<std::string> special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  bool lower_case = true;
  std::string prefix = "##";
  int threads = 1;
};

struct WordpieceTrainerStats {
  uint64_t lines = 0, words = 0, distinct_words = 0, bytes = 0, merges = 0;
};

class Progress;

// Learns a vocabulary (tokens in id order) from the inputs ("-" = stdin). With a progress line: stage
// "counting" (bytes of the input files read, of their sizes), then "merging" (tokens of --vocab-size).
std::vector<std::string> train_vocab(const std::vector<std::string>& inputs, const WordpieceTrainerConfig& config,
                                     WordpieceTrainerStats& stats, Progress* progress = nullptr);

// The BPE core on counted words (each word a sequence of characters as UTF-8 strings); exposed for tests.
std::vector<std::string> learn_pieces(const std::vector<std::pair<std::vector<std::string>, uint64_t>>& words,
                                      const WordpieceTrainerConfig& config, Progress* progress = nullptr);

}  // namespace bk
