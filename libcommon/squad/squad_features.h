// SQuAD features as google-research/bert run_squad.py's convert_examples_to_features makes them, and the
// tf.train.Example its FeatureWriter writes for each.
//
// Per example: the question in WordPiece tokens, cut to max_query_length; the document's tokens each through
// the same tokenizer (all_doc_tokens, with tok_to_orig_index and orig_to_tok_index); windows ("doc spans") of
// at most max_seq_length - query - 3 pieces, each starting min(length, doc_stride) after the one before, the last
// ending at the document's end. Each window is one feature, [CLS] query [SEP] window [SEP] padded with zeros to
// max_seq_length, segment 0 up to the first [SEP] and 1 after it; unique ids count from 1000000000.
// For training, the answer's word span becomes a piece span, narrowed to the pieces of the tokenized answer
// text where they occur inside it (improve_answer_span); a window that does not hold the whole answer, or an
// impossible question, gets start = end = 0.
//
// With a byte-level BPE tokenizer, whose pieces carry their leading space and so cannot be made word by word, the
// paragraph is tokenized whole and each piece keeps the bytes of the context it stands for (leading and trailing
// whitespace trimmed); a piece belongs to the document token its first byte falls in. A training answer becomes the
// pieces its characters overlap, as HF's run_qa.py maps answers through offsets; the question loses its leading
// whitespace as run_qa.py's does; the sequence is the tokenizer's pair template (<s> Q </s></s> window </s>), and a
// prediction's text is the context between its pieces' bytes.
//
// What a later prediction step needs to map a feature back (the reference's tokens, token_to_orig_map,
// token_is_max_context) is kept compactly: pieces per paragraph (the same for all its questions, so tokenized
// once), query pieces per example, and each feature's window; the maps are computed on demand from those.
#pragma once

#include "squad/squad_examples.h"
#include "tok/text_tokenizer.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk {

class Example;

// run_squad.py's defaults.
struct SquadFeatureOptions {
  int max_seq_length = 384;
  int doc_stride = 128;
  int max_query_length = 64;
  bool is_training = false;

  // bk::UsageError naming the flag (--max-seq-length, --doc-stride, --max-query-length) for values the reference
  // rejects (max_seq_length <= max_query_length + 3) or loops forever on (a stride below 1).
  void validate() const;
};

// A window over a document's pieces.
struct DocSpan {
  int32_t start = 0, length = 0;
};

// One feature: the reference's InputFeatures, less what is computed from its example and window.
struct SquadFeature {
  int64_t unique_id = 0;
  uint32_t example_index = 0;
  uint32_t doc_span_index = 0;
  DocSpan span;  // over the paragraph's pieces (SquadDocPieces::ids)
  // Training only: positions in the sequence ([CLS] is 0); 0 and 0 when the window lacks the answer.
  int32_t start_position = 0, end_position = 0;
  bool is_impossible = false;
};

// A paragraph's document tokens through the tokenizer.
struct SquadDocPieces {
  std::vector<int32_t> ids;                // all_doc_tokens, as vocabulary ids
  std::vector<int32_t> tok_to_orig_index;  // piece -> document token
  std::vector<int32_t> orig_to_tok_index;  // document token -> its first piece (the next token's if it has none)
  std::vector<ByteSpan> spans;             // byte-level BPE: piece -> its bytes in the context, whitespace trimmed
};

class SquadFeatures {
 public:
  // convert_examples_to_features over `examples.examples` in their order. The tokenizer must be the one the
  // reference would use (the vocabulary and --cased, or the tokenizer.json); it needs its template's tokens
  // ([CLS] and [SEP]: bk::Error if not). A --max-seq-length that leaves no document piece is a usage error.
  static SquadFeatures convert(const SquadExamples& examples, const TextTokenizer& tokenizer,
                               const SquadFeatureOptions& options);

  const std::vector<SquadFeature>& features() const { return features_; }
  const SquadFeatureOptions& options() const { return options_; }
  const UnknownCount& unknown() const { return unknown_; }  // the pieces made and the unknown ones among them
  // The features of one example, in window order.
  std::span<const SquadFeature> example_features(size_t example_index) const {
    return std::span(features_).subspan(first_feature_[example_index],
                                        first_feature_[example_index + 1] - first_feature_[example_index]);
  }
  std::span<const int32_t> query_ids(size_t example_index) const {
    return std::span(query_ids_).subspan(query_begin_[example_index],
                                         query_begin_[example_index + 1] - query_begin_[example_index]);
  }
  const SquadDocPieces& doc_pieces(size_t example_index) const { return docs_[example_paragraph_[example_index]]; }

  // The reference's per-feature fields. Positions are in the sequence ([CLS] = 0).
  size_t length(const SquadFeature& f) const;  // real tokens (the rest up to max_seq_length is padding)
  int32_t doc_offset(const SquadFeature& f) const {  // position of the window's first piece
    return static_cast<int32_t>(wrap_.before_a.size() + query_ids(f.example_index).size() + wrap_.between.size());
  }
  void input_ids(const SquadFeature& f, std::vector<int32_t>& ids) const;  // unpadded
  // token_to_orig_map[position]: the document token a window piece comes from; -1 where the map has no entry.
  int32_t token_to_orig(const SquadFeature& f, int32_t position) const;
  // token_is_max_context[position]: whether this window gives the piece its most context; false off the window.
  bool token_is_max_context(const SquadFeature& f, int32_t position) const;
  // The tokens as strings (the reference's feature.tokens).
  std::vector<std::string_view> tokens(const SquadFeature& f) const;
  // Byte-level BPE: whether the pieces keep their bytes, and the context from the piece at position `start` to
  // the one at `end` (both in the window), widened to whole characters where a piece holds part of one.
  bool byte_spans() const { return tokenizer_.byte_level(); }
  std::string_view context_text(const SquadExamples& examples, const SquadFeature& f, int32_t start, int32_t end) const;

  // The tf.train.Example FeatureWriter writes: unique_ids, input_ids, input_mask, segment_ids, and for training
  // start_positions, end_positions, is_impossible (int64 each, in that order).
  void to_example(const SquadFeature& f, Example& out) const;

 private:
  SquadFeatureOptions options_;
  std::vector<SquadDocPieces> docs_;          // per paragraph
  std::vector<uint32_t> example_paragraph_;   // per example
  std::vector<int32_t> query_ids_;            // every example's query pieces back to back
  std::vector<uint32_t> query_begin_{0};      // example i: query_ids_[query_begin_[i] .. query_begin_[i+1])
  std::vector<SquadFeature> features_;
  std::vector<uint32_t> first_feature_{0};    // example i: features_[first_feature_[i] .. first_feature_[i+1])
  TextTokenizer tokenizer_;  // for tokens()
  SequenceTemplate wrap_;     // [CLS] query [SEP] window [SEP], or the tokenizer's pair template
  UnknownCount unknown_;
};

// _improve_answer_span: the first (start ascending, then end descending) piece span inside [input_start,
// input_end] equal to the answer's pieces, else [input_start, input_end].
std::pair<int32_t, int32_t> improve_answer_span(std::span<const int32_t> doc_pieces, int32_t input_start,
                                                int32_t input_end, std::span<const int32_t> answer_pieces);

// _check_is_max_context: whether span cur_span_index scores best for the piece at `position` (score =
// min(left context, right context) + 0.01 * span length; the first of equal scores wins).
bool check_is_max_context(std::span<const DocSpan> doc_spans, size_t cur_span_index, int32_t position);

// The windows convert_examples_to_features makes over `doc_length` pieces.
std::vector<DocSpan> make_doc_spans(int32_t doc_length, int32_t max_tokens_for_doc, int32_t doc_stride);

}  // namespace bk
