#include "tok/bpe_trainer.h"

#include "tok/byte_level.h"
#include "util/utf8.h"

#include <algorithm>
#include <map>
#include <queue>

namespace bk {
namespace {

using Pair = uint64_t;  // (left id << 32) | right id: ordering these orders pairs as HF's (u32, u32) tuples
Pair make_pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
int32_t left_of(Pair p) { return static_cast<int32_t>(p >> 32); }
int32_t right_of(Pair p) { return static_cast<int32_t>(p & 0xFFFFFFFFu); }

// A queue entry: a pair, its count when pushed, and the words it was seen in (as HF keeps them).
struct Candidate {
  Pair pair;
  int64_t count;
  std::vector<uint32_t> words;
  bool operator<(const Candidate& other) const {  // the top is the largest count, then the smallest pair
    return count != other.count ? count < other.count : pair > other.pair;
  }
};

struct Change {
  Pair pair;
  int delta;
  uint32_t word;
};

// HF's Word::merge: replaces each (a, b) from the left with `merged` and reports the pairs that appear and vanish.
void merge_word(std::vector<int32_t>& symbols, int32_t a, int32_t b, int32_t merged, uint32_t word,
                std::vector<Change>& changes) {
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i] != a || i + 1 >= symbols.size() || symbols[i + 1] != b) continue;
    if (i > 0) {
      changes.push_back({make_pair_key(symbols[i - 1], a), -1, word});
      changes.push_back({make_pair_key(symbols[i - 1], merged), 1, word});
    }
    symbols[i] = merged;
    symbols.erase(symbols.begin() + static_cast<ptrdiff_t>(i) + 1);
    if (i + 1 < symbols.size()) {
      changes.push_back({make_pair_key(b, symbols[i + 1]), -1, word});
      changes.push_back({make_pair_key(merged, symbols[i + 1]), 1, word});
    }
  }
}

using WhereSeen = std::unordered_map<Pair, std::vector<uint32_t>>;

void push_candidates(WhereSeen& where, const std::unordered_map<Pair, int64_t>& counts,
                     std::priority_queue<Candidate>& queue) {
  std::vector<std::pair<Pair, std::vector<uint32_t>>> entries(where.begin(), where.end());
  std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [pair, words] : entries) {
    const int64_t count = counts.at(pair);
    if (count <= 0) continue;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    queue.push({pair, count, std::move(words)});
  }
  where.clear();
}

PostTemplate template_for(const BpeTokenizerSpec& spec) {
  for (auto [cls, sep, roberta] : {std::tuple{"<s>", "</s>", true}, std::tuple{"[CLS]", "[SEP]", false}}) {
    const int32_t c = spec.id_of(cls), s = spec.id_of(sep);
    if (c >= 0 && s >= 0) return PostTemplate::bert_like(c, s, roberta);
  }
  return {};
}

}  // namespace

BpeTokenizerSpec untrained_spec(const BpeTrainerConfig& config) {
  BpeTokenizerSpec spec;
  spec.normalizer = config.normalizer;
  spec.add_prefix_space = config.add_prefix_space;
  return spec;
}

BpeTokenizerSpec train_bpe(const WordCounts& word_counts, const BpeTrainerConfig& config) {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int32_t> ids;
  const auto add_token = [&](const std::string& token) {
    auto [it, added] = ids.emplace(token, static_cast<int32_t>(tokens.size()));
    if (added) tokens.push_back(token);
    return it->second;
  };
  for (const std::string& special : config.special_tokens) add_token(special);
  std::map<char32_t, std::string> alphabet;  // code-point order
  for (int b = 0; b < 256; ++b) append_utf8(alphabet[byte_level_char(static_cast<uint8_t>(b))], byte_level_char(b));
  int32_t byte_ids[256];
  for (const auto& [c, text] : alphabet) byte_ids[byte_level_byte(c)] = add_token(text);

  // Words in a fixed order (HF's hash order does not change the result), as byte-level symbol ids.
  std::vector<const std::pair<const std::string, uint64_t>*> sorted;
  for (const auto& entry : word_counts) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](auto* x, auto* y) { return x->first < y->first; });
  std::vector<std::vector<int32_t>> words(sorted.size());
  std::vector<int64_t> counts(sorted.size());
  std::unordered_map<Pair, int64_t> pair_counts;
  WhereSeen where;
  for (size_t w = 0; w < sorted.size(); ++w) {
    counts[w] = static_cast<int64_t>(sorted[w]->second);
    for (unsigned char b : sorted[w]->first) words[w].push_back(byte_ids[b]);
    for (size_t i = 0; i + 1 < words[w].size(); ++i) {
      const Pair p = make_pair_key(words[w][i], words[w][i + 1]);
      pair_counts[p] += counts[w];
      where[p].push_back(static_cast<uint32_t>(w));
    }
  }
  std::priority_queue<Candidate> queue;
  push_candidates(where, pair_counts, queue);

  std::vector<Pair> merges;
  std::unordered_map<Pair, size_t> merge_index;  // a pair merged again replaces its earlier rank, as in HF's map
  std::vector<Change> changes;
  while (tokens.size() < config.vocab_size && !queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    const int64_t current = pair_counts[top.pair];
    if (top.count != current) {
      top.count = current;
      queue.push(std::move(top));
      continue;
    }
    if (top.count < 1 || static_cast<int64_t>(config.min_frequency) > top.count) break;
    const int32_t merged = add_token(tokens[left_of(top.pair)] + tokens[right_of(top.pair)]);
    if (auto it = merge_index.find(top.pair); it != merge_index.end()) merges[it->second] = ~Pair{0};
    merge_index[top.pair] = merges.size();
    merges.push_back(top.pair);
    changes.clear();
    for (uint32_t w : top.words) merge_word(words[w], left_of(top.pair), right_of(top.pair), merged, w, changes);
    for (const Change& c : changes) {
      pair_counts[c.pair] += c.delta * counts[c.word];
      if (c.delta > 0) where[c.pair].push_back(c.word);
    }
    push_candidates(where, pair_counts, queue);
  }

  BpeTokenizerSpec spec = untrained_spec(config);
  spec.path = "bpe train";
  spec.model = std::make_unique<BpeModel>(tokens, BpeModelOptions{}, spec.path);
  for (Pair p : merges)
    if (p != ~Pair{0}) spec.model->add_merge(tokens[left_of(p)], tokens[right_of(p)], spec.path);
  for (const std::string& special : config.special_tokens)
    spec.added_tokens.push_back({special, ids.at(special), false, special == "<mask>", false, false, true});
  spec.post = template_for(spec);
  spec.finish();
  return spec;
}

}  // namespace bk
