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
        bytes_equal(keys_.data() + s.key_begin, word.data(), word.size())) {
      ids.insert(ids.end(), ids_.begin() + s.ids_begin, ids_.begin() + s.ids_begin + s.id_count);
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
