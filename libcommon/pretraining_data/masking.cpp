#include "pretraining_data/masking.h"

#include "tok/text_tokenizer.h"
#include "tok/vocab.h"

namespace bk {

MaskingVocab masking_vocab(const Vocab& vocab) {
  MaskingVocab m;
  m.cls_id = vocab.require("[CLS]");
  m.sep_id = vocab.require("[SEP]");
  m.mask_id = vocab.require("[MASK]");
  m.is_continuation.resize(vocab.size());
  for (size_t id = 0; id < vocab.size(); ++id) m.is_continuation[id] = vocab.token(static_cast<int32_t>(id)).starts_with("##");
  m.random_word_ids = vocab.distinct_ids();
  return m;
}

MaskingVocab masking_vocab(const TextTokenizer& tokenizer) {
  if (tokenizer.wordpiece()) return masking_vocab(*tokenizer.wordpiece());
  MaskingVocab m;
  m.cls_id = tokenizer.require_cls();
  m.sep_id = tokenizer.require_sep();
  m.mask_id = tokenizer.require_mask();
  m.is_continuation.resize(tokenizer.size());
  for (size_t id = 0; id < tokenizer.size(); ++id) m.is_continuation[id] = tokenizer.continues_word(static_cast<int32_t>(id));
  m.random_word_ids = tokenizer.random_word_ids();
  return m;
}

}  // namespace bk
