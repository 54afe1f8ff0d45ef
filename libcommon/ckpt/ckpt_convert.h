// ckpt-convert: a BERT checkpoint converted between TF1, native, HF safetensors and torch .pt (convert.h reads
// them). Torch-free: the .pt writer, which needs LibTorch, is handed in by the tool.
#pragma once

#include "ckpt/convert.h"

#include <string>

namespace bk {

struct CkptConvertConfig {
  std::string input;
  std::string output;
  std::string to;            // native, hf, pt
  bool list = false;
  LoadOptions load;
  int64_t pad_vocab = 0;     // 0 or 1: none
  std::string vocab;         // empty: the tokenizer beside the input (checkpoint_path.h; required for hf)
  std::string tokenizer;     // --tokenizer: a byte-level BPE tokenizer instead of --vocab
  std::string lower_case;    // "true", "false" or empty: from the vocabulary (ckpt/tokenizer_files.h)
  bool allow_vocab_mismatch = false;  // warn instead of refusing a --vocab or casing other than the model's
  bool force = false;
  bool quiet = false;
  PtWriter write_pt;         // required for --to pt

  // bk::UsageError for a combination of flags no run can use.
  void validate() const;
};

// The whole tool: --list to stdout, or load + write. Output directories are built under a temporary name beside
// OUT and renamed into place, so a failure leaves nothing behind.
void run_ckpt_convert(const CkptConvertConfig& config);

}  // namespace bk
