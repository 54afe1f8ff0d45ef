#include "squad/squad_features.h"

#include "tfrecord/example.h"
#include "util/utf8.h"
#include "util/error.h"

#include <algorithm>

namespace bk {
namespace {


// list[i] with Python's rule for i = -1 (the last element); the list is not empty.
int32_t python_index(const std::vector<int32_t>& list, int32_t i) {
  return list[static_cast<size_t>(i < 0 ? static_cast<int32_t>(list.size()) + i : i)];
}

}  // namespace

void SquadFeatureOptions::validate() const {
  if (max_query_length < 1) usage_fail("--max-query-length must be positive, got {}", max_query_length);
  if (doc_stride < 1) usage_fail("--doc-stride must be positive, got {}", doc_stride);
  // run_squad.py's validate_flags_or_throw: room for [CLS], [SEP], [SEP] and at least one document piece.
  if (max_seq_length <= max_query_length + 3)
    usage_fail("--max-seq-length ({}) must be greater than --max-query-length ({}) + 3", max_seq_length,
               max_query_length);
}

std::vector<DocSpan> make_doc_spans(int32_t doc_length, int32_t max_tokens_for_doc, int32_t doc_stride) {
  std::vector<DocSpan> spans;
  int32_t start_offset = 0;
  while (start_offset < doc_length) {
    const int32_t length = std::min(doc_length - start_offset, max_tokens_for_doc);
    spans.push_back({start_offset, length});
    if (start_offset + length == doc_length) break;
    start_offset += std::min(length, doc_stride);
  }
  return spans;
}

std::pair<int32_t, int32_t> improve_answer_span(std::span<const int32_t> doc_pieces, int32_t input_start,
                                                int32_t input_end, std::span<const int32_t> answer_pieces) {
  // The reference compares " ".join(pieces) strings; pieces hold no spaces and each string has one id, so
  // comparing the id sequences is the same test.
  const auto n = static_cast<int32_t>(answer_pieces.size());
  for (int32_t new_start = input_start; new_start <= input_end; ++new_start)
    for (int32_t new_end = input_end; new_end >= new_start; --new_end)
      if (new_end - new_start + 1 == n &&
          std::equal(answer_pieces.begin(), answer_pieces.end(), doc_pieces.begin() + new_start))
        return {new_start, new_end};
  return {input_start, input_end};
}

bool check_is_max_context(std::span<const DocSpan> doc_spans, size_t cur_span_index, int32_t position) {
  bool found = false;
  double best_score = 0;
  size_t best_span_index = 0;
  for (size_t span_index = 0; span_index < doc_spans.size(); ++span_index) {
    const DocSpan& span = doc_spans[span_index];
    const int32_t end = span.start + span.length - 1;
    if (position < span.start || position > end) continue;
    const int32_t num_left_context = position - span.start;
    const int32_t num_right_context = end - position;
    // The same double arithmetic as the reference's Python floats, so ties break the same way.
    const double score = std::min(num_left_context, num_right_context) + 0.01 * span.length;
    if (!found || score > best_score) {
      found = true;
      best_score = score;
      best_span_index = span_index;
    }
  }
  return found && cur_span_index == best_span_index;
}

namespace {

// The reference's document pieces: each document token through the tokenizer on its own.
void tokenize_words(const SquadDocument& doc_tokens, TextTokenizer::Encoder& encoder, SquadDocPieces& doc) {
  std::vector<int32_t> pieces;
  doc.orig_to_tok_index.reserve(doc_tokens.size());
  for (size_t i = 0; i < doc_tokens.size(); ++i) {
    doc.orig_to_tok_index.push_back(static_cast<int32_t>(doc.ids.size()));
    encoder.encode(doc_tokens[i], pieces);
    doc.ids.insert(doc.ids.end(), pieces.begin(), pieces.end());
    doc.tok_to_orig_index.insert(doc.tok_to_orig_index.end(), pieces.size(), static_cast<int32_t>(i));
  }
}

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Byte-level BPE: the context tokenized whole, each piece with its bytes (ASCII whitespace trimmed at both ends;
// HF's trim_offsets trims spaces) and the document token its first byte falls in (the first, before any).
void tokenize_context(const SquadDocument& doc_tokens, TextTokenizer::Encoder& encoder, SquadDocPieces& doc) {
  const std::string_view context = doc_tokens.context;
  encoder.encode_with_spans(context, doc.ids, doc.spans);
  std::vector<uint32_t> word_begin;  // split_squad_document's tokens, by where they start in the context
  bool prev_is_whitespace = true;
  for (size_t pos = 0; pos < context.size();) {
    const size_t here = pos;
    const bool whitespace = is_squad_whitespace(next_code_point(context, pos));
    if (!whitespace && prev_is_whitespace) word_begin.push_back(static_cast<uint32_t>(here));
    prev_is_whitespace = whitespace;
  }
  doc.tok_to_orig_index.reserve(doc.ids.size());
  for (ByteSpan& span : doc.spans) {
    while (span.begin < span.end && is_ascii_space(context[span.begin])) ++span.begin;
    while (span.end > span.begin && is_ascii_space(context[span.end - 1])) --span.end;
    const auto word = std::upper_bound(word_begin.begin(), word_begin.end(), span.begin) - word_begin.begin() - 1;
    doc.tok_to_orig_index.push_back(static_cast<int32_t>(std::max<ptrdiff_t>(word, 0)));
  }
  for (size_t word = 0, piece = 0; word < word_begin.size(); ++word) {
    while (piece < doc.ids.size() && doc.tok_to_orig_index[piece] < static_cast<int32_t>(word)) ++piece;
    doc.orig_to_tok_index.push_back(static_cast<int32_t>(piece));
  }
}

// The answer's pieces, inclusive, by the reference's words narrowed to the answer's own pieces (WordPiece).
std::pair<int32_t, int32_t> answer_by_words(const SquadExample& example, const SquadDocument& doc_tokens,
                                            const SquadDocPieces& doc, TextTokenizer::Encoder& encoder) {
  const auto all_doc_length = static_cast<int32_t>(doc.ids.size());
  // start_position is -1 only for an answer starting in leading whitespace: Python's [-1] is the last.
  const int32_t start = python_index(doc.orig_to_tok_index, example.start_position);
  const int32_t end = example.end_position < static_cast<int32_t>(doc_tokens.size()) - 1
                          ? doc.orig_to_tok_index[static_cast<size_t>(example.end_position + 1)] - 1
                          : all_doc_length - 1;
  std::vector<int32_t> answer_pieces;
  encoder.encode(example.orig_answer_text, answer_pieces);
  return improve_answer_span(doc.ids, start, end, answer_pieces);
}

// The answer's pieces, inclusive, by its bytes (byte-level BPE): the last piece starting at or before its first
// byte, the first piece ending at or after its last, as run_qa.py walks the offsets.
std::pair<int32_t, int32_t> answer_by_bytes(const SquadExample& example, const SquadDocPieces& doc) {
  const auto& spans = doc.spans;
  const auto starts_after = std::find_if(spans.begin(), spans.end(),
                                         [&](const ByteSpan& s) { return s.begin > example.answer_begin; });
  const auto reaches = std::find_if(spans.begin(), spans.end(),
                                    [&](const ByteSpan& s) { return s.end >= example.answer_end; });
  const auto start = static_cast<int32_t>(std::max<ptrdiff_t>(starts_after - spans.begin() - 1, 0));
  const auto end = static_cast<int32_t>(std::min<ptrdiff_t>(reaches - spans.begin(), std::ssize(spans) - 1));
  return {start, std::max(start, end)};
}

std::string_view without_leading_space(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  return text;
}

}  // namespace

SquadFeatures SquadFeatures::convert(const SquadExamples& examples, const TextTokenizer& tokenizer,
                                     const SquadFeatureOptions& options) {
  options.validate();
  SquadFeatures out;
  out.options_ = options;
  out.tokenizer_ = tokenizer;
  out.wrap_ = tokenizer.sequence_template();
  const auto specials = static_cast<int32_t>(out.wrap_.pair_specials());
  if (options.max_seq_length <= options.max_query_length + specials)
    usage_fail("--max-seq-length ({}) must be greater than --max-query-length ({}) + {} (the tokenizer's special "
               "tokens of a pair)", options.max_seq_length, options.max_query_length, specials);
  const bool by_bytes = tokenizer.byte_level();
  TextTokenizer::Encoder encoder = tokenizer.encoder();
  out.docs_.resize(examples.documents.size());
  std::vector<uint8_t> tokenized(examples.documents.size(), 0);
  out.example_paragraph_.reserve(examples.examples.size());
  out.first_feature_.reserve(examples.examples.size() + 1);
  out.query_begin_.reserve(examples.examples.size() + 1);

  std::vector<int32_t> pieces;
  int64_t unique_id = 1000000000;
  for (size_t example_index = 0; example_index < examples.examples.size(); ++example_index) {
    const SquadExample& example = examples.examples[example_index];
    const SquadDocument& doc_tokens = examples.doc_tokens(example);
    SquadDocPieces& doc = out.docs_[example.paragraph];
    // The reference tokenizes the document for every question; its pieces depend on the paragraph alone.
    if (!tokenized[example.paragraph]) {
      tokenized[example.paragraph] = 1;
      if (by_bytes) tokenize_context(doc_tokens, encoder, doc);
      else tokenize_words(doc_tokens, encoder, doc);
    }
    out.example_paragraph_.push_back(example.paragraph);

    encoder.encode(by_bytes ? without_leading_space(example.question_text) : example.question_text, pieces);
    if (pieces.size() > static_cast<size_t>(options.max_query_length)) pieces.resize(static_cast<size_t>(options.max_query_length));
    out.query_ids_.insert(out.query_ids_.end(), pieces.begin(), pieces.end());
    out.query_begin_.push_back(static_cast<uint32_t>(out.query_ids_.size()));
    const auto query_length = static_cast<int32_t>(pieces.size());
    const auto all_doc_length = static_cast<int32_t>(doc.ids.size());

    int32_t tok_start_position = -1, tok_end_position = -1;
    const bool has_answer = options.is_training && !example.is_impossible && all_doc_length > 0;
    if (has_answer)
      std::tie(tok_start_position, tok_end_position) =
          by_bytes ? answer_by_bytes(example, doc) : answer_by_words(example, doc_tokens, doc, encoder);

    const int32_t max_tokens_for_doc = options.max_seq_length - query_length - specials;
    const std::vector<DocSpan> spans = make_doc_spans(all_doc_length, max_tokens_for_doc, options.doc_stride);
    for (size_t span_index = 0; span_index < spans.size(); ++span_index) {
      SquadFeature& f = out.features_.emplace_back();
      f.unique_id = unique_id++;
      f.example_index = static_cast<uint32_t>(example_index);
      f.doc_span_index = static_cast<uint32_t>(span_index);
      f.span = spans[span_index];
      f.is_impossible = example.is_impossible;
      if (has_answer) {
        // A window that does not hold the whole answer has nothing to predict: start = end = 0 ([CLS]).
        const int32_t doc_start = f.span.start, doc_end = f.span.start + f.span.length - 1;
        if (tok_start_position >= doc_start && tok_end_position <= doc_end) {
          const int32_t doc_offset = out.doc_offset(f);
          f.start_position = tok_start_position - doc_start + doc_offset;
          f.end_position = tok_end_position - doc_start + doc_offset;
        }
      }
    }
    out.first_feature_.push_back(static_cast<uint32_t>(out.features_.size()));
  }
  out.unknown_ = encoder.take_unknown();
  return out;
}

size_t SquadFeatures::length(const SquadFeature& f) const {
  return query_ids(f.example_index).size() + static_cast<size_t>(f.span.length) + wrap_.pair_specials();
}

void SquadFeatures::input_ids(const SquadFeature& f, std::vector<int32_t>& ids) const {
  const auto window = std::span(doc_pieces(f.example_index).ids).subspan(static_cast<size_t>(f.span.start),
                                                                         static_cast<size_t>(f.span.length));
  wrap_.wrap(query_ids(f.example_index), &window, ids);
}

std::string_view SquadFeatures::context_text(const SquadExamples& examples, const SquadFeature& f, int32_t start,
                                             int32_t end) const {
  const SquadExample& example = examples.examples[f.example_index];
  const auto& spans = doc_pieces(f.example_index).spans;
  const ByteSpan first = spans[static_cast<size_t>(f.span.start + start - doc_offset(f))];
  const ByteSpan last = spans[static_cast<size_t>(f.span.start + end - doc_offset(f))];
  const std::string_view context = examples.doc_tokens(example).context;
  // A character split into byte pieces is taken whole: the text stays UTF-8 whichever pieces the logits chose.
  const auto continuation = [&](size_t at) { return at < context.size() && (context[at] & 0xC0) == 0x80; };
  size_t from = std::min(first.begin, last.end), to = last.end;
  while (from > 0 && continuation(from)) --from;
  while (continuation(to)) ++to;
  return context.substr(from, to - from);
}

int32_t SquadFeatures::token_to_orig(const SquadFeature& f, int32_t position) const {
  const int32_t i = position - doc_offset(f);
  if (i < 0 || i >= f.span.length) return -1;
  return doc_pieces(f.example_index).tok_to_orig_index[static_cast<size_t>(f.span.start + i)];
}

bool SquadFeatures::token_is_max_context(const SquadFeature& f, int32_t position) const {
  const int32_t i = position - doc_offset(f);
  if (i < 0 || i >= f.span.length) return false;
  std::vector<DocSpan> spans;
  for (const SquadFeature& g : example_features(f.example_index)) spans.push_back(g.span);
  return check_is_max_context(spans, f.doc_span_index, f.span.start + i);
}

std::vector<std::string_view> SquadFeatures::tokens(const SquadFeature& f) const {
  std::vector<int32_t> ids;
  input_ids(f, ids);
  std::vector<std::string_view> out;
  out.reserve(ids.size());
  for (int32_t id : ids) out.push_back(tokenizer_.token(id));
  return out;
}

void SquadFeatures::to_example(const SquadFeature& f, Example& out) const {
  const auto L = static_cast<size_t>(options_.max_seq_length);
  std::vector<int32_t> ids;
  input_ids(f, ids);
  const size_t n = ids.size(), segment_a = static_cast<size_t>(doc_offset(f));
  Int64List input(ids.begin(), ids.end()), mask(L, 0), segments(L, 0);
  input.resize(L, 0);
  std::fill_n(mask.begin(), n, 1);
  std::fill(segments.begin() + static_cast<ptrdiff_t>(segment_a), segments.begin() + static_cast<ptrdiff_t>(n), 1);
  // FeatureWriter.process_feature's order.
  out.clear();
  out.set_int64("unique_ids", {f.unique_id});
  out.set_int64("input_ids", std::move(input));
  out.set_int64("input_mask", std::move(mask));
  out.set_int64("segment_ids", std::move(segments));
  if (options_.is_training) {
    out.set_int64("start_positions", {f.start_position});
    out.set_int64("end_positions", {f.end_position});
    out.set_int64("is_impossible", {f.is_impossible ? 1 : 0});
  }
}

}  // namespace bk
