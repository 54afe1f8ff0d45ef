#include "tok/word_cache.h"

#include "tok/hash.h"

#include <cstring>

namespace bk {
namespace {

using detail::bytes_equal;
using detail::hash_bytes;

}  // namespace

WordCache::WordCache() : slots_(kSlots) {}

bool WordCache::append(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.size() > kMaxWordBytes) return false;
  const uint64_t h = hash_bytes(word.data(), word.size());
  for (size_t i = h & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
    const Slot& s = slots_[i];
    if (s.key_size == 0) return false;
    if (s.hash == h && s.key_size == word.size() && bytes_equal(keys_.data() + s.key_begin, word.data(), word.size())) {
      ids.insert(ids.end(), ids_.begin() + s.ids_begin, ids_.begin() + s.ids_begin + s.id_count);
      return true;
    }
  }
}

void WordCache::insert(std::string_view word, const int32_t* ids, size_t count) {
  if (word.size() > kMaxWordBytes || count > kMaxWordBytes) return;  // a word has at most one id per byte
  if (used_ >= kSlots / 2) clear();
  const uint64_t h = hash_bytes(word.data(), word.size());
  size_t i = h & (kSlots - 1);
  while (slots_[i].key_size != 0) i = (i + 1) & (kSlots - 1);
  Slot& s = slots_[i];
  s.hash = h;
  s.key_begin = static_cast<uint32_t>(keys_.size());
  s.key_size = static_cast<uint16_t>(word.size());
  s.ids_begin = static_cast<uint32_t>(ids_.size());
  s.id_count = static_cast<uint16_t>(count);
  keys_.append(word);
  ids_.insert(ids_.end(), ids, ids + count);
  ++used_;
}

void WordCache::clear() {
  slots_.assign(kSlots, Slot{});
  keys_.clear();
  ids_.clear();
  used_ = 0;
}

}  // namespace bk
