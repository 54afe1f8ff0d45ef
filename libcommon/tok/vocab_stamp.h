// A vocabulary's identity, as data files and checkpoints record it. The ids of any WordPiece vocabulary fit any
// model of its size, so data encoded with one vocabulary and a model trained with another (or text lower-cased for
// a cased model) would train and evaluate without an error, on tokens that mean something else. The tools that
// join data, vocabularies and checkpoints compare their stamps and refuse a mismatch in one line. Torch-free.
//
// Text form (the HDF5 root attribute `bertkit_vocab`, trainer_state.json's "vocab"; bertkit-formats(5)):
//   fnv1a64:HHHHHHHHHHHHHHHH:N:uncased
// the 64-bit FNV-1a hash (lower-case hex) of the tokens in id order, each followed by '\n' (the vocabulary as
// load_vocab reads it, stripped), the number of tokens N, and "uncased" (text lower-cased and accents stripped)
// or "cased"; for a byte-level BPE tokenizer "bpe", the hash then also covering its merges and added tokens
// (tok/text_tokenizer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bk {

class Vocab;

struct VocabStamp {
  uint64_t hash = 0;
  uint64_t size = 0;
  bool lower_case = true;
  bool byte_level = false;  // a byte-level BPE tokenizer (lower_case false)

  std::string text() const;
  // For messages: "30522 tokens, uncased, fnv1a64 0123456789abcdef".
  std::string describe() const;
  bool same_tokens(const VocabStamp& other) const { return hash == other.hash && size == other.size; }
};

VocabStamp vocab_stamp(const Vocab& vocab, bool lower_case);

// Parses text(); nullopt for anything else (a stamp of another form is ignored, never misread).
std::optional<VocabStamp> parse_vocab_stamp(std::string_view text);

// A stamp and what it belongs to, as messages name it ("phase1/part-0.h5", "ckpt/vocab.txt").
struct StampedVocab {
  VocabStamp stamp;
  std::string where;
};

// The flag every tool that compares stamps takes to go ahead anyway (with a warning).
inline constexpr const char* kAllowVocabMismatchFlag = "allow-vocab-mismatch";
inline constexpr const char* kAllowVocabMismatchHelp =
    "go ahead when the data's, the checkpoint's and the given vocabularies or casings differ (a warning instead of "
    "an error)";

// Fails in one line naming both sides when their tokens differ, or (with compare_case) their casing; with
// `allow`, prints that line on stderr as a warning and returns.
void check_same_vocabulary(const StampedVocab& a, const StampedVocab& b, bool compare_case, bool allow);

}  // namespace bk
