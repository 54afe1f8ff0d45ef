#include "pretraining_data/instances.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace bk {

void Corpus::add_sentence(std::span<const int32_t> ids) {
  tokens.insert(tokens.end(), ids.begin(), ids.end());
  sentence_begin.push_back(tokens.size());
}

void Corpus::end_document() {
  if (open_document_sentences() > 0) doc_begin.push_back(sentence_begin.size() - 1);
}

namespace {

// The corpus in the shuffled document order of the reference's all_documents list. The sentences of a document
// are contiguous in Corpus::tokens, so any run of them is one span: [begin(d, i), begin(d, j)).
class ShuffledDocs {
 public:
  ShuffledDocs(const Corpus& corpus, std::vector<uint32_t> order) : corpus_(corpus), order_(std::move(order)) {}
  size_t size() const { return order_.size(); }
  int64_t num_segments(size_t d) const {
    return static_cast<int64_t>(corpus_.doc_begin[order_[d] + 1] - corpus_.doc_begin[order_[d]]);
  }
  // Offset in Corpus::tokens of document d's segment i (i == num_segments(d) is the end of the document).
  uint64_t begin(size_t d, int64_t i) const {
    return corpus_.sentence_begin[corpus_.doc_begin[order_[d]] + static_cast<uint64_t>(i)];
  }

 private:
  const Corpus& corpus_;
  std::vector<uint32_t> order_;
};

// truncate_seq_pair: trim the longer side (b on ties), front or back by a coin, until the pair fits.
void truncate_pair(Instance& inst, size_t max_num_tokens, PyRandom& rng) {
  uint64_t a_begin = inst.a_begin, b_begin = inst.b_begin;
  uint32_t a_length = inst.a_length, b_length = inst.b_length;
  while (a_length + b_length > max_num_tokens) {
    const bool trim_a = a_length > b_length;
    const bool front = rng.random_below_half();
    if (trim_a) {
      a_begin += front;
      --a_length;
    } else {
      b_begin += front;
      --b_length;
    }
  }
  inst.a_begin = a_begin;
  inst.b_begin = b_begin;
  inst.a_length = a_length;
  inst.b_length = b_length;
}

// The token at position `pos` of an instance's unmasked input_ids, read from the corpus.
class InstanceView {
 public:
  InstanceView(const Corpus& corpus, const Instance& inst, const MaskingVocab& vocab, bool text_has_markers)
      : a_(corpus.tokens.data() + inst.a_begin), b_(corpus.tokens.data() + inst.b_begin), a_length_(inst.a_length),
        b_length_(inst.b_length), text_has_markers_(text_has_markers), vocab_(vocab) {}
  int32_t operator[](uint32_t pos) const {
    if (pos == 0) return vocab_.cls_id;
    if (pos <= a_length_) return a_[pos - 1];
    if (pos == a_length_ + 1 || pos == a_length_ + b_length_ + 2) return vocab_.sep_id;
    return b_[pos - a_length_ - 2];
  }
  // The positions whose token is neither [CLS] nor [SEP] (the reference's cand_indexes, one per token).
  void candidates(std::vector<uint32_t>& out) const {
    out.resize(a_length_ + b_length_);
    if (!text_has_markers_) {  // every segment token is a candidate: no need to read them
      for (uint32_t k = 0; k < a_length_; ++k) out[k] = k + 1;
      for (uint32_t k = 0; k < b_length_; ++k) out[a_length_ + k] = a_length_ + 2 + k;
      return;
    }
    size_t n = 0;
    for (uint32_t k = 0; k < a_length_; ++k) {  // written unconditionally, kept when the test passes: no branch
      out[n] = k + 1;
      n += a_[k] != vocab_.cls_id && a_[k] != vocab_.sep_id;
    }
    for (uint32_t k = 0; k < b_length_; ++k) {
      out[n] = k + a_length_ + 2;
      n += b_[k] != vocab_.cls_id && b_[k] != vocab_.sep_id;
    }
    out.resize(n);
  }
 private:
  const int32_t* a_;  // segment A, positions 1 .. a_length
  const int32_t* b_;  // segment B, positions a_length + 2 .. a_length + b_length + 1
  uint32_t a_length_, b_length_;
  bool text_has_markers_;
  const MaskingVocab& vocab_;
};

// What every step of instance creation reads, and where the instances go.
struct Creation {
  const Corpus& corpus;
  const ShuffledDocs& docs;
  const InstanceConfig& cfg;
  const MaskingVocab& vocab;
  PyRandom& rng;
  // Some corpus token is [CLS] or [SEP]. BERT's tokenizer never makes one (it splits the brackets off), but a
  // vocabulary can be odd; only then are the candidates read and tested as the reference tests them.
  bool text_has_markers;
  Instances& out;
};

void mask_tokens(Creation& c, Instance& inst) {
  const InstanceConfig& cfg = c.cfg;
  const MaskingVocab& vocab = c.vocab;
  PyRandom& rng = c.rng;
  std::vector<MaskedToken>& masks = c.out.masks;
  const uint32_t length = static_cast<uint32_t>(inst.length());
  const InstanceView view(c.corpus, inst, vocab, c.text_has_markers);
  inst.masks_begin = masks.size();
  draw_masks(view, length, MaskingRule{cfg.masked_lm_prob, cfg.max_predictions, cfg.whole_word_mask}, vocab, rng, masks);
  inst.num_masked = static_cast<uint32_t>(masks.size() - inst.masks_begin);
}

void instances_from_document(Creation& c, size_t doc_index) {
  const InstanceConfig& cfg = c.cfg;
  const ShuffledDocs& docs = c.docs;
  PyRandom& rng = c.rng;
  const int64_t max_num_tokens = cfg.max_seq_length - 3;  // room for [CLS], [SEP], [SEP]
  int64_t target_seq_length = max_num_tokens;
  if (rng.random() < cfg.short_seq_prob) target_seq_length = rng.randint(2, max_num_tokens);

  const int64_t num_segments = docs.num_segments(doc_index);
  int64_t chunk_begin = 0;  // current_chunk = segments [chunk_begin, i]
  for (int64_t i = 0; i < num_segments; ++i) {
    const int64_t current_length = static_cast<int64_t>(docs.begin(doc_index, i + 1) - docs.begin(doc_index, chunk_begin));
    if (i != num_segments - 1 && current_length < target_seq_length) continue;
    const int64_t chunk_size = i - chunk_begin + 1;
    int64_t a_end = 1;
    if (chunk_size >= 2) a_end = rng.randint(1, chunk_size - 1);
    Instance inst;
    inst.a_begin = docs.begin(doc_index, chunk_begin);
    inst.a_length = static_cast<uint32_t>(docs.begin(doc_index, chunk_begin + a_end) - inst.a_begin);

    if (chunk_size == 1 || rng.random_below_half()) {
      inst.is_random_next = true;
      const int64_t target_b_length = target_seq_length - static_cast<int64_t>(inst.a_length);
      int64_t random_doc = 0;
      for (int attempt = 0; attempt < 10; ++attempt) {
        random_doc = rng.randint(0, static_cast<int64_t>(docs.size()) - 1);
        if (random_doc != static_cast<int64_t>(doc_index)) break;
      }
      const size_t rd = static_cast<size_t>(random_doc);
      const int64_t random_segments = docs.num_segments(rd);
      const int64_t random_start = rng.randint(0, random_segments - 1);
      int64_t j = random_start;  // segments [random_start, j] until they reach target_b_length
      while (j + 1 < random_segments &&
             static_cast<int64_t>(docs.begin(rd, j + 1) - docs.begin(rd, random_start)) < target_b_length)
        ++j;
      inst.b_begin = docs.begin(rd, random_start);
      inst.b_length = static_cast<uint32_t>(docs.begin(rd, j + 1) - inst.b_begin);
      i -= chunk_size - a_end;  // the unused segments go back to be read again
    } else {
      inst.b_begin = docs.begin(doc_index, chunk_begin + a_end);
      inst.b_length = static_cast<uint32_t>(docs.begin(doc_index, chunk_begin + chunk_size) - inst.b_begin);
    }

    truncate_pair(inst, static_cast<size_t>(max_num_tokens), rng);
    if (inst.a_length < 1 || inst.b_length < 1) fail("internal error: an empty segment after truncation");
    mask_tokens(c, inst);
    c.out.list.push_back(inst);
    chunk_begin = i + 1;
  }
}

// Without next-sentence pairing: whole sentences of this document packed into one segment until the next one would
// pass the target length (RoBERTa's DOC-SENTENCES); a sentence longer than a sequence is cut by the reference's
// truncation coin. The target is drawn once per document, as the reference does.
void single_segment_instances_from_document(Creation& c, size_t doc_index) {
  const InstanceConfig& cfg = c.cfg;
  const ShuffledDocs& docs = c.docs;
  PyRandom& rng = c.rng;
  const int64_t max_num_tokens = cfg.max_seq_length - 2;  // room for [CLS], [SEP]
  int64_t target_seq_length = max_num_tokens;
  if (rng.random() < cfg.short_seq_prob) target_seq_length = rng.randint(2, max_num_tokens);

  const int64_t num_segments = docs.num_segments(doc_index);
  int64_t chunk_begin = 0;  // the chunk is segments [chunk_begin, i]
  for (int64_t i = 0; i < num_segments; ++i) {
    if (i != num_segments - 1 &&
        static_cast<int64_t>(docs.begin(doc_index, i + 2) - docs.begin(doc_index, chunk_begin)) <= target_seq_length)
      continue;  // the next sentence still fits
    Instance inst;
    inst.a_begin = docs.begin(doc_index, chunk_begin);
    inst.a_length = static_cast<uint32_t>(docs.begin(doc_index, i + 1) - inst.a_begin);
    inst.b_begin = inst.a_begin + inst.a_length;
    inst.b_length = 0;
    truncate_pair(inst, static_cast<size_t>(max_num_tokens), rng);  // with B empty, only A is cut
    mask_tokens(c, inst);
    c.out.list.push_back(inst);
    chunk_begin = i + 1;
  }
}

// Full sentences (RoBERTa's FULL-SENTENCES): the corpus in input order, whole sentences appended to the row until
// the next one (with the [SEP] before it when it opens a document) would pass max_seq_length - 2; a sentence longer
// than that alone is cut to its first max_seq_length - 2 tokens. Draws nothing.
void full_sentence_instances(Creation& c) {
  const Corpus& corpus = c.corpus;
  const uint64_t max_num_tokens = static_cast<uint64_t>(c.cfg.max_seq_length) - 2;  // room for [CLS], [SEP]
  Instance row;
  auto emit = [&] {
    if (row.a_length > 0) c.out.list.push_back(row);
    row = Instance{};
  };
  for (size_t d = 0; d < corpus.num_docs(); ++d)
    for (uint64_t s = corpus.doc_begin[d]; s < corpus.doc_begin[d + 1]; ++s) {
      const uint64_t begin = corpus.sentence_begin[s];
      const uint64_t length = corpus.sentence_begin[s + 1] - begin;
      const uint64_t separator = row.a_length > 0 && s == corpus.doc_begin[d] ? 1 : 0;
      if (row.a_length > 0 && (row.length() - 2 + separator + length > max_num_tokens ||
                               (separator && row.document_breaks == UINT16_MAX)))
        emit();
      if (row.a_length == 0) {
        row.a_begin = begin;
        row.b_begin = begin;
      } else {
        row.document_breaks = static_cast<uint16_t>(row.document_breaks + separator);
      }
      row.a_length += static_cast<uint32_t>(std::min(length, max_num_tokens));
      if (length >= max_num_tokens) emit();  // a row of its own, cut
    }
  emit();
}

// The [SEP]s of a full-sentences instance: the offsets in Corpus::tokens, inside (a_begin, a_begin + a_length), where
// a document starts.
void document_starts_inside(const Corpus& corpus, const Instance& inst, std::vector<uint64_t>& out) {
  out.clear();
  if (inst.document_breaks == 0) return;
  const auto start_of = [&](size_t d) { return corpus.sentence_begin[corpus.doc_begin[d]]; };
  size_t lo = 0, hi = corpus.num_docs();  // the first document starting after a_begin
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (start_of(mid) <= inst.a_begin) lo = mid + 1;
    else hi = mid;
  }
  for (size_t d = lo; out.size() < inst.document_breaks; ++d) out.push_back(start_of(d));
}

}  // namespace

Instances create_instances(const Corpus& corpus, const InstanceConfig& config, const MaskingVocab& vocab,
                           PyRandom& rng) {
  std::vector<uint32_t> order(corpus.num_docs());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint32_t>(d);
  rng.shuffle(order);
  ShuffledDocs docs(corpus, std::move(order));

  Instances instances;
  // Enough for the usual case (documents longer than a sequence make one instance per ~target length; short
  // ones make one each), so the lists rarely grow by copying.
  const size_t expected = static_cast<size_t>(config.dupe_factor) *
                          (corpus.tokens.size() / static_cast<size_t>(std::max(config.max_seq_length / 2, 1)) + corpus.num_docs());
  instances.list.reserve(expected);
  instances.masks.reserve(expected * static_cast<size_t>(config.max_predictions));
  const bool text_has_markers = std::any_of(corpus.tokens.begin(), corpus.tokens.end(),
                                            [&](int32_t t) { return t == vocab.cls_id || t == vocab.sep_id; });
  Creation creation{corpus, docs, config, vocab, rng, text_has_markers, instances};
  for (int pass = 0; pass < config.dupe_factor; ++pass) {
    if (config.full_sentences) {
      full_sentence_instances(creation);
      continue;
    }
    for (size_t d = 0; d < docs.size(); ++d) {
      if (config.next_sentence) instances_from_document(creation, d);
      else single_segment_instances_from_document(creation, d);
    }
  }
  rng.shuffle(instances.list);
  return instances;
}

void instance_tokens(const Corpus& corpus, const Instances& instances, size_t index, const MaskingVocab& vocab,
                     InstanceTokens& out) {
  const Instance& inst = instances.list[index];
  auto& ids = out.input_ids;
  if (inst.document_breaks > 0) {  // full sentences: [CLS] A [SEP], a [SEP] where a document starts inside A
    thread_local std::vector<uint64_t> starts;
    document_starts_inside(corpus, inst, starts);
    ids.assign(1, vocab.cls_id);
    uint64_t from = inst.a_begin;
    for (uint64_t start : starts) {
      ids.insert(ids.end(), corpus.tokens.begin() + static_cast<ptrdiff_t>(from), corpus.tokens.begin() + static_cast<ptrdiff_t>(start));
      ids.push_back(vocab.sep_id);
      from = start;
    }
    ids.insert(ids.end(), corpus.tokens.begin() + static_cast<ptrdiff_t>(from),
               corpus.tokens.begin() + static_cast<ptrdiff_t>(inst.a_begin + inst.a_length));
    ids.push_back(vocab.sep_id);
    out.a_length = static_cast<int32_t>(ids.size() - 2);
    out.is_random_next = false;
    out.masked_lm_positions.clear();
    out.masked_lm_ids.clear();
    return;
  }
  const int32_t* a = corpus.tokens.data() + inst.a_begin;
  const int32_t* b = corpus.tokens.data() + inst.b_begin;
  ids.resize(inst.length());
  ids[0] = vocab.cls_id;
  std::copy(a, a + inst.a_length, ids.begin() + 1);
  ids[inst.a_length + 1] = vocab.sep_id;
  std::copy(b, b + inst.b_length, ids.begin() + inst.a_length + 2);
  ids.back() = vocab.sep_id;
  out.a_length = static_cast<int32_t>(inst.a_length);
  out.is_random_next = inst.is_random_next;
  out.masked_lm_positions.resize(inst.num_masked);
  out.masked_lm_ids.resize(inst.num_masked);
  for (uint32_t k = 0; k < inst.num_masked; ++k) {
    const MaskedToken& m = instances.masks[inst.masks_begin + k];
    out.masked_lm_positions[k] = static_cast<int32_t>(m.position);
    out.masked_lm_ids[k] = ids[m.position];
    if (m.replacement != MaskedToken::kKeep) ids[m.position] = m.replacement;
  }
}

void prefetch_instance(const Corpus& corpus, const Instances& instances, size_t index) {
  if (index >= instances.list.size()) return;
  const Instance& inst = instances.list[index];
  constexpr size_t kLine = 64 / sizeof(int32_t);  // tokens per cache line
  for (const auto& [begin, length] : {std::pair{inst.a_begin, inst.a_length}, std::pair{inst.b_begin, inst.b_length}})
    for (size_t k = 0; k < length + kLine; k += kLine)
      __builtin_prefetch(corpus.tokens.data() + std::min<size_t>(begin + k, corpus.tokens.size() - 1));
  __builtin_prefetch(instances.masks.data() + inst.masks_begin);
}

}  // namespace bk
