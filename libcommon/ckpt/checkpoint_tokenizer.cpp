#include "ckpt/checkpoint_tokenizer.h"

#include "ckpt/checkpoint_path.h"
#include "ckpt/tokenizer_files.h"
#include "tok/tokenizer_json.h"
#include "util/error.h"

namespace bk {

CheckpointTokenizer checkpoint_tokenizer(const std::string& checkpoint, const TokenizerFlags& flags,
                                         bool allow_mismatch, const std::string& needed_for,
                                         const std::string& flags_taken) {
  CheckpointTokenizer t{flags.path(), flags.cased};
  if (t.path.empty() && !checkpoint.empty()) t.path = vocab_beside_checkpoint(checkpoint);
  if (t.path.empty())
    usage_fail("{} needs the model's vocabulary: give {} (there is none beside {})", needed_for, flags_taken,
               checkpoint.empty() ? "the model" : checkpoint);
  const std::optional<StampedVocab> model_vocab = checkpoint.empty() ? std::nullopt : checkpoint_vocab_stamp(checkpoint);
  if (!flags.cased && !is_bpe_tokenizer_path(t.path))
    t.cased = !(model_vocab ? model_vocab->stamp : vocab_file_stamp(t.path, std::nullopt).stamp).lower_case;
  if (model_vocab) {
    StampedVocab given = vocab_file_stamp(t.path, !t.cased);
    if (flags.cased) given.where += " with --cased";
    check_same_vocabulary(given, *model_vocab, true, allow_mismatch);
  }
  return t;
}

}  // namespace bk
