#include "tok/wordpiece_trainer.h"

#include "io/progress.h"
#include "util/error.h"
#include "io/input.h"
#include "io/line_batch.h"
#include "util/utf8.h"
#include "tok/basic_tokenizer.h"
#include "util/ordered_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace bk {
namespace {

using Pair = std::pair<int32_t, int32_t>;
struct PairHash {
  size_t operator()(const Pair& p) const { return std::hash<uint64_t>()((uint64_t(uint32_t(p.first)) << 32) | uint32_t(p.second)); }
};

// The working state of BPE: every distinct word as a sequence of piece ids, the count of every adjacent pair,
// and for every pair the words it occurs in (so a merge only revisits those).
struct Merger {
  std::vector<std::string> pieces;                 // id -> text (with "##" for continuations)
  std::unordered_map<std::string, int32_t> ids;    // text -> id
  std::vector<std::vector<int32_t>> words;
  std::vector<uint64_t> counts;
  std::unordered_map<Pair, int64_t, PairHash> pair_counts;
  std::unordered_map<Pair, std::unordered_set<uint32_t>, PairHash> pair_words;

  int32_t intern(const std::string& text) {
    auto [it, added] = ids.emplace(text, static_cast<int32_t>(pieces.size()));
    if (added) pieces.push_back(text);
    return it->second;
  }
  void count_pairs(uint32_t w, int64_t sign) {
    const auto& s = words[w];
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      Pair p{s[i], s[i + 1]};
      pair_counts[p] += sign * static_cast<int64_t>(counts[w]);
      if (sign > 0) pair_words[p].insert(w);
    }
  }
};

// Heap order: higher count first; on equal counts the smaller pair of ids (older pieces) first.
struct HeapEntry {
  int64_t count;
  Pair pair;
  bool operator<(const HeapEntry& o) const { return count != o.count ? count < o.count : o.pair < pair; }
};

}  // namespace

std::vector<std::string> learn_pieces(const std::vector<std::pair<std::vector<std::string>, uint64_t>>& words,
                                      const WordpieceTrainerConfig& cfg, Progress* progress) {
  Merger m;
  for (const auto& s : cfg.special_tokens) m.intern(s);

  // The alphabet: characters by frequency (ties by code point order of their UTF-8), capped, then sorted.
  std::map<std::string, uint64_t> char_counts;
  for (const auto& [chars, count] : words)
    for (const auto& c : chars) char_counts[c] += count;
  std::vector<std::pair<std::string, uint64_t>> by_count(char_counts.begin(), char_counts.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::set<std::string> alphabet(cfg.initial_alphabet.begin(), cfg.initial_alphabet.end());
  for (const auto& [c, _] : by_count) {
    if (alphabet.size() >= std::max(cfg.limit_alphabet, cfg.initial_alphabet.size())) break;
    alphabet.insert(c);
  }
  for (const auto& c : alphabet) m.intern(c);  // std::set of UTF-8 strings iterates in code point order

  for (const auto& [chars, count] : words) {
    std::vector<int32_t> seq;
    for (size_t i = 0; i < chars.size(); ++i) {
      if (!alphabet.count(chars[i])) continue;
      seq.push_back(m.intern(seq.empty() ? chars[i] : cfg.prefix + chars[i]));
    }
    if (seq.empty()) continue;
    m.words.push_back(std::move(seq));
    m.counts.push_back(count);
  }
  for (uint32_t w = 0; w < m.words.size(); ++w) m.count_pairs(w, +1);

  std::priority_queue<HeapEntry> heap;
  for (const auto& [p, c] : m.pair_counts) heap.push({c, p});
  if (progress) progress->stage("merging", cfg.vocab_size, "tokens");
  while (m.pieces.size() < cfg.vocab_size && !heap.empty()) {
    if (progress && progress->wants_update()) progress->update(m.pieces.size());
    HeapEntry top = heap.top();
    heap.pop();
    auto it = m.pair_counts.find(top.pair);
    int64_t current = it == m.pair_counts.end() ? 0 : it->second;
    if (current != top.count) {  // stale entry: the pair's count changed since it was pushed
      if (current > 0) heap.push({current, top.pair});
      continue;
    }
    if (static_cast<uint64_t>(current) < cfg.min_frequency) break;
    const auto [a, b] = top.pair;
    std::string right = m.pieces[b];
    if (right.starts_with(cfg.prefix)) right.erase(0, cfg.prefix.size());
    const int32_t merged = m.intern(m.pieces[a] + right);

    std::vector<uint32_t> where(m.pair_words[top.pair].begin(), m.pair_words[top.pair].end());
    std::sort(where.begin(), where.end());
    std::unordered_set<Pair, PairHash> touched;
    for (uint32_t w : where) {
      auto& s = m.words[w];
      m.count_pairs(w, -1);
      std::vector<int32_t> next;
      next.reserve(s.size());
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          next.push_back(merged);
          ++i;
        } else {
          next.push_back(s[i]);
        }
      }
      for (size_t i = 0; i + 1 < s.size(); ++i) touched.insert({s[i], s[i + 1]});
      s = std::move(next);
      m.count_pairs(w, +1);
      for (size_t i = 0; i + 1 < s.size(); ++i) touched.insert({s[i], s[i + 1]});
    }
    m.pair_counts.erase(top.pair);
    m.pair_words.erase(top.pair);
    for (const auto& p : touched) {
      auto pc = m.pair_counts.find(p);
      if (pc == m.pair_counts.end()) continue;
      if (pc->second <= 0) {
        m.pair_counts.erase(pc);
        m.pair_words.erase(p);
      } else {
        heap.push({pc->second, p});
      }
    }
  }
  return m.pieces;
}

std::vector<std::string> train_vocab(const std::vector<std::string>& inputs, const WordpieceTrainerConfig& cfg,
                                     WordpieceTrainerStats& stats, Progress* progress) {
  std::unordered_map<std::string, uint64_t> word_counts;
  using Counts = std::vector<std::pair<std::string, uint64_t>>;
  if (progress) {
    uint64_t total = 0;
    for (const auto& path : inputs) {
      std::error_code ec;
      if (path != "-" && std::filesystem::is_regular_file(path, ec)) total += std::filesystem::file_size(path, ec);
    }
    progress->stage("counting", total);
  }
  uint64_t raw_before = 0;
  for (const auto& path : inputs) {
    Input input(path, cfg.threads);
    LineReader reader(input);
    auto produce = [&](LineBatch& b) {  // on this thread
      if (progress && progress->wants_update())
        progress->update(raw_before + input.raw_offset(), fmt::format("{} words ({} distinct)", stats.words,
                                                                      word_counts.size()));
      return read_line_batch(reader, b);
    };
    auto work = [&](LineBatch& b) {
      BasicTokenizer basic(cfg.lower_case);
      LineWords words;
      std::unordered_map<std::string, uint64_t> local;
      for (size_t i = 0; i < b.size(); ++i) {
        if (size_t bad = utf8_invalid_offset(b.line(i)); bad != std::string_view::npos)
          fail("{}: line {}: invalid UTF-8 at column {}", b.file, b.first_line + i, bad + 1);
        words.clear();
        basic.tokenize(b.line(i), words);
        for (size_t k = 0; k < words.size(); ++k) ++local[std::string(words[k])];
      }
      Counts out(local.begin(), local.end());
      return out;
    };
    auto consume = [&](Counts& counts) {
      for (auto& [w, c] : counts) {
        word_counts[w] += c;
        stats.words += c;
      }
    };
    ordered_parallel<LineBatch, Counts>(cfg.threads, produce, work, consume);
    stats.lines += reader.line_number();
    stats.bytes += input.offset();
    raw_before += input.raw_offset();
  }
  if (word_counts.empty()) fail("{}: no words to learn from", inputs.size() == 1 ? inputs[0] : "the inputs");
  stats.distinct_words = word_counts.size();

  // Words in a fixed order (by text) so that the result does not depend on hash-map iteration.
  std::vector<std::pair<std::string, uint64_t>> sorted(word_counts.begin(), word_counts.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::pair<std::vector<std::string>, uint64_t>> words;
  words.reserve(sorted.size());
  for (const auto& [w, c] : sorted) {
    std::vector<std::string> chars;
    for (size_t pos = 0; pos < w.size();) {
      size_t start = pos;
      next_code_point(w, pos);
      chars.emplace_back(w.substr(start, pos - start));
    }
    words.emplace_back(std::move(chars), c);
  }
  auto pieces = learn_pieces(words, cfg, progress);
  stats.merges = pieces.size();
  return pieces;
}

}  // namespace bk
