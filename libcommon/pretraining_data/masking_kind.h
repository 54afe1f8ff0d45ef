// One kind of pretraining file per run or per output: masked (mkpretrain's default, the masks fixed in the file) or
// unmasked (mkpretrain --masking none, masked by the loader). bert-train's inputs, bin4 and pack refuse a mix the
// same way, in one line naming a file of each kind. Torch-free.
#pragma once

#include <string>

namespace bk {

class MaskingKinds {
 public:
  // Records a file's kind; bk::Error when it is not the kind of the files before it.
  void add(const std::string& path, bool masked);
  // Whether the files added hold their masks (true while none is added).
  bool masked() const { return first_unmasked_.empty(); }

 private:
  std::string first_masked_, first_unmasked_;
};

}  // namespace bk
