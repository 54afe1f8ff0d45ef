#include "pretraining_data/masking_kind.h"

#include "util/error.h"

namespace bk {

void MaskingKinds::add(const std::string& path, bool masked) {
  std::string& first = masked ? first_masked_ : first_unmasked_;
  if (first.empty()) first = path;
  if (!first_masked_.empty() && !first_unmasked_.empty())
    fail("{} holds its masks and {} none (mkpretrain --masking none): give files of one kind", first_masked_,
         first_unmasked_);
}

}  // namespace bk
