#include "tok/wordpiece_matcher.h"

#include <algorithm>

namespace bk {
namespace {

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t count_code_points(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += !is_continuation_byte(c);
  return n;
}

}  // namespace

WordPieceMatcher::WordPieceMatcher(const Vocab& vocab, size_t max_chars)
    : vocab_(vocab), max_chars_(max_chars), unk_id_(vocab.require_unk()) {}

void WordPieceMatcher::encode_word(std::string_view word, std::vector<int32_t>& ids) const {
  const size_t n = word.size();
  // Bytes >= code points, so only long words need counting.
  if (n > max_chars_ && count_code_points(word) > max_chars_) {
    ids.push_back(unk_id_);
    return;
  }
  const size_t mark = ids.size();
  size_t start = 0;
  while (start < n) {
    const bool first = start == 0;
    size_t end = std::min(n, start + (first ? vocab_.max_token_bytes() : vocab_.max_continuation_bytes()));
    while (end < n && end > start && is_continuation_byte(word[end])) --end;  // a code point boundary
    int32_t id = Vocab::kNotFound;
    while (end > start) {
      std::string_view piece = word.substr(start, end - start);
      id = first ? vocab_.find(piece) : vocab_.find_continuation(piece);
      if (id != Vocab::kNotFound) break;
      do --end; while (end > start && is_continuation_byte(word[end]));
    }
    if (id == Vocab::kNotFound) {  // nothing covers word[start..]: the whole word is unknown
      ids.resize(mark);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(id);
    start = end;
  }
}

}  // namespace bk
