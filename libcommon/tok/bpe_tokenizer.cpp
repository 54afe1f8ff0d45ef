#include "tok/bpe_tokenizer.h"

#include "tok/byte_level.h"

#include <algorithm>
#include <utility>

namespace bk {

std::vector<int32_t> PostTemplate::apply(const std::vector<int32_t>& a, const std::vector<int32_t>* b) const {
  std::vector<int32_t> out;
  for (const TemplateItem& item : b ? pair : single) {
    if (item.sequence == 0) out.insert(out.end(), item.ids.begin(), item.ids.end());
    else if (item.sequence == 'A') out.insert(out.end(), a.begin(), a.end());
    else if (b) out.insert(out.end(), b->begin(), b->end());
  }
  return out;
}

PostTemplate PostTemplate::bert_like(int32_t cls, int32_t sep, bool roberta) {
  PostTemplate t;
  t.single = {{0, {cls}}, {'A', {}}, {0, {sep}}};
  t.pair = t.single;
  if (roberta) t.pair.push_back({0, {sep}});
  t.pair.push_back({'B', {}});
  t.pair.push_back({0, {sep}});
  return t;
}

void BpeTokenizerSpec::finish() {
  std::vector<AddedToken> raw, normalized;
  std::vector<std::string> raw_patterns, normalized_patterns;
  UnicodeNormalizer n(normalizer);
  decoder_texts_.clear();
  for (const AddedToken& token : added_tokens) {
    decoder_texts_.emplace_back(token.normalized ? n.normalize(token.content) : token.content);
    (token.normalized ? normalized : raw).push_back(token);
    (token.normalized ? normalized_patterns : raw_patterns).push_back(decoder_texts_.back());
  }
  raw_added = AddedTokenMatcher(std::move(raw), std::move(raw_patterns));
  normalized_added = AddedTokenMatcher(std::move(normalized), std::move(normalized_patterns));
  size_t size = model->size();
  for (const AddedToken& token : added_tokens) size = std::max(size, static_cast<size_t>(token.id) + 1);
  added_index_.assign(size, -1);
  for (size_t i = 0; i < added_tokens.size(); ++i) added_index_[added_tokens[i].id] = static_cast<int32_t>(i);
  // Views into the model's and added_tokens' strings, which stay where they are when the spec is moved.
  texts_.assign(size, {});
  for (size_t id = 0; id < model->size(); ++id) texts_[id] = model->token(static_cast<int32_t>(id));
  for (const AddedToken& token : added_tokens) texts_[token.id] = token.content;
}

size_t BpeTokenizerSpec::vocab_size() const { return added_index_.size(); }

std::optional<std::string_view> BpeTokenizerSpec::token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= texts_.size() || texts_[id].empty()) return std::nullopt;
  return texts_[id];
}

std::optional<std::string_view> BpeTokenizerSpec::decoder_text(int32_t id) const {
  if (id >= 0 && static_cast<size_t>(id) < added_index_.size() && added_index_[id] >= 0)
    return decoder_texts_[added_index_[id]];
  return token(id);
}

int32_t BpeTokenizerSpec::id_of(std::string_view content) const {
  for (const AddedToken& token : added_tokens)
    if (token.content == content) return token.id;
  return model->id_of(content);
}

void BpeTokenizer::append(std::string_view line, std::vector<int32_t>& ids) {
  const size_t first = ids.size();
  raw_segments_.clear();
  spec_.raw_added.split(line, raw_segments_);
  for (const TextSegment& raw : raw_segments_) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    normalized_segments_.clear();
    spec_.normalized_added.split(normalizer_.normalize(raw.text), normalized_segments_);
    for (const TextSegment& segment : normalized_segments_) {
      if (segment.id >= 0) ids.push_back(segment.id);
      else pre_.for_each_words(segment.text, [&](std::span<const std::string_view> words) {
        keys_.clear();
        for (std::string_view word : words) cache_.prefetch(keys_.emplace_back(WordCache::key(word)));
        for (const WordCache::Key& key : keys_) append_word(key, ids);
      });
    }
  }
  unknown_.add(std::span<const int32_t>(ids.data() + first, ids.size() - first), spec_.model->unk_id());
}

UnknownCount BpeTokenizer::take_unknown() { return std::exchange(unknown_, {}); }

void BpeTokenizer::append_word(const WordCache::Key& key, std::vector<int32_t>& ids) {
  if (cache_.append(key, ids)) return;
  const size_t mark = ids.size();
  spec_.model->encode_piece(key.word, ids, scratch_);
  cache_.insert(key, ids.data() + mark, ids.size() - mark);
}

std::string decode_byte_level(const BpeTokenizerSpec& spec, const std::vector<int32_t>& ids) {
  std::string bytes, text;
  for (int32_t id : ids) {
    const std::optional<std::string_view> token = spec.decoder_text(id);
    if (token && !append_bytes_of_byte_level(bytes, *token)) bytes.append(*token);
  }
  append_utf8_lossy(text, bytes);
  return text;
}

}  // namespace bk
