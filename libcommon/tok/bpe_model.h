// A byte-level BPE model: the vocabulary, the ranked merges, and the merge of one pre-tokenized piece into ids,
// with the same result as HF tokenizers' BPE model (models/bpe): at each step the adjacent pair of lowest merge
// rank is merged, the leftmost first among equals, until no pair has a merge. Characters missing from the
// vocabulary take the byte-fallback tokens ("<0xC4>") where the model has byte_fallback, else the unknown token
// (consecutive ones fused with fuse_unk), else nothing, as HF does. Read-only once built; shared by threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

struct BpeModelOptions {
  std::string unk_token;     // empty: none
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;  // a piece that is itself a token is that token, merges or not (Llama-3)
};

// What one encode_piece call needs besides the model; one per thread.
struct BpeScratch {
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // neighbours' positions, -1 at the ends
    bool alive;
  };
  struct Candidate {
    int32_t rank, pos, id;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string mapped;
};

class BpeModel {
 public:
  // The vocabulary by id (ids 0..n-1, each once) and the options; `where` names the file for messages.
  BpeModel(std::vector<std::string> tokens, BpeModelOptions options, const std::string& where);

  // Adds merge number `rank` (0 first): left + right -> the token that is their concatenation. Fails naming the
  // entry when a side or the result is not in the vocabulary, or the pair was given before.
  void add_merge(std::string_view left, std::string_view right, const std::string& where);

  // Appends the ids of one piece, given as its raw bytes (the model sees them through the byte-level alphabet).
  void encode_piece(std::string_view bytes, std::vector<int32_t>& ids, BpeScratch& scratch) const;

  size_t size() const { return tokens_.size(); }
  size_t merge_count() const { return merge_count_; }
  const std::string& token(int32_t id) const { return tokens_[id]; }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // The id of a token, or -1.
  int32_t id_of(std::string_view token) const;
  const BpeModelOptions& options() const { return options_; }
  int32_t unk_id() const { return unk_id_; }
  // The merges in rank order, as (left id, right id).
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merge_list_; }

 private:
  struct MergeSlot {
    uint64_t pair = kEmpty;
    int32_t rank = 0, id = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  const MergeSlot* find_merge(int32_t left, int32_t right) const;
  void grow_merges();
  void add_initial_symbols(std::string_view bytes, BpeScratch& scratch) const;
  void merge_symbols(BpeScratch& scratch) const;

  // token -> id, open addressing (at most half full): each slot holds the high half of the token's hash, to
  // compare before the string, and its id, or -1. Built for every run's file: a node map costs it a heap block per
  // token and a cache miss per lookup (three per merge while the merges are read).
  struct IdSlot {
    uint32_t tag = 0;
    int32_t id = -1;
  };
  // The slot of `token`: its id's, or the empty one where it would go.
  const IdSlot& find_id_slot(std::string_view token, uint64_t hash) const;
  std::vector<std::string> tokens_;
  std::vector<IdSlot> id_slots_;
  BpeModelOptions options_;
  int32_t unk_id_ = -1;
  int32_t byte_ids_[256];                    // the token of each byte's character, or -1
  std::vector<int32_t> byte_fallback_[256];  // the <0xXX> tokens of the character's UTF-8 bytes, or empty
  std::vector<MergeSlot> merge_slots_;       // open addressing, at most half full
  std::vector<std::pair<int32_t, int32_t>> merge_list_;
  size_t merge_count_ = 0;
  std::string merged_scratch_;  // add_merge's left + right
};

}  // namespace bk
