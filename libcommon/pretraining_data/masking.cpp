#include "pretraining_data/masking.h"

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

}  // namespace bk
