#include "tasks/pretraining/bert_eval.h"

#include "cli/options.h"
#include "tok/text_tokenizer.h"
#include "tok/vocab_stamp.h"
#include "util/error.h"

namespace bk {

void BertEvalConfig::validate() const {
  require_positive("batch-size", settings.batch_size);
  masking_flags.validate();
  if (settings.max_predictions < 0) usage_fail("--max-predictions must be >= 0, got {}", settings.max_predictions);
  if (fill_mask_texts.empty()) {
    if (inputs.empty()) usage_fail("give HDF5 files with --input, or --fill-mask TEXT");
  } else {
    if (!inputs.empty()) usage_fail("--fill-mask and --input exclude each other");
    require_positive("top-k", top_k);
  }
}

void add_bert_eval_options(Options& options, BertEvalConfig& c) {
  const BertEvalConfig d;  // the defaults, written once in the config's initialisers
  auto& s = c.settings;
  options.add()
    ("checkpoint", po::value(&c.checkpoint)->required()->value_name("PATH"),
     "model directory (config.json + model.safetensors) or a .safetensors file")
    ("config", po::value(&c.config)->value_name("FILE"), "BERT config JSON (default: config.json beside the weights)")
    ("input", po::value(&c.inputs)->multitoken()->value_name("FILE"), "HDF5 pretraining files or directories of them (also as operands)")
    ("batch-size", po::value(&s.batch_size)->default_value(d.settings.batch_size)->value_name("N"), "samples per forward pass")
    ("max-predictions", po::value(&s.max_predictions)->default_value(d.settings.max_predictions)->value_name("P"),
     "masked positions per sample at most (0 = as in the data)")
    ("max-samples", po::value(&s.max_samples)->default_value(d.settings.max_samples)->value_name("N"),
     "evaluate the first N samples only (0 = all)")
    ("device", po::value(&c.device)->default_value(d.device)->value_name("DEV"), "cpu, cuda or cuda:N")
    ("precision", choice_value("precision", kPrecisionFlags, c.precision, d.precision)->value_name("P"), kPrecisionHelp)
    ("fill-mask", po::value(&c.fill_mask_texts)->value_name("TEXT"), "print the top-k tokens for each [MASK] in TEXT (repeatable)")
    ("vocab", po::value(&c.vocab)->value_name("FILE"),
     "WordPiece vocabulary for --fill-mask (default: vocab.txt, else tokenizer.json, beside the checkpoint)")
    ("tokenizer", po::value(&c.tokenizer)->value_name("FILE"), kTokenizerFlagHelp)
    (kAllowVocabMismatchFlag, po::bool_switch(&c.allow_vocab_mismatch), kAllowVocabMismatchHelp)
    ("mask-seed", po::value(&s.mask_seed)->default_value(d.settings.mask_seed)->value_name("S"),
     "dynamic masking: the evaluation set's seed (bert-train's evaluation uses the same default)")
    ("top-k", po::value(&c.top_k)->default_value(d.top_k)->value_name("K"), "predictions per [MASK] for --fill-mask")
    ("cased", po::bool_switch(&c.cased), "--fill-mask: keep case and accents (default: as the model was trained: its tokenizer_config.json, else its vocabulary's casing)");
  add_masking_options(options, c.masking_flags,
                      "dynamic: mask unmasked inputs (mkpretrain --masking none) once, from --mask-seed, as "
                      "bert-train does; static: the inputs' own masks (the default for masked inputs)",
                      /*schedule=*/false);
}

}  // namespace bk
