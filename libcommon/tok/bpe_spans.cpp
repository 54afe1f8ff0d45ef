// BpeTokenizer::append_with_spans: what each id stands for in the line, for the callers that map pieces back to
// characters (bert-finetune's SQuAD features). The ids are append()'s; only the bookkeeping is added.
#include "tok/bpe_tokenizer.h"

#include "tok/byte_level.h"

#include <algorithm>

namespace bk {
namespace {

// The raw bytes [begin, end) of a normalized stretch, by the normalizer's chunks: the chunks it overlaps.
ByteSpan raw_span(const std::vector<UnicodeNormalizer::Chunk>& chunks, ByteSpan normalized) {
  const auto first = std::upper_bound(chunks.begin(), chunks.end(), normalized.begin,
                                      [](uint32_t at, const UnicodeNormalizer::Chunk& c) { return at < c.normalized_end; });
  const auto last = std::lower_bound(chunks.begin(), chunks.end(), normalized.end,
                                     [](const UnicodeNormalizer::Chunk& c, uint32_t at) { return c.normalized_end < at; });
  const uint32_t begin = first == chunks.begin() ? 0 : std::prev(first)->raw_end;
  const uint32_t end = normalized.end == 0 ? 0 : last == chunks.end() ? chunks.back().raw_end : last->raw_end;
  return {std::min(begin, end), end};
}

}  // namespace

void BpeTokenizer::append_token_spans(const std::vector<int32_t>& ids, size_t first, ByteSpan word, size_t phantom,
                                      std::vector<ByteSpan>& spans) {
  // Each byte-level token stands for as many bytes as it has characters; a byte-fallback token for one. An
  // unknown token stands for an unknown number: then every token of the word gets the whole word.
  // The first `phantom` bytes (ByteLevel's added space) stand for nothing in the text.
  const size_t mark = spans.size();
  uint32_t at = word.begin;
  for (size_t i = first; i < ids.size(); ++i) {
    token_bytes_.clear();
    const std::string_view token = spec_.model->token(ids[i]);
    size_t length = 0;
    if (append_bytes_of_byte_level(token_bytes_, token)) length = token_bytes_.size();
    else if (token.size() == 6 && token.starts_with("<0x") && token.ends_with(">")) length = 1;
    if (ids[i] == spec_.model->unk_id()) length = 0;
    const size_t skipped = std::min<size_t>(length, phantom);
    phantom -= skipped;
    spans.push_back({at, static_cast<uint32_t>(at + length - skipped)});
    at += static_cast<uint32_t>(length - skipped);
  }
  const bool exact = at == word.end && phantom == 0 &&
                     std::none_of(spans.begin() + static_cast<ptrdiff_t>(mark), spans.end(),
                                  [](const ByteSpan& s) { return s.begin == s.end; });
  if (!exact) std::fill(spans.begin() + static_cast<ptrdiff_t>(mark), spans.end(), word);
}

void BpeTokenizer::append_with_spans(std::string_view line, std::vector<int32_t>& ids, std::vector<ByteSpan>& spans) {
  const size_t first = ids.size();
  raw_segments_.clear();
  spec_.raw_added.split(line, raw_segments_);
  for (const TextSegment& raw : raw_segments_) {
    const auto raw_at = static_cast<uint32_t>(raw.text.data() - line.data());
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      spans.push_back({raw_at, static_cast<uint32_t>(raw_at + raw.text.size())});
      continue;
    }
    const std::string_view normalized = normalizer_.normalize_aligned(raw.text, chunks_);
    const bool unchanged = normalized.data() == raw.text.data();
    const size_t segment_spans = spans.size();
    normalized_segments_.clear();
    spec_.normalized_added.split(normalized, normalized_segments_);
    for (const TextSegment& segment : normalized_segments_) {
      const auto segment_at = static_cast<uint32_t>(segment.text.data() - normalized.data());
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        spans.push_back({segment_at, static_cast<uint32_t>(segment_at + segment.text.size())});
        continue;
      }
      pre_.for_each_words(segment.text, [&](std::span<const std::string_view> words, const WordLocator& where) {
        for (std::string_view word : words) {
          const size_t mark = ids.size();
          append_word(WordCache::key(word), ids);
          const ByteSpan at = where.span(word);
          const size_t phantom = where.prefix && word.data() == where.base ? where.prefix : 0;
          append_token_spans(ids, mark, {at.begin + segment_at, at.end + segment_at}, phantom, spans);
        }
      });
    }
    // Normalized bytes -> the line's.
    for (size_t i = segment_spans; i < spans.size(); ++i) {
      const ByteSpan r = unchanged ? spans[i] : raw_span(chunks_, spans[i]);
      spans[i] = {raw_at + r.begin, raw_at + r.end};
    }
  }
  unknown_.add(std::span<const int32_t>(ids.data() + first, ids.size() - first), spec_.model->unk_id());
}

}  // namespace bk
