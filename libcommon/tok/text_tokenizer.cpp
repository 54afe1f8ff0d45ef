#include "tok/text_tokenizer.h"

#include "tok/tokenizer_json.h"
#include "util/error.h"
#include "util/fnv1a.h"
#include "util/printable.h"
#include "util/tool_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace bk {
namespace {

int32_t first_of(const BpeTokenizerSpec& spec, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names)
    if (const int32_t id = spec.id_of(name); id >= 0) return id;
  return -1;
}

// BPE's roles: [CLS] and [SEP] from the template (the tokens before and after A), the rest by name.
SpecialIds bpe_specials(const BpeTokenizerSpec& spec) {
  SpecialIds s;
  const auto& single = spec.post.single;
  for (size_t i = 0; i < single.size(); ++i) {
    if (single[i].sequence != 'A') continue;
    if (i > 0 && single[i - 1].ids.size() == 1) s.cls = single[i - 1].ids[0];
    if (i + 1 < single.size() && single[i + 1].ids.size() == 1) s.sep = single[i + 1].ids[0];
  }
  if (s.cls < 0) s.cls = first_of(spec, {"<s>", "[CLS]"});
  if (s.sep < 0) s.sep = first_of(spec, {"</s>", "[SEP]"});
  s.mask = first_of(spec, {"<mask>", "[MASK]"});
  s.pad = first_of(spec, {"<pad>", "[PAD]", "<|padding|>"});
  s.unk = spec.model->unk_id() >= 0 ? spec.model->unk_id() : first_of(spec, {"<unk>", "[UNK]"});
  return s;
}

}  // namespace

std::string TokenizerFlags::path() const {
  if (!vocab.empty() && !tokenizer.empty()) usage_fail("give --vocab (WordPiece) or --tokenizer (byte-level BPE), not both");
  if (!tokenizer.empty() && cased) usage_fail("--cased is WordPiece's: a byte-level BPE tokenizer keeps the text as it is");
  if (!tokenizer.empty() && !is_bpe_tokenizer_path(tokenizer))
    usage_fail("--tokenizer takes a tokenizer.json or a vocab.json; a WordPiece vocabulary goes to --vocab: {}", tokenizer);
  if (is_bpe_tokenizer_path(vocab))
    usage_fail("--vocab takes WordPiece's vocab.txt; give a byte-level BPE tokenizer with --tokenizer: {}", vocab);
  return tokenizer.empty() ? vocab : tokenizer;
}

void SequenceTemplate::wrap(std::span<const int32_t> a, const std::span<const int32_t>* b,
                            std::vector<int32_t>& out) const {
  const auto add = [&out](std::span<const int32_t> ids) { out.insert(out.end(), ids.begin(), ids.end()); };
  out.clear();
  if (!b) {
    add(before_single), add(a), add(after_single);
    return;
  }
  add(before_a), add(a), add(between), add(*b), add(after_b);
}

TextTokenizer TextTokenizer::load(const std::string& path, bool lower_case) {
  TextTokenizer t;
  t.path_ = path;
  if (is_bpe_tokenizer_path(path)) {
    t.lower_case_ = false;
    t.bpe_ = std::make_shared<const BpeTokenizerSpec>(load_bpe_tokenizer(path));
    t.specials_ = bpe_specials(*t.bpe_);
    t.continues_.resize(t.bpe_->vocab_size());
    for (size_t id = 0; id < std::min(t.continues_.size(), t.bpe_->model->size()); ++id) {
      // "Ġ" (U+0120) is a space: a piece that starts with it starts a word
      t.continues_[id] = !t.bpe_->model->token(static_cast<int32_t>(id)).starts_with("\xC4\xA0") &&
                         !t.is_special(static_cast<int32_t>(id));
    }
    for (const AddedToken& token : t.bpe_->added_tokens) t.continues_[token.id] = 0;
    return t;
  }
  return wordpiece(Vocab::load(path), lower_case, path);
}

TextTokenizer TextTokenizer::wordpiece(Vocab vocab, bool lower_case, const std::string& path) {
  TextTokenizer t;
  t.path_ = path;
  t.lower_case_ = lower_case;
  t.vocab_ = std::make_shared<const Vocab>(std::move(vocab));
  const auto find = [&](std::string_view name) { return t.vocab_->find(name); };
  t.specials_ = {find("[CLS]"), find("[SEP]"), find("[MASK]"), find("[PAD]"), find("[UNK]")};
  t.continues_.resize(t.vocab_->size());
  for (size_t id = 0; id < t.continues_.size(); ++id)
    t.continues_[id] = t.vocab_->token(static_cast<int32_t>(id)).starts_with("##");
  return t;
}

namespace {

// The special tokens of a template around its sequences: before[0] A before[1] (B before[2]); false when the
// sequences are not A, then B.
bool template_parts(const std::vector<TemplateItem>& items, std::vector<int32_t> (&parts)[3], size_t sequences) {
  size_t part = 0;
  for (const TemplateItem& item : items) {
    if (item.sequence == 0) {
      parts[part].insert(parts[part].end(), item.ids.begin(), item.ids.end());
      continue;
    }
    if (item.sequence != (part == 0 ? 'A' : 'B') || part == sequences) return false;
    ++part;
  }
  return part == sequences;
}

}  // namespace

SequenceTemplate TextTokenizer::sequence_template() const {
  if (!bpe_) {
    const int32_t cls = require_cls(), sep = require_sep();
    return {{cls}, {sep}, {cls}, {sep}, {sep}};
  }
  PostTemplate post = bpe_->post;
  if (post.empty()) post = PostTemplate::bert_like(require_cls(), require_sep(), token(require_cls()) == "<s>");
  std::vector<int32_t> single[3], pair[3];
  if (!template_parts(post.single, single, 1) || !template_parts(post.pair, pair, 2))
    fail("{}: the tokenizer's post-processor template does not wrap A, then B: cannot make a pair's input", path_);
  return {single[0], single[1], pair[0], pair[1], pair[2]};
}

bool TextTokenizer::is_special(int32_t id) const {
  return id == specials_.cls || id == specials_.sep || id == specials_.mask || id == specials_.pad ||
         id == specials_.unk;
}

size_t TextTokenizer::size() const { return bpe_ ? bpe_->vocab_size() : vocab_->size(); }

std::string_view TextTokenizer::token(int32_t id) const {
  if (!bpe_) return vocab_->token(id);
  return bpe_->token(id).value_or(std::string_view());
}

int32_t TextTokenizer::id_of(std::string_view token) const { return bpe_ ? bpe_->id_of(token) : vocab_->find(token); }

bool TextTokenizer::continues_word(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < continues_.size() && continues_[id];
}

std::vector<int32_t> TextTokenizer::random_word_ids() const {
  if (!bpe_) return vocab_->distinct_ids();
  std::vector<int32_t> ids;
  for (size_t id = 0; id < bpe_->vocab_size(); ++id)
    if (bpe_->token(static_cast<int32_t>(id))) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

// WordPiece: the tokens in id order (tok/vocab_stamp.h). BPE: the tokens in id order, each merge as "left right",
// each added token with its flags, then the settings that change what text becomes (normalizer, split patterns,
// prefix space, the model's options), so that two files that tokenize differently differ.
VocabStamp TextTokenizer::stamp() const {
  if (!bpe_) return vocab_stamp(*vocab_, lower_case_);
  VocabStamp s;
  s.hash = kFnv1aOffset;
  const BpeModel& model = *bpe_->model;
  for (size_t id = 0; id < bpe_->vocab_size(); ++id)
    s.hash = fnv1a64("\n", fnv1a64(bpe_->token(static_cast<int32_t>(id)).value_or(""), s.hash));
  for (auto [left, right] : model.merges())
    s.hash = fnv1a64("\n", fnv1a64(model.token(right), fnv1a64(" ", fnv1a64(model.token(left), s.hash))));
  for (const AddedToken& t : bpe_->added_tokens)
    s.hash = fnv1a64(fmt::format("{}{}{}{}{}{}\n", t.id, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special),
                     fnv1a64(t.content, s.hash));
  const BpeModelOptions& o = model.options();
  std::string settings;
  for (NormalForm form : bpe_->normalizer) settings += std::string(normal_form_name(form)) + ",";
  for (SplitPattern pattern : bpe_->splits) settings += std::string(split_pattern_regex(pattern)) + ",";
  settings += fmt::format("{}{}|{}|{}{}{}", bpe_->add_prefix_space, bpe_->byte_level_regex, o.unk_token, o.fuse_unk,
                          o.byte_fallback, o.ignore_merges);
  s.hash = fnv1a64(settings, s.hash);
  s.size = bpe_->vocab_size();
  s.lower_case = false;
  s.byte_level = true;
  return s;
}

int32_t TextTokenizer::required(int32_t id, const char* wordpiece_name, const char* bpe_names) const {
  if (id < 0 && bpe_) fail("{}: the tokenizer has no {} token", path_, bpe_names);
  if (id < 0) fail("{}: the vocabulary has no {} token", path_, wordpiece_name);
  return id;
}

void TextTokenizer::warn_if_misfit(const UnknownCount& count) const {
  if (!bpe_) return warn_if_vocabulary_misfits(count, *vocab_, !lower_case_);
  if (count.fraction() > kUnknownWarnFraction)
    std::fprintf(stderr, "%s: warning: %s of the %llu pieces are the unknown token: the tokenizer %s does not fit this text\n",
                 tool_name().c_str(), count.percent().c_str(), static_cast<unsigned long long>(count.pieces),
                 printable_excerpt(path_, 200).c_str());
}

TextTokenizer::Encoder::Encoder(const TextTokenizer& t)
    : keep_(t.bpe_ ? std::shared_ptr<const void>(t.bpe_) : std::shared_ptr<const void>(t.vocab_)),
      impl_(t.bpe_ ? decltype(impl_)(std::in_place_type<BpeTokenizer>, *t.bpe_)
                   : decltype(impl_)(std::in_place_type<FullTokenizer>, *t.vocab_, t.lower_case_)) {}

void TextTokenizer::Encoder::append(std::string_view line, std::vector<int32_t>& ids) {
  std::visit([&](auto& impl) { impl.append(line, ids); }, impl_);
}

void TextTokenizer::Encoder::encode_with_spans(std::string_view line, std::vector<int32_t>& ids,
                                               std::vector<ByteSpan>& spans) {
  ids.clear();
  spans.clear();
  std::get<BpeTokenizer>(impl_).append_with_spans(line, ids, spans);
}

UnknownCount TextTokenizer::Encoder::take_unknown() {
  return std::visit([](auto& impl) { return impl.take_unknown(); }, impl_);
}

}  // namespace bk
