#include "model/encoder.h"

#include "model/modern_encoder.h"

namespace bk {

std::unique_ptr<Encoder> make_encoder(const BertConfig& config, int64_t padded_vocab, ParameterSet& params,
                                      bool with_pooler) {
  if (config.is_modernbert()) return std::make_unique<ModernBertEncoder>(config, padded_vocab, params, with_pooler);
  return std::make_unique<BertEncoder>(config, padded_vocab, params, with_pooler);
}

}  // namespace bk
