#include "tok/bpe_model.h"

#include "tok/byte_level.h"
#include "tok/hash.h"
#include "util/error.h"
#include "util/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace bk {
namespace {

// Fibonacci hashing of a pair key into a table of 2^bits slots (a multiply, no byte loop: this runs per pair).
size_t slot_of(uint64_t key, size_t mask) { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask; }

}  // namespace

const BpeModel::IdSlot& BpeModel::find_id_slot(std::string_view token, uint64_t hash) const {
  const size_t mask = id_slots_.size() - 1;
  const auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const IdSlot& slot = id_slots_[i];
    if (slot.id < 0 || (slot.tag == tag && tokens_[slot.id] == token)) return slot;
  }
}

BpeModel::BpeModel(std::vector<std::string> tokens, BpeModelOptions options, const std::string& where)
    : tokens_(std::move(tokens)), options_(std::move(options)) {
  id_slots_.resize(std::bit_ceil(std::max<size_t>(tokens_.size() * 2, 16)));
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const uint64_t hash = detail::hash_bytes(tokens_[id].data(), tokens_[id].size());
    auto& slot = const_cast<IdSlot&>(find_id_slot(tokens_[id], hash));
    if (slot.id >= 0)
      fail("{}: the token '{}' has two ids ({} and {})", where, printable_excerpt(tokens_[id]), slot.id, id);
    slot = {static_cast<uint32_t>(hash >> 32), static_cast<int32_t>(id)};
  }
  if (!options_.unk_token.empty()) {
    unk_id_ = id_of(options_.unk_token);
    if (unk_id_ < 0) fail("{}: the unknown token '{}' is not in the vocabulary", where, printable_excerpt(options_.unk_token));
  }
  for (int b = 0; b < 256; ++b) {
    std::string ch;
    append_byte_level(ch, std::string_view(reinterpret_cast<const char*>(&b), 1));
    byte_ids_[b] = id_of(ch);
    if (!options_.byte_fallback) continue;
    for (unsigned char u : ch) byte_fallback_[b].push_back(id_of(fmt::format("<0x{:02X}>", u)));
    if (std::count(byte_fallback_[b].begin(), byte_fallback_[b].end(), -1) > 0) byte_fallback_[b].clear();
  }
  merge_slots_.resize(1024);
}

int32_t BpeModel::id_of(std::string_view token) const {
  return find_id_slot(token, detail::hash_bytes(token.data(), token.size())).id;
}

const BpeModel::MergeSlot* BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key = pair_key(left, right);
  const size_t mask = merge_slots_.size() - 1;
  for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
    const MergeSlot& slot = merge_slots_[i];
    if (slot.pair == key) return &slot;
    if (slot.pair == kEmpty) return nullptr;
  }
}

void BpeModel::grow_merges() {
  std::vector<MergeSlot> old(merge_slots_.size() * 2);
  old.swap(merge_slots_);
  const size_t mask = merge_slots_.size() - 1;
  for (const MergeSlot& slot : old) {
    if (slot.pair == kEmpty) continue;
    size_t i = slot_of(slot.pair, mask);
    while (merge_slots_[i].pair != kEmpty) i = (i + 1) & mask;
    merge_slots_[i] = slot;
  }
}

void BpeModel::add_merge(std::string_view left, std::string_view right, const std::string& where) {
  const int32_t a = id_of(left), b = id_of(right);
  const size_t rank = merge_count_;
  for (auto [side, id] : {std::pair{left, a}, std::pair{right, b}})
    if (id < 0) fail("{}: merge {} ('{}' '{}'): '{}' is not in the vocabulary", where, rank, printable_excerpt(left),
                     printable_excerpt(right), printable_excerpt(side));
  merged_scratch_.assign(left);
  merged_scratch_.append(right);
  const int32_t merged = id_of(merged_scratch_);
  if (merged < 0)
    fail("{}: merge {} ('{}' '{}'): the merged token is not in the vocabulary", where, rank, printable_excerpt(left),
         printable_excerpt(right));
  if (const MergeSlot* seen = find_merge(a, b))
    fail("{}: merge {} ('{}' '{}') repeats merge {}", where, rank, printable_excerpt(left), printable_excerpt(right),
         seen->rank);
  if ((merge_count_ + 1) * 2 > merge_slots_.size()) grow_merges();
  const uint64_t key = pair_key(a, b);
  const size_t mask = merge_slots_.size() - 1;
  size_t i = slot_of(key, mask);
  while (merge_slots_[i].pair != kEmpty) i = (i + 1) & mask;
  merge_slots_[i] = {key, static_cast<int32_t>(rank), merged};
  merge_list_.emplace_back(a, b);
  ++merge_count_;
}

// One symbol per byte (the byte-level alphabet has one character per byte), as HF's merge_word builds its Word.
void BpeModel::add_initial_symbols(std::string_view bytes, BpeScratch& scratch) const {
  auto& symbols = scratch.symbols;
  symbols.clear();
  const auto add = [&symbols](int32_t id) {
    const auto pos = static_cast<int32_t>(symbols.size());
    if (pos > 0) symbols.back().next = pos;
    symbols.push_back({id, pos - 1, -1, true});
  };
  bool unk_pending = false;  // an unknown token waits to be added (fuse_unk extends it)
  for (unsigned char b : bytes) {
    if (byte_ids_[b] >= 0) {
      if (unk_pending) add(unk_id_);
      unk_pending = false;
      add(byte_ids_[b]);
    } else if (!byte_fallback_[b].empty()) {
      for (int32_t id : byte_fallback_[b]) add(id);  // HF does not add a pending unknown token first
    } else if (unk_id_ >= 0) {
      if (unk_pending && !options_.fuse_unk) add(unk_id_);
      unk_pending = true;
    }
  }
  if (unk_pending) add(unk_id_);
}

void BpeModel::merge_symbols(BpeScratch& scratch) const {
  auto& symbols = scratch.symbols;
  auto& heap = scratch.heap;
  // A min-heap on (rank, position): the lowest rank first, the leftmost among equals.
  const auto later = [](const BpeScratch::Candidate& x, const BpeScratch::Candidate& y) {
    return x.rank != y.rank ? x.rank > y.rank : x.pos > y.pos;
  };
  const auto push = [&](int32_t pos) {
    const int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const MergeSlot* m = find_merge(symbols[pos].id, symbols[next].id)) {
      heap.push_back({m->rank, pos, m->id});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  heap.clear();
  for (int32_t pos = 0; pos + 1 < static_cast<int32_t>(symbols.size()); ++pos) push(pos);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const BpeScratch::Candidate top = heap.back();
    heap.pop_back();
    BpeScratch::Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    const MergeSlot* m = find_merge(left.id, symbols[left.next].id);
    if (m == nullptr || m->id != top.id) continue;  // stale: the pair here changed since
    BpeScratch::Symbol& right = symbols[left.next];
    right.alive = false;
    left.id = top.id;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
}

void BpeModel::encode_piece(std::string_view bytes, std::vector<int32_t>& ids, BpeScratch& scratch) const {
  if (bytes.empty()) return;
  if (options_.ignore_merges) {
    scratch.mapped.clear();
    append_byte_level(scratch.mapped, bytes);
    if (const int32_t id = id_of(scratch.mapped); id >= 0) {
      ids.push_back(id);
      return;
    }
  }
  add_initial_symbols(bytes, scratch);
  merge_symbols(scratch);
  for (const BpeScratch::Symbol& s : scratch.symbols)
    if (s.alive) ids.push_back(s.id);
}

}  // namespace bk
