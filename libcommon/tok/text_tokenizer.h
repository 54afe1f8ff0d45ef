// The tokenizer a tool's text goes through: Google's WordPiece (a vocab.txt and a casing) or a byte-level BPE
// (tokenizer.json, or vocab.json + merges.txt), behind one interface for the tools that tokenize (mkpretrain,
// bert-train's masks, bert-eval --fill-mask, bert-finetune, ckpt-convert). The file decides the kind: a path
// ending in .json is byte-level BPE, any other a WordPiece vocabulary. Read-only once loaded; one Encoder per
// thread does the tokenizing. Torch-free.
#pragma once

#include "tok/bpe_tokenizer.h"
#include "tok/full_tokenizer.h"
#include "tok/vocab.h"
#include "tok/vocab_fit.h"
#include "tok/vocab_stamp.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bk {

// The ids of the tokens with a role, -1 where the tokenizer has none. WordPiece: [CLS] [SEP] [MASK] [PAD] [UNK];
// BPE: the template's first special token and the one after A, then <mask>/[MASK], <pad>/[PAD], <unk>/[UNK].
struct SpecialIds {
  int32_t cls = -1, sep = -1, mask = -1, pad = -1, unk = -1;
};

// How a classifier's or a reader's input wraps one text (before_single A after_single) or a pair (before_a A between
// B after_b): WordPiece's [CLS] A [SEP] B [SEP], a tokenizer.json's post-processor template (RoBERTa's
// <s> A </s></s> B </s>). Segment 0 runs up to the end of `between`, segment 1 after it.
struct SequenceTemplate {
  std::vector<int32_t> before_single, after_single, before_a, between, after_b;
  size_t single_specials() const { return before_single.size() + after_single.size(); }
  size_t pair_specials() const { return before_a.size() + between.size() + after_b.size(); }
  // The wrapped ids (b == nullptr: one text).
  void wrap(std::span<const int32_t> a, const std::span<const int32_t>* b, std::vector<int32_t>& out) const;
};

// The flags that name a tool's tokenizer: --vocab (WordPiece, with --cased) or --tokenizer (byte-level BPE).
struct TokenizerFlags {
  std::string vocab, tokenizer;
  bool cased = false;
  // The file given, "" when neither; a usage error when both are, or --cased with --tokenizer.
  std::string path() const;
};

// --tokenizer's help, the same in every tool that takes --vocab.
inline constexpr const char* kTokenizerFlagHelp =
    "instead of --vocab: a byte-level BPE tokenizer.json (RoBERTa's, ModernBERT's, bpe train's), or a vocab.json "
    "with its merges.txt beside it";

class TextTokenizer {
 public:
  // Reads `path`; `lower_case` is WordPiece's casing (BPE files carry their own normalization).
  static TextTokenizer load(const std::string& path, bool lower_case);
  static TextTokenizer load(const TokenizerFlags& flags) { return load(flags.path(), !flags.cased); }
  // A WordPiece vocabulary already read (`path` names it in messages).
  static TextTokenizer wordpiece(Vocab vocab, bool lower_case, const std::string& path = "");

  bool byte_level() const { return bpe_ != nullptr; }
  const std::string& path() const { return path_; }
  bool lower_case() const { return lower_case_; }
  size_t size() const;
  std::string_view token(int32_t id) const;
  int32_t id_of(std::string_view token) const;  // -1 when absent
  const SpecialIds& specials() const { return specials_; }
  // specials().cls and the like, or bk::Error naming the file and the token a caller cannot do without.
  int32_t require_cls() const { return required(specials_.cls, "[CLS]", "<s> or [CLS]"); }
  int32_t require_sep() const { return required(specials_.sep, "[SEP]", "</s> or [SEP]"); }
  int32_t require_mask() const { return required(specials_.mask, "[MASK]", "<mask> or [MASK]"); }
  int32_t require_pad() const { return required(specials_.pad, "[PAD]", "<pad> or [PAD]"); }
  // The wrapping of one text or a pair; bk::Error naming the file when the tokenizer has none (no [CLS]/[SEP], or
  // a template that does not put A before B).
  SequenceTemplate sequence_template() const;
  // Whether token `id` continues the word before it: a "##" piece, or a byte-level piece that does not start with
  // a space ("Ġ"); special tokens never do.
  bool continues_word(int32_t id) const;
  // Every id, in id order: what a random replacement is drawn from (WordPiece: the reference's list(vocab.keys())).
  std::vector<int32_t> random_word_ids() const;
  VocabStamp stamp() const;

  const Vocab* wordpiece() const { return vocab_.get(); }
  const BpeTokenizerSpec* bpe() const { return bpe_.get(); }
  // The loaded vocabulary or tokenizer this shares with its copies and their encoders (which keep it alive).
  const void* identity() const { return bpe_ ? static_cast<const void*>(bpe_.get()) : vocab_.get(); }

  // Tokenizes lines; one per thread.
  class Encoder {
   public:
    explicit Encoder(const TextTokenizer& tokenizer);
    void append(std::string_view line, std::vector<int32_t>& ids);
    void encode(std::string_view line, std::vector<int32_t>& ids) {
      ids.clear();
      append(line, ids);
    }
    // Byte-level BPE only: the ids of `line` and the bytes of it each stands for (BpeTokenizer::append_with_spans).
    void encode_with_spans(std::string_view line, std::vector<int32_t>& ids, std::vector<ByteSpan>& spans);
    UnknownCount take_unknown();

   private:
    std::shared_ptr<const void> keep_;  // what impl_ points into
    std::variant<FullTokenizer, BpeTokenizer> impl_;
  };
  Encoder encoder() const { return Encoder(*this); }

  // One warning line when the text does not fit (tok/vocab_fit.h): WordPiece's [UNK] share and casing; for BPE
  // the unknown token's share, when the model has one.
  void warn_if_misfit(const UnknownCount& count) const;

 private:
  // `id`, or bk::Error: "the vocabulary has no [CLS] token", "the tokenizer has no <s> or [CLS] token".
  int32_t required(int32_t id, const char* wordpiece_name, const char* bpe_names) const;
  bool is_special(int32_t id) const;

  std::string path_;
  bool lower_case_ = true;
  std::shared_ptr<const Vocab> vocab_;
  std::shared_ptr<const BpeTokenizerSpec> bpe_;
  SpecialIds specials_;
  std::vector<uint8_t> continues_;  // by id
};

}  // namespace bk
