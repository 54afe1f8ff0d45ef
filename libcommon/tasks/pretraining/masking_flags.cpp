#include "tasks/pretraining/masking_flags.h"

#include "cli/options.h"
#include "tasks/pretraining/inputs.h"
#include "tok/text_tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace bk {

void MaskingFlags::validate() const {
  if (masked_lm_prob && !(*masked_lm_prob > 0 && *masked_lm_prob < 1))
    usage_fail("--masked-lm-prob must be in (0, 1), got {}", *masked_lm_prob);
  if (masked_lm_prob_final && !(*masked_lm_prob_final > 0 && *masked_lm_prob_final < 1))
    usage_fail("--masked-lm-prob-final must be in (0, 1), got {}", *masked_lm_prob_final);
}

void add_masking_options(Options& options, MaskingFlags& flags, const char* masking_help, bool schedule) {
  options.add()
    ("masking", optional_choice_value("masking", kTrainMasking, flags.masking)->value_name("M"), masking_help)
    ("masked-lm-prob", optional_value(flags.masked_lm_prob)->value_name("X"),
     "dynamic masking: the share of tokens to mask (default 0.15; MosaicBERT and ModernBERT: 0.3)")
    ("whole-word-mask", po::bool_switch(&flags.whole_word_mask), "dynamic masking: mask all pieces of a word together");
  if (schedule)
    options.add()("masked-lm-prob-final", optional_value(flags.masked_lm_prob_final)->value_name("X"),
                  "dynamic masking: the rate moves linearly from --masked-lm-prob at the first step to X at the last "
                  "(mmBERT: 0.3 to 0.05)");
}

std::shared_ptr<const DynamicMasking> resolve_masking(const MaskingFlags& flags, const PretrainInputs& inputs,
                                                      const std::string& vocab_path, int64_t max_predictions,
                                                      bool dynamic_by_default, int64_t steps,
                                                      const BatchSchedule& batches) {
  flags.validate();
  const std::string& first = inputs.sources.front().front().path;
  if (inputs.masked) {
    if (flags.masking == true)
      fail("{}: holds its masks (mkpretrain's default); --masking dynamic takes unmasked files (mkpretrain --masking "
           "none)", first);
    if (flags.masked_lm_prob || flags.masked_lm_prob_final || flags.whole_word_mask)
      usage_fail("--masked-lm-prob, --masked-lm-prob-final and --whole-word-mask are dynamic masking's; {} holds its "
                 "masks", first);
    return nullptr;
  }
  if (flags.masking == false)
    usage_fail("--masking static: {} is unmasked (mkpretrain --masking none); its masks are drawn by the loader", first);
  if (!flags.masking && !dynamic_by_default)
    fail("{}: unmasked instances (mkpretrain --masking none): give --masking dynamic to mask them once, from "
         "--mask-seed, as bert-train's evaluation does", first);
  if (vocab_path.empty())
    usage_fail("dynamic masking needs the data's vocabulary ([MASK], the random replacements): give --vocab or --tokenizer");
  const double prob = flags.masked_lm_prob.value_or(kDefaultMaskedLmProb);
  // The prediction slots hold the most masks of either end of a schedule.
  const double highest = std::max(prob, flags.masked_lm_prob_final.value_or(prob));
  if (max_predictions == 0) {
    // The most the rule draws for the longest row: round(L x prob) (what 20 for 128 tokens and 80 for 512 round up).
    int64_t longest = 0;
    for (const auto& source : inputs.sources)
      for (const auto& file : source) longest = std::max<int64_t>(longest, file.seq_len);
    if (longest == 0)
      usage_fail("{}: varlength files record no row length: give --max-predictions, the most masks per sample "
                 "(create_pretraining_data.py's: 20 for 128 tokens, 80 for 512)", first);
    max_predictions = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(static_cast<double>(longest) * highest)));
  }
  return std::make_shared<const DynamicMasking>(
      DynamicMasking{masking_vocab(TextTokenizer::load(vocab_path, true)),
                     MaskingRule{prob, static_cast<int>(max_predictions), flags.whole_word_mask},
                     flags.masked_lm_prob_final.value_or(-1), steps, batches});
}

int64_t dynamic_prediction_slots(const std::vector<std::vector<SampleFile>>& sources, const DynamicMasking& masking) {
  auto slots = static_cast<int64_t>(masking.rule.max_predictions);
  for (const auto& source : sources)
    for (const auto& file : source)
      if (file.max_sequences > 1)
        slots = std::max(slots, static_cast<int64_t>(packed_row_predictions(masking.widest_rule(), file.seq_len,
                                                                            file.max_sequences)));
  return slots;
}

}  // namespace bk
