// A memo of word -> ids: WordPiece ids of the words that are not one vocabulary entry themselves, BPE ids of
// byte-level pieces.
//
// Such a word costs the WordPiece matcher a lookup per candidate piece (often ten or more), the BPE model a merge
// loop; natural text repeats its words (Zipf), so remembering them saves most of that work. Each FullTokenizer and
// BpeTokenizer owns one, so it needs no locking; the memory is bounded: when full it starts over. It never changes
// a result, only its cost.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

class WordCache {
 public:
  WordCache();
  // A word and its hash, computed once for prefetch, append and insert.
  struct Key {
    std::string_view word;
    uint64_t hash;
  };
  static Key key(std::string_view word);

  // Appends the remembered ids of `word` to ids and returns true, or returns false.
  bool append(const Key& key, std::vector<int32_t>& ids) const;
  bool append(std::string_view word, std::vector<int32_t>& ids) const { return append(key(word), ids); }
  void insert(const Key& key, const int32_t* ids, size_t count);
  void insert(std::string_view word, const int32_t* ids, size_t count) { insert(key(word), ids, count); }
  // Starts loading the slot of `key`, so that looking up the words of a line one after another waits for memory
  // once, not once per word (the table is larger than the CPU's caches).
  void prefetch(const Key& key) const { __builtin_prefetch(&slots_[key.hash & (kSlots - 1)]); }

 private:
  static constexpr size_t kSlots = size_t{1} << 17;  // at most half of them used: 4 MB, a corpus's common words
  static constexpr size_t kMaxWordBytes = 64;
  static constexpr size_t kInlineKeyBytes = 16;
  // A short word and a single id live in the slot itself, so that a hit on a common word reads one cache line,
  // the one prefetch() loaded; a longer word lives in keys_ (from key_begin), more ids in ids_ (from ids_begin).
  struct alignas(32) Slot {  // two to a cache line, none across two
    uint64_t hash = 0;
    uint16_t key_size = 0, id_count = 0;  // key_size 0 = empty (words are never empty)
    int32_t ids = 0;                      // the id when id_count is 1, else ids_begin
    union {
      char key[kInlineKeyBytes];          // key_size <= kInlineKeyBytes
      uint32_t key_begin;
    };
  };
  static_assert(sizeof(Slot) == 32);
  void clear();

  std::vector<Slot> slots_;
  size_t used_ = 0;
  std::string keys_;          // the words, back to back
  std::vector<int32_t> ids_;  // their ids, back to back
};

}  // namespace bk
