#include "pretrain/instances.h"

#include "cli/error.h"

#include <algorithm>
#include <cmath>
#include <span>

namespace bk {

void Corpus::add_sentence(const std::vector<int32_t>& ids) {
  tokens.insert(tokens.end(), ids.begin(), ids.end());
  sentence_begin.push_back(tokens.size());
}

void Corpus::end_document() {
  if (open_document_sentences() > 0) doc_begin.push_back(sentence_begin.size() - 1);
}

namespace {

using Segment = std::span<const int32_t>;

// A view of the corpus in the shuffled document order of the reference's all_documents list.
class ShuffledDocs {
 public:
  ShuffledDocs(const Corpus& corpus, std::vector<uint32_t> order) : corpus_(corpus), order_(std::move(order)) {}
  size_t size() const { return order_.size(); }
  size_t num_segments(size_t d) const { return corpus_.doc_begin[order_[d] + 1] - corpus_.doc_begin[order_[d]]; }
  Segment segment(size_t d, size_t i) const {
    uint64_t s = corpus_.doc_begin[order_[d]] + i;
    return {corpus_.tokens.data() + corpus_.sentence_begin[s], corpus_.sentence_begin[s + 1] - corpus_.sentence_begin[s]};
  }

 private:
  const Corpus& corpus_;
  std::vector<uint32_t> order_;
};

void append(std::vector<int32_t>& to, Segment s) { to.insert(to.end(), s.begin(), s.end()); }

// truncate_seq_pair: trim the longer side (b on ties), front or back by a coin, until the pair fits.
// Both sides are kept as [begin, end) windows so that trimming the front is O(1).
struct Window {
  const std::vector<int32_t>* tokens;
  size_t begin, end;
  size_t size() const { return end - begin; }
};

void truncate_pair(Window& a, Window& b, size_t max_num_tokens, PyRandom& rng) {
  while (a.size() + b.size() > max_num_tokens) {
    Window& longer = a.size() > b.size() ? a : b;
    if (longer.size() == 0) fail("internal error: truncating an empty segment");
    if (rng.random() < 0.5) ++longer.begin;
    else --longer.end;
  }
}

// Python's round() of a float: round half to even.
int64_t round_half_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// One masked position: 80% [MASK], 10% kept, 10% a random vocabulary entry, in the reference's draw order.
inline int32_t masked_token(int32_t original, const MaskingVocab& vocab, PyRandom& rng) {
  if (rng.random() < 0.8) return vocab.mask_id;
  if (rng.random() < 0.5) return original;
  const auto& words = vocab.random_word_ids;
  return words[static_cast<size_t>(rng.randint(0, static_cast<int64_t>(words.size()) - 1))];
}

// Without whole-word masking every candidate is one position, so the groups, the coverage check and the copy of
// the tokens fall away; the random draws are exactly those of the general path below.
void mask_single_tokens(Instance& inst, size_t num_to_predict, const MaskingVocab& vocab, PyRandom& rng) {
  std::vector<int32_t>& tokens = inst.input_ids;
  thread_local std::vector<uint32_t> candidates;
  thread_local std::vector<std::pair<uint32_t, int32_t>> masked;  // (position, original token)
  candidates.clear();
  masked.clear();
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] != vocab.cls_id && tokens[i] != vocab.sep_id) candidates.push_back(static_cast<uint32_t>(i));
  rng.shuffle(candidates);
  for (uint32_t pos : candidates) {
    if (masked.size() >= num_to_predict) break;
    masked.emplace_back(pos, tokens[pos]);
    tokens[pos] = masked_token(tokens[pos], vocab, rng);
  }
  std::sort(masked.begin(), masked.end());
  inst.masked_lm_positions.resize(masked.size());
  inst.masked_lm_ids.resize(masked.size());
  for (size_t k = 0; k < masked.size(); ++k) {
    inst.masked_lm_positions[k] = static_cast<int32_t>(masked[k].first);
    inst.masked_lm_ids[k] = masked[k].second;
  }
}

void mask_tokens(Instance& inst, const InstanceConfig& cfg, const MaskingVocab& vocab, PyRandom& rng) {
  std::vector<int32_t>& tokens = inst.input_ids;
  const size_t num_to_predict = static_cast<size_t>(std::min<int64_t>(
      cfg.max_predictions, std::max<int64_t>(1, round_half_even(static_cast<double>(tokens.size()) * cfg.masked_lm_prob))));
  if (!cfg.whole_word_mask) return mask_single_tokens(inst, num_to_predict, vocab, rng);
  // Candidate groups: one per token, or one per whole word when "##" pieces join the previous group.
  // Stored flat: group g is members[group_begin[g] .. group_begin[g+1]). Scratch buffers are reused across
  // instances: this runs once per instance, millions of times.
  thread_local std::vector<uint32_t> group_begin, members, group_order, masked;
  thread_local std::vector<int32_t> original;
  thread_local std::vector<uint8_t> covered;
  group_begin.clear();
  members.clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    int32_t t = tokens[i];
    if (t == vocab.cls_id || t == vocab.sep_id) continue;
    bool joins = cfg.whole_word_mask && !group_begin.empty() && t >= 0 &&
                 static_cast<size_t>(t) < vocab.is_continuation.size() && vocab.is_continuation[t];
    if (!joins) group_begin.push_back(static_cast<uint32_t>(members.size()));
    members.push_back(static_cast<uint32_t>(i));
  }
  const size_t num_groups = group_begin.size();
  group_begin.push_back(static_cast<uint32_t>(members.size()));
  group_order.resize(num_groups);
  for (size_t g = 0; g < num_groups; ++g) group_order[g] = static_cast<uint32_t>(g);
  rng.shuffle(group_order);

  original.assign(tokens.begin(), tokens.end());
  covered.assign(tokens.size(), 0);
  masked.clear();  // positions, in masking order
  for (uint32_t g : group_order) {
    if (masked.size() >= num_to_predict) break;
    const size_t size = group_begin[g + 1] - group_begin[g];
    if (masked.size() + size > num_to_predict) continue;  // a whole word that does not fit is skipped
    bool any_covered = false;
    for (size_t k = group_begin[g]; k < group_begin[g + 1]; ++k) any_covered |= covered[members[k]] != 0;
    if (any_covered) continue;
    for (size_t k = group_begin[g]; k < group_begin[g + 1]; ++k) {
      uint32_t pos = members[k];
      covered[pos] = 1;
      tokens[pos] = masked_token(tokens[pos], vocab, rng);
      masked.push_back(pos);
    }
  }
  std::sort(masked.begin(), masked.end());
  inst.masked_lm_positions.assign(masked.begin(), masked.end());
  inst.masked_lm_ids.clear();
  for (uint32_t pos : masked) inst.masked_lm_ids.push_back(original[pos]);
}

void instances_from_document(const ShuffledDocs& docs, size_t doc_index, const InstanceConfig& cfg,
                             const MaskingVocab& vocab, PyRandom& rng, std::vector<Instance>& out) {
  const int64_t max_num_tokens = cfg.max_seq_length - 3;  // room for [CLS], [SEP], [SEP]
  int64_t target_seq_length = max_num_tokens;
  if (rng.random() < cfg.short_seq_prob) target_seq_length = rng.randint(2, max_num_tokens);

  const int64_t num_segments = static_cast<int64_t>(docs.num_segments(doc_index));
  int64_t chunk_begin = 0;  // current_chunk = segments [chunk_begin, i]
  int64_t current_length = 0;
  std::vector<int32_t> tokens_a, tokens_b;
  for (int64_t i = 0; i < num_segments; ++i) {
    current_length += static_cast<int64_t>(docs.segment(doc_index, i).size());
    if (i != num_segments - 1 && current_length < target_seq_length) continue;
    const int64_t chunk_size = i - chunk_begin + 1;
    int64_t a_end = 1;
    if (chunk_size >= 2) a_end = rng.randint(1, chunk_size - 1);
    tokens_a.clear();
    tokens_b.clear();
    for (int64_t j = 0; j < a_end; ++j) append(tokens_a, docs.segment(doc_index, chunk_begin + j));

    bool is_random_next = false;
    if (chunk_size == 1 || rng.random() < 0.5) {
      is_random_next = true;
      const int64_t target_b_length = target_seq_length - static_cast<int64_t>(tokens_a.size());
      int64_t random_doc = 0;
      for (int attempt = 0; attempt < 10; ++attempt) {
        random_doc = rng.randint(0, static_cast<int64_t>(docs.size()) - 1);
        if (random_doc != static_cast<int64_t>(doc_index)) break;
      }
      const int64_t random_segments = static_cast<int64_t>(docs.num_segments(random_doc));
      for (int64_t j = rng.randint(0, random_segments - 1); j < random_segments; ++j) {
        append(tokens_b, docs.segment(random_doc, j));
        if (static_cast<int64_t>(tokens_b.size()) >= target_b_length) break;
      }
      i -= chunk_size - a_end;  // the unused segments go back to be read again
    } else {
      for (int64_t j = a_end; j < chunk_size; ++j) append(tokens_b, docs.segment(doc_index, chunk_begin + j));
    }

    Window a{&tokens_a, 0, tokens_a.size()}, b{&tokens_b, 0, tokens_b.size()};
    truncate_pair(a, b, static_cast<size_t>(max_num_tokens), rng);
    if (a.size() < 1 || b.size() < 1) fail("internal error: an empty segment after truncation");

    Instance inst;
    inst.input_ids.reserve(a.size() + b.size() + 3);
    inst.input_ids.push_back(vocab.cls_id);
    inst.input_ids.insert(inst.input_ids.end(), tokens_a.begin() + a.begin, tokens_a.begin() + a.end);
    inst.input_ids.push_back(vocab.sep_id);
    inst.input_ids.insert(inst.input_ids.end(), tokens_b.begin() + b.begin, tokens_b.begin() + b.end);
    inst.input_ids.push_back(vocab.sep_id);
    inst.a_length = static_cast<int32_t>(a.size());
    inst.is_random_next = is_random_next;
    mask_tokens(inst, cfg, vocab, rng);
    out.push_back(std::move(inst));

    chunk_begin = i + 1;
    current_length = 0;
  }
}

}  // namespace

std::vector<Instance> create_instances(Corpus& corpus, const InstanceConfig& config, const MaskingVocab& vocab,
                                       PyRandom& rng) {
  std::vector<uint32_t> order(corpus.num_docs());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint32_t>(d);
  rng.shuffle(order);
  ShuffledDocs docs(corpus, std::move(order));

  std::vector<Instance> instances;
  for (int pass = 0; pass < config.dupe_factor; ++pass)
    for (size_t d = 0; d < docs.size(); ++d) instances_from_document(docs, d, config, vocab, rng, instances);
  rng.shuffle(instances);
  return instances;
}

}  // namespace bk
