#include <doctest/doctest.h>

#include "pretraining_data/instances.h"

#include <algorithm>
#include <map>
#include <set>

// Properties of every instance, whatever the draws: the structure [CLS] A [SEP] B [SEP], A and B as contiguous
// runs of one document's sentences (B from another document when it is a random next), at most
// max_predictions masks, sorted, never on [CLS] or [SEP], each original id the corpus token at that place. The
// identity with create_pretraining_data.py itself is proved by tests/compat/test_mkpretrain.py.

namespace {

constexpr int32_t kCls = 101, kSep = 102, kMask = 103;

bk::MaskingVocab test_vocab(bool continuation_pieces) {
  bk::MaskingVocab v;
  v.cls_id = kCls;
  v.sep_id = kSep;
  v.mask_id = kMask;
  for (int32_t id = 0; id < 2000; ++id) v.random_word_ids.push_back(id);
  v.is_continuation.assign(2000, 0);
  if (continuation_pieces)
    for (int32_t id = 1500; id < 2000; ++id) v.is_continuation[static_cast<size_t>(id)] = 1;
  return v;
}

// Documents of sentences whose tokens say where they come from: doc d, sentence s, token t -> a distinct id in
// [1000, 2000), except that every 7th token is [CLS] or [SEP] when `markers` is set (ids BERT's tokenizer never
// produces, but the reference handles them, so we do too).
bk::Corpus test_corpus(bool markers, std::map<int32_t, int>& doc_of) {
  bk::Corpus corpus;
  int32_t next = 1000;
  for (int d = 0; d < 12; ++d) {
    for (int s = 0; s < 3 + d % 5; ++s) {
      std::vector<int32_t> ids;
      for (int t = 0; t < 4 + (d * 7 + s * 3) % 19; ++t) {
        const int32_t id = markers && t % 7 == 3 ? (t % 2 ? kCls : kSep) : next++;
        if (id >= 1000) doc_of[id] = d;
        ids.push_back(id);
      }
      corpus.add_sentence(ids);
    }
    corpus.end_document();
  }
  REQUIRE(next < 2000);
  return corpus;
}

// Short sequences and high probabilities, so that truncation, short targets and random next all happen often.
bk::InstanceConfig small_config(bool whole_word) {
  bk::InstanceConfig cfg;
  cfg.max_seq_length = 24;
  cfg.max_predictions = 5;
  cfg.masked_lm_prob = 0.3;
  cfg.short_seq_prob = 0.3;
  cfg.dupe_factor = 3;
  cfg.whole_word_mask = whole_word;
  return cfg;
}

void check_instances(bool markers, bool whole_word) {
  std::map<int32_t, int> doc_of;
  const bk::Corpus corpus = test_corpus(markers, doc_of);
  const bk::MaskingVocab vocab = test_vocab(whole_word);
  const bk::InstanceConfig cfg = small_config(whole_word);
  bk::PyRandom rng(42);
  const bk::Instances instances = bk::create_instances(corpus, cfg, vocab, rng);
  REQUIRE(instances.list.size() > 30);

  bk::InstanceTokens inst;
  size_t masked_total = 0, random_next = 0;
  for (size_t i = 0; i < instances.list.size(); ++i) {
    bk::instance_tokens(corpus, instances, i, vocab, inst);
    const auto& ids = inst.input_ids;
    const size_t n = ids.size(), a = static_cast<size_t>(inst.a_length);
    REQUIRE(n <= static_cast<size_t>(cfg.max_seq_length));
    REQUIRE(a >= 1);
    REQUIRE(n >= a + 4);
    CHECK(ids[0] == kCls);
    CHECK(ids[a + 1] == kSep);
    CHECK(ids[n - 1] == kSep);
    // The unmasked tokens: A's and B's ids are consecutive corpus runs (markers interleave, so compare the
    // corpus spans directly).
    const bk::Instance& d = instances.list[i];
    CHECK(d.a_length == a);
    CHECK(d.b_length == n - a - 3);
    std::vector<int32_t> unmasked(ids);
    for (size_t k = 0; k < inst.masked_lm_positions.size(); ++k)
      unmasked[static_cast<size_t>(inst.masked_lm_positions[k])] = inst.masked_lm_ids[k];
    CHECK(std::equal(unmasked.begin() + 1, unmasked.begin() + 1 + static_cast<long>(a),
                     corpus.tokens.begin() + static_cast<long>(d.a_begin)));
    CHECK(std::equal(unmasked.begin() + 2 + static_cast<long>(a), unmasked.end() - 1,
                     corpus.tokens.begin() + static_cast<long>(d.b_begin)));
    // A comes from one document; B from the same one unless it is a random next.
    std::set<int> a_docs, b_docs;
    for (size_t k = 1; k <= a; ++k)
      if (unmasked[k] >= 1000) a_docs.insert(doc_of[unmasked[k]]);
    for (size_t k = a + 2; k + 1 < n; ++k)
      if (unmasked[k] >= 1000) b_docs.insert(doc_of[unmasked[k]]);
    CHECK(a_docs.size() <= 1);
    CHECK(b_docs.size() <= 1);
    if (!inst.is_random_next && !a_docs.empty() && !b_docs.empty()) CHECK(*a_docs.begin() == *b_docs.begin());
    random_next += inst.is_random_next;

    const auto& pos = inst.masked_lm_positions;
    REQUIRE(pos.size() <= static_cast<size_t>(cfg.max_predictions));
    if (!whole_word) CHECK(!pos.empty());  // a whole word longer than the budget is skipped, as the reference does
    CHECK(std::is_sorted(pos.begin(), pos.end()));
    CHECK(std::adjacent_find(pos.begin(), pos.end()) == pos.end());
    for (size_t k = 0; k < pos.size(); ++k) {
      const int32_t original = inst.masked_lm_ids[k];
      CHECK(original != kCls);
      CHECK(original != kSep);
      const int32_t now = ids[static_cast<size_t>(pos[k])];
      CHECK((now == kMask || now == original || (now >= 0 && now < 2000)));
    }
    masked_total += pos.size();
  }
  CHECK(random_next > 0);
  CHECK(random_next < instances.list.size());
  CHECK(instances.masks.size() == masked_total);
}

}  // namespace

TEST_CASE("instances: structure and masks hold for plain text") { check_instances(false, false); }
TEST_CASE("instances: [CLS] and [SEP] ids inside the text are never masked") { check_instances(true, false); }
TEST_CASE("instances: whole-word masking, with and without marker ids in the text") {
  check_instances(false, true);
  check_instances(true, true);
}

namespace {

// --no-nsp: every instance is [CLS] A [SEP] with A whole consecutive sentences of one document (or, for a sentence
// longer than a sequence, a cut of that one sentence), never a random next.
void check_single_segment(bool markers, int max_seq_length, double short_seq_prob) {
  std::map<int32_t, int> doc_of;
  const bk::Corpus corpus = test_corpus(markers, doc_of);
  const bk::MaskingVocab vocab = test_vocab(false);
  bk::InstanceConfig cfg = small_config(false);
  cfg.next_sentence = false;
  cfg.max_seq_length = max_seq_length;
  cfg.short_seq_prob = short_seq_prob;
  const size_t max_num_tokens = static_cast<size_t>(max_seq_length - 2);
  bk::PyRandom rng(7);
  const bk::Instances instances = bk::create_instances(corpus, cfg, vocab, rng);
  REQUIRE(instances.list.size() > 30);

  const auto& starts = corpus.sentence_begin;  // sentence s is tokens [starts[s], starts[s+1])
  auto sentence_at = [&](uint64_t offset) {    // the sentence holding token `offset`
    return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin()) - 1;
  };
  auto doc_of_sentence = [&](size_t s) {
    return static_cast<size_t>(std::upper_bound(corpus.doc_begin.begin(), corpus.doc_begin.end(), s) -
                               corpus.doc_begin.begin()) - 1;
  };
  auto is_sentence_start = [&](uint64_t offset) { return std::binary_search(starts.begin(), starts.end(), offset); };

  std::vector<size_t> sentence_uses(starts.size() - 1, 0);
  size_t truncated = 0;
  bk::InstanceTokens inst;
  for (size_t i = 0; i < instances.list.size(); ++i) {
    bk::instance_tokens(corpus, instances, i, vocab, inst);
    const bk::Instance& d = instances.list[i];
    const auto& ids = inst.input_ids;
    const size_t n = ids.size(), a = static_cast<size_t>(inst.a_length);
    REQUIRE(a >= 1);
    REQUIRE(a <= max_num_tokens);
    CHECK(n == a + 2);  // segment_ids: all a_length + 2 tokens are segment 0
    CHECK(d.b_length == 0);
    CHECK(d.length() == n);
    CHECK_FALSE(inst.is_random_next);
    CHECK(ids[0] == kCls);
    CHECK(ids[n - 1] == kSep);
    std::vector<int32_t> unmasked(ids);
    for (size_t k = 0; k < inst.masked_lm_positions.size(); ++k)
      unmasked[static_cast<size_t>(inst.masked_lm_positions[k])] = inst.masked_lm_ids[k];
    CHECK(std::equal(unmasked.begin() + 1, unmasked.end() - 1, corpus.tokens.begin() + static_cast<long>(d.a_begin)));
    if (!markers) CHECK(std::count(unmasked.begin(), unmasked.end(), kSep) == 1);  // only the closing one
    std::set<int> docs;
    for (size_t k = 1; k + 1 < n; ++k)
      if (unmasked[k] >= 1000) docs.insert(doc_of[unmasked[k]]);
    CHECK(docs.size() == 1);

    const size_t first = sentence_at(d.a_begin), last = sentence_at(d.a_begin + a - 1);
    CHECK(doc_of_sentence(first) == doc_of_sentence(last));
    if (is_sentence_start(d.a_begin) && is_sentence_start(d.a_begin + a)) {
      // Whole sentences, packed: with the full target (no short targets) the next sentence of the document
      // would not have fitted.
      for (size_t s = first; s <= last; ++s) ++sentence_uses[s];
      const size_t next = last + 1;
      if (short_seq_prob == 0 && next < starts.size() - 1 && doc_of_sentence(next) == doc_of_sentence(last))
        CHECK(a + (starts[next + 1] - starts[next]) > max_num_tokens);
    } else {
      // A cut of one sentence longer than a sequence.
      ++truncated;
      CHECK(first == last);
      CHECK(a == max_num_tokens);
      CHECK(starts[first + 1] - starts[first] > max_num_tokens);
      ++sentence_uses[first];
    }

    const auto& pos = inst.masked_lm_positions;
    CHECK(!pos.empty());
    CHECK(pos.size() <= static_cast<size_t>(cfg.max_predictions));
    CHECK(std::is_sorted(pos.begin(), pos.end()));
    for (size_t k = 0; k < pos.size(); ++k) {
      CHECK(pos[k] > 0);
      CHECK(static_cast<size_t>(pos[k]) < n - 1);
      CHECK(inst.masked_lm_ids[k] != kCls);
      CHECK(inst.masked_lm_ids[k] != kSep);
    }
  }
  // Every sentence lands in exactly one instance per pass over the documents.
  for (size_t s = 0; s < sentence_uses.size(); ++s) CHECK(sentence_uses[s] == static_cast<size_t>(cfg.dupe_factor));
  if (max_num_tokens < 22) CHECK(truncated > 0);  // test_corpus has sentences of up to 22 tokens
  else CHECK(truncated == 0);
}

}  // namespace

TEST_CASE("instances without next-sentence pairs: one segment of whole sentences from one document") {
  check_single_segment(false, 24, 0.0);
  check_single_segment(false, 24, 0.5);
  check_single_segment(true, 24, 0.0);
  check_single_segment(false, 12, 0.2);  // sentences longer than a sequence are cut
}

TEST_CASE("instances without next-sentence pairs: a long target packs several sentences, a short one fewer") {
  std::map<int32_t, int> doc_of;
  const bk::Corpus corpus = test_corpus(false, doc_of);
  const bk::MaskingVocab vocab = test_vocab(false);
  bk::InstanceConfig cfg = small_config(false);
  cfg.next_sentence = false;
  cfg.max_seq_length = 64;
  cfg.short_seq_prob = 0;
  bk::PyRandom rng(1);
  const size_t full = bk::create_instances(corpus, cfg, vocab, rng).list.size();
  cfg.short_seq_prob = 1;
  bk::PyRandom rng2(1);
  const size_t short_targets = bk::create_instances(corpus, cfg, vocab, rng2).list.size();
  const size_t sentences = (corpus.sentence_begin.size() - 1) * static_cast<size_t>(cfg.dupe_factor);
  CHECK(full < sentences / 2);  // several sentences per instance
  CHECK(short_targets > full);
}
