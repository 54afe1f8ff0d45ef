// Dynamic masking's flags (--masking, --masked-lm-prob, --whole-word-mask), as bert-train and bert-eval take them,
// resolved against their inputs into the rule a loader masks unmasked samples with (pretraining_data/
// dynamic_masks.h). Torch-free.
#pragma once

#include "pretraining_data/dynamic_masks.h"
#include "util/choices.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bk {

class Options;
struct PretrainInputs;
struct SampleFile;

// --masking: static (the data's masks) or dynamic (drawn by the loader; unmasked data).
inline constexpr Choice<bool> kTrainMasking[] = {{"static", false}, {"dynamic", true}};

// BERT's masking rate: create_pretraining_data.py's default.
inline constexpr double kDefaultMaskedLmProb = 0.15;

struct MaskingFlags {
  std::optional<bool> masking;           // --masking (true: dynamic); unset: as the data is
  std::optional<double> masked_lm_prob;  // --masked-lm-prob; unset: kDefaultMaskedLmProb
  std::optional<double> masked_lm_prob_final;  // --masked-lm-prob-final (bert-train): the rate at the last step
  bool whole_word_mask = false;

  // bk::UsageError for a rate outside (0, 1).
  void validate() const;
};

// Declares --masking, --masked-lm-prob and --whole-word-mask (and, with `schedule`, --masked-lm-prob-final) bound
// to `flags`; masking_help says what --masking does in the tool.
void add_masking_options(Options& options, MaskingFlags& flags, const char* masking_help, bool schedule);

// The rule unmasked inputs are masked with; null for masked inputs. dynamic_by_default: unmasked inputs without
// --masking are masked (bert-train) or refused (bert-eval, whose scores are those of a set masked once, on
// request). Needs the data's vocabulary for unmasked inputs; max_predictions 0 takes the most the rule can draw
// from the inputs' longest row, round(L x prob) at the higher of the two rates (varlength files, which record no
// length, need it given); every refusal is one line (bk::UsageError for a flag, bk::Error naming the file).
// steps, batches: the run's, over which --masked-lm-prob-final moves the rate.
std::shared_ptr<const DynamicMasking> resolve_masking(const MaskingFlags& flags, const PretrainInputs& inputs,
                                                      const std::string& vocab_path, int64_t max_predictions,
                                                      bool dynamic_by_default, int64_t steps = 0,
                                                      const BatchSchedule& batches = {});

// The prediction slots a batch of `sources` needs when `masking` draws their masks: the rule's count per sample,
// or, for packed rows (pack(1) of unmasked files), the most a row of them can get (packed_row_predictions).
int64_t dynamic_prediction_slots(const std::vector<std::vector<SampleFile>>& sources, const DynamicMasking& masking);

}  // namespace bk
