// A memo of word -> WordPiece ids for the words that are not one vocabulary entry themselves.
//
// Such a word costs the matcher a lookup per candidate piece (often ten or more); natural text repeats its
// words (Zipf), so remembering them saves most of that work. Each FullTokenizer owns one, so it needs no
// locking; the memory is bounded: when full it starts over. It never changes a result, only its cost.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

class WordCache {
 public:
  WordCache();
  // Appends the remembered ids of `word` to ids and returns true, or returns false.
  bool append(std::string_view word, std::vector<int32_t>& ids) const;
  void insert(std::string_view word, const int32_t* ids, size_t count);

 private:
  static constexpr size_t kSlots = size_t{1} << 16;  // at most half of them used
  static constexpr size_t kMaxWordBytes = 64;
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_begin = 0, ids_begin = 0;
    uint16_t key_size = 0, id_count = 0;  // key_size 0 = empty (words are never empty)
  };
  void clear();

  std::vector<Slot> slots_;
  size_t used_ = 0;
  std::string keys_;          // the words, back to back
  std::vector<int32_t> ids_;  // their ids, back to back
};

}  // namespace bk
