#include "tok/word_cache.h"

#include "tok/hash.h"

#include <cstring>

namespace bk {
namespace {

using detail::bytes_equal;
using detail::hash_bytes;

}  // namespace

WordCache::WordCache() : slots_(kSlots) {}

WordCache::Key WordCache::key(std::string_view word) { return {word, hash_bytes(word.data(), word.size())}; }

bool WordCache::append(const Key& key, std::vector<int32_t>& ids) const {
  const std::string_view word = key.word;
  if (word.size() > kMaxWordBytes) return false;
  for (size_t i = key.hash & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
    const Slot& s = slots_[i];
    if (s.key_size == 0) return false;
    if (s.hash == key.hash && s.key_size == word.size() &&
        bytes_equal(word.size() <= kInlineKeyBytes ? s.key : keys_.data() + s.key_begin, word.data(), word.size())) {
      if (s.id_count == 1) {
        ids.push_back(s.ids);
        return true;
      }
      // A word has a few ids: a loop, not a library copy for each.
      const int32_t* from = ids_.data() + s.ids;
      for (uint16_t k = 0; k < s.id_count; ++k) ids.push_back(from[k]);
      return true;
    }
  }
}

void WordCache::insert(const Key& key, const int32_t* ids, size_t count) {
  const std::string_view word = key.word;
  if (word.size() > kMaxWordBytes || count > kMaxWordBytes) return;  // a word has at most one id per byte
  if (used_ >= kSlots / 2) clear();
  size_t i = key.hash & (kSlots - 1);
  while (slots_[i].key_size != 0) i = (i + 1) & (kSlots - 1);
  Slot& s = slots_[i];
  s.hash = key.hash;
  s.key_size = static_cast<uint16_t>(word.size());
  s.id_count = static_cast<uint16_t>(count);
  if (word.size() <= kInlineKeyBytes) {
    std::memcpy(s.key, word.data(), word.size());
  } else {
    s.key_begin = static_cast<uint32_t>(keys_.size());
    keys_.append(word);
  }
  if (count == 1) {
    s.ids = ids[0];
  } else {
    s.ids = static_cast<int32_t>(ids_.size());
    ids_.insert(ids_.end(), ids, ids + count);
  }
  ++used_;
}

void WordCache::clear() {
  slots_.assign(kSlots, Slot{});
  keys_.clear();
  ids_.clear();
  used_ = 0;
}

}  // namespace bk
