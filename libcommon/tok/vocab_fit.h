// Whether a vocabulary fits the text a tool tokenizes with it. A vocabulary that does not (a 15-token file, a
// cased vocabulary on lower-cased text or the reverse) still encodes every line, and only the [UNK] pieces show
// it. Every tool that tokenizes counts them here, prints their share in its summary line, and warns in one line
// when the share is high or the casing disagrees with the vocabulary's. Torch-free.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace bk {

class Vocab;

// Above this share of [UNK] pieces a tool warns (English Wikipedia under Google's own vocabulary: well below 0.1%).
inline constexpr double kUnknownWarnFraction = 0.05;

struct UnknownCount {
  uint64_t pieces = 0, unknown = 0;

  void add(std::span<const int32_t> ids, int32_t unk_id);
  void add(const UnknownCount& other) { pieces += other.pieces, unknown += other.unknown; }
  double fraction() const { return pieces ? static_cast<double>(unknown) / static_cast<double>(pieces) : 0.0; }
  // "0.02%": two significant digits below 1%, so that 0.004% and 0.04% read apart.
  std::string percent() const;
  // For a summary line: "0.02% [UNK]".
  std::string summary() const { return percent() + " [UNK]"; }
};

// True when at least 1% of the vocabulary's tokens (besides [CLS] and the other bracketed ones) hold an upper-case
// ASCII letter: Google's cased vocabularies, and one wordpiece train learned with --cased.
bool vocabulary_is_cased(const Vocab& vocab);

// One warning line on stderr when more than kUnknownWarnFraction of the pieces are [UNK], or when `cased` (how
// the text was tokenized) disagrees with the vocabulary's casing; it names the vocabulary and what to change.
void warn_if_vocabulary_misfits(const UnknownCount& count, const Vocab& vocab, bool cased);

}  // namespace bk
