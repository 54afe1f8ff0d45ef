#include "tok/vocab_fit.h"

#include "tok/vocab.h"
#include "util/printable.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace bk {

void UnknownCount::add(std::span<const int32_t> ids, int32_t unk_id) {
  pieces += ids.size();
  unknown += static_cast<uint64_t>(std::count(ids.begin(), ids.end(), unk_id));
}

std::string UnknownCount::percent() const {
  const double p = 100.0 * fraction();
  return p > 0 && p < 1 ? fmt::format("{:.2g}%", p) : fmt::format("{:.1f}%", p);
}

bool vocabulary_is_cased(const Vocab& vocab) {
  // Google's cased vocabulary: 28% of its tokens hold an upper-case letter; its uncased one none, the Chinese one
  // 2 of 21,128. One in a hundred sets them apart, and a learned vocabulary's few stray tokens too.
  size_t upper = 0, words = 0;
  for (size_t id = 0; id < vocab.size(); ++id) {
    const std::string_view token = vocab.token(static_cast<int32_t>(id));
    if (token.starts_with('[') && token.ends_with(']')) continue;  // [CLS], [unused0], ...
    ++words;
    if (std::any_of(token.begin(), token.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) ++upper;
  }
  return words > 0 && upper * 100 >= words;
}

void warn_if_vocabulary_misfits(const UnknownCount& count, const Vocab& vocab, bool cased) {
  const std::string name = printable_excerpt(vocab.name(), 200);
  const bool vocab_cased = vocabulary_is_cased(vocab);
  if (count.pieces > 0 && vocab_cased != cased) {
    std::fprintf(stderr, "%s: warning: the vocabulary %s is %s but the text was %s (%s [UNK]): %s\n",
                 tool_name().c_str(), name.c_str(), vocab_cased ? "cased" : "lower-case",
                 cased ? "kept cased" : "lower-cased", count.percent().c_str(),
                 vocab_cased ? "give --cased" : "drop --cased");
  } else if (count.fraction() > kUnknownWarnFraction) {
    std::fprintf(stderr,
                 "%s: warning: %s of the %llu pieces are [UNK]: the vocabulary %s does not fit this text; check "
                 "that it is the one meant for it\n",
                 tool_name().c_str(), count.percent().c_str(), static_cast<unsigned long long>(count.pieces),
                 name.c_str());
  }
}

}  // namespace bk
