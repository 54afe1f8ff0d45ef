// Masked-LM / next-sentence instances exactly as google-research/bert create_pretraining_data.py makes them.
//
// Identical output needs identical random draws in identical order, so this follows the reference step by step
// (DESIGN.md section 5): documents shuffled, dupe_factor passes over all documents, per-document target length,
// chunking into segments A and B, random next with "put back", truncate_seq_pair, masking, then a final shuffle
// of all instances. One bk::PyRandom drives everything.
//
// Without next-sentence prediction (InstanceConfig::next_sentence = false, mkpretrain --no-nsp) an instance is one
// segment, [CLS] A [SEP]: whole sentences of one document packed up to the target length, never crossing into the
// next document (RoBERTa's DOC-SENTENCES). The steps and draws that remain are the reference's: the shuffles, one
// target length per document (max_seq_length - 2, or with probability short_seq_prob randint(2, that)), the coin
// of truncate_seq_pair for a sentence longer than max_seq_length - 2, and the masking.
//
// Full sentences (InstanceConfig::full_sentences, mkpretrain --full-sentences; RoBERTa's FULL-SENTENCES): one
// segment of consecutive whole sentences in input order, across document boundaries with a [SEP] between
// documents, up to max_seq_length: [CLS] end of doc 1 [SEP] doc 2 [SEP] start of doc 3 [SEP]. No target length is
// drawn and nothing is masked (the instances are written unmasked, for a loader to mask); a sentence longer than a
// row is cut to its first max_seq_length - 2 tokens. The instances are then shuffled as the reference's are.
#pragma once

#include "pretraining_data/masking.h"
#include "util/py_random.h"

#include <cstdint>
#include <span>
#include <vector>

namespace bk {

struct InstanceConfig {
  int max_seq_length = 128;
  int max_predictions = 20;
  double masked_lm_prob = 0.15;
  double short_seq_prob = 0.1;
  int dupe_factor = 10;
  bool whole_word_mask = false;
  bool next_sentence = true;  // false: one segment per instance, no NSP pairing (see above)
  bool full_sentences = false;  // rows across documents, unmasked (see above); next_sentence must be false
};

// All documents of one invocation, stored flat: sentence s holds tokens[sentence_begin[s] .. sentence_begin[s+1]),
// document d holds sentences [doc_begin[d] .. doc_begin[d+1]). Documents are never empty.
struct Corpus {
  std::vector<int32_t> tokens;
  std::vector<uint64_t> sentence_begin{0};
  std::vector<uint64_t> doc_begin{0};

  size_t num_docs() const { return doc_begin.size() - 1; }
  void add_sentence(std::span<const int32_t> ids);  // to the current (last, open) document
  void end_document();                                 // closes the open document if it has sentences
  size_t open_document_sentences() const { return sentence_begin.size() - 1 - doc_begin.back(); }
};

// One instance, stored as two spans of Corpus::tokens and its masked positions: creating millions of them then
// copies no tokens. Segment A is tokens[a_begin .. a_begin + a_length), B likewise; the instance's input_ids are
// [CLS] A [SEP] B [SEP] with the masked positions replaced; without next-sentence pairing b_length is 0 and the
// input_ids are [CLS] A [SEP]. A full-sentences instance's A crosses document_breaks document boundaries, each
// written as a [SEP].
struct Instance {
  uint64_t a_begin = 0, b_begin = 0;
  uint32_t a_length = 0, b_length = 0;
  uint64_t masks_begin = 0;  // this instance's masked tokens are Instances::masks[masks_begin .. + num_masked)
  uint32_t num_masked = 0;
  uint16_t document_breaks = 0;  // 16 bits keep an Instance at 40 bytes; a row with more breaks is ended early
  bool is_random_next = false;
  size_t length() const { return b_length == 0 ? a_length + document_breaks + 2 : a_length + b_length + 3; }
};
static_assert(sizeof(Instance) <= 40, "millions of instances are shuffled: keep them small");

struct Instances {
  std::vector<Instance> list;      // in the reference's final order
  std::vector<MaskedToken> masks;  // each instance's, in position order
};

// One instance written out as the reference holds it (buffers are reused from call to call).
struct InstanceTokens {
  std::vector<int32_t> input_ids;  // [CLS] a [SEP] b [SEP] (or [CLS] a [SEP] alone), masked, unpadded
  int32_t a_length = 0;            // segment_ids are 0 for the first a_length + 2 tokens, then 1
  bool is_random_next = false;
  std::vector<int32_t> masked_lm_positions;
  std::vector<int32_t> masked_lm_ids;  // the original token ids at those positions
};

// Creates every instance in the reference's final order (the documents are visited in the reference's shuffled
// order; the corpus itself is not changed).
Instances create_instances(const Corpus& corpus, const InstanceConfig& config, const MaskingVocab& vocab, PyRandom& rng);

// Fills `out` with instance `index` of `instances`.
void instance_tokens(const Corpus& corpus, const Instances& instances, size_t index, const MaskingVocab& vocab,
                     InstanceTokens& out);
// Asks the CPU to start loading instance `index`'s tokens: in their final (shuffled) order the instances are
// read from all over the corpus, so a writer calls this a few instances ahead.
void prefetch_instance(const Corpus& corpus, const Instances& instances, size_t index);

}  // namespace bk
