#include "tok/vocab_stamp.h"

#include "tok/vocab.h"
#include "util/fnv1a.h"
#include "util/error.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>

namespace bk {
namespace {

const char* casing(bool lower_case) { return lower_case ? "uncased" : "cased"; }
const char* casing(const VocabStamp& s) { return s.byte_level ? "bpe" : casing(s.lower_case); }

// The unsigned number spelled by all of `text` in `base`.
std::optional<uint64_t> parse_number(std::string_view text, int base) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::string VocabStamp::text() const { return fmt::format("fnv1a64:{:016x}:{}:{}", hash, size, casing(*this)); }

std::string VocabStamp::describe() const {
  return fmt::format("{} tokens, {}, fnv1a64 {:016x}", size, byte_level ? "byte-level BPE" : casing(lower_case), hash);
}

VocabStamp vocab_stamp(const Vocab& vocab, bool lower_case) {
  VocabStamp stamp;
  stamp.hash = kFnv1aOffset;
  for (size_t id = 0; id < vocab.size(); ++id)
    stamp.hash = fnv1a64("\n", fnv1a64(vocab.token(static_cast<int32_t>(id)), stamp.hash));
  stamp.size = vocab.size();
  stamp.lower_case = lower_case;
  return stamp;
}

std::optional<VocabStamp> parse_vocab_stamp(std::string_view text) {
  std::string_view fields[4];
  for (size_t i = 0; i < 4; ++i) {
    const size_t colon = i < 3 ? text.find(':') : text.size();
    if (colon == std::string_view::npos) return std::nullopt;
    fields[i] = text.substr(0, colon);
    text.remove_prefix(i < 3 ? colon + 1 : colon);
  }
  const auto hash = fields[1].size() == 16 ? parse_number(fields[1], 16) : std::nullopt;
  const auto size = parse_number(fields[2], 10);
  if (fields[0] != "fnv1a64" || !hash || !size || (fields[3] != "uncased" && fields[3] != "cased" && fields[3] != "bpe"))
    return std::nullopt;
  return VocabStamp{*hash, *size, fields[3] == "uncased", fields[3] == "bpe"};
}

void check_same_vocabulary(const StampedVocab& a, const StampedVocab& b, bool compare_case, bool allow) {
  std::string problem;
  if (!a.stamp.same_tokens(b.stamp))
    problem = fmt::format("{} ({}) and {} ({}) are of different vocabularies", a.where, a.stamp.describe(), b.where,
                          b.stamp.describe());
  else if (compare_case && (a.stamp.lower_case != b.stamp.lower_case || a.stamp.byte_level != b.stamp.byte_level))
    problem = fmt::format("{} is {} but {} is {}", a.where, casing(a.stamp), b.where, casing(b.stamp));
  if (problem.empty()) return;
  if (!allow) fail("{}: use the vocabulary and casing they were made with, or --{} to go ahead", problem,
                   kAllowVocabMismatchFlag);
  std::fprintf(stderr, "%s: warning: %s (going ahead: --%s)\n", tool_name().c_str(), problem.c_str(),
               kAllowVocabMismatchFlag);
}

}  // namespace bk
