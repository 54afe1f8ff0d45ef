// The regular expressions byte-level BPE tokenizers split text with, as hand-written scanners: the GPT-2 pattern
// (ByteLevel's own, and RoBERTa's, GPT-NeoX's, ModernBERT's) and the cl100k-style pattern that Llama-3- and
// OLMo-2-style files give a Split pre-tokenizer. Each gives the pieces Oniguruma's leftmost-first search gives
// for that pattern (what HF tokenizers runs), with its Unicode classes: \p{L} letters, \p{N} numbers, \s
// White_Space. A pattern other than these is refused where the tokenizer file is read, never approximated.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class SplitPattern { gpt2, cl100k };

// The pattern a tokenizer file spells, or nullopt for any other.
std::optional<SplitPattern> recognize_split_pattern(std::string_view regex);
// The pattern as tokenizer.json spells it.
const char* split_pattern_regex(SplitPattern pattern);

// Appends the pieces of `text` (valid UTF-8) to `pieces`, in order; together they are all of text.
void split_by_pattern(SplitPattern pattern, std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace bk
