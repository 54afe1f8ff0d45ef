// bert-eval: masked-LM and next-sentence metrics of a BERT checkpoint on HDF5 pretraining data, or the model's
// guesses for [MASK] in a sentence.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "model/eval_run.h"

int main(int argc, char** argv) {
  return bk::run_tool("bert-eval", argc, argv, [](int argc, char** argv) {
    bk::EvalOptions o;
    auto& s = o.settings;
    bk::Options opts("bert-eval", "--checkpoint DIR [options] --input FILE...\n"
                     "       bert-eval --checkpoint DIR --vocab VOCAB --fill-mask TEXT [--top-k K]",
                     "Evaluate a BERT pretraining checkpoint (an HF safetensors directory or a bertkit checkpoint):\n"
                     "masked-LM accuracy (the MLPerf metric), next-sentence accuracy and both losses over HDF5 files\n"
                     "(NVIDIA or MLPerf varlength layout), printed as one JSON object; or, with --fill-mask, the top-k\n"
                     "tokens for each [MASK] of a text, one JSON object per text.");
    opts.add()
      ("checkpoint", bk::po::value(&o.checkpoint)->required()->value_name("PATH"), "model directory (config.json + model.safetensors) or a .safetensors file")
      ("config", bk::po::value(&o.config)->value_name("FILE"), "BERT config JSON (default: config.json beside the weights)")
      ("input", bk::po::value(&s.inputs)->multitoken()->value_name("FILE"), "HDF5 pretraining files (also as operands)")
      ("batch-size", bk::po::value(&s.batch_size)->default_value(64)->value_name("N"), "samples per forward pass")
      ("max-predictions", bk::po::value(&s.max_predictions)->default_value(0)->value_name("P"), "masked positions per sample at most (0 = as in the data)")
      ("max-samples", bk::po::value(&s.max_samples)->default_value(0)->value_name("N"), "evaluate the first N samples only (0 = all)")
      ("device", bk::po::value(&o.device)->default_value("cpu")->value_name("DEV"), "cpu, cuda or cuda:N")
      ("fill-mask", bk::po::value(&o.fill_mask_texts)->value_name("TEXT"), "print the top-k tokens for each [MASK] in TEXT (repeatable)")
      ("vocab", bk::po::value(&o.vocab)->value_name("FILE"), "WordPiece vocabulary for --fill-mask")
      ("top-k", bk::po::value(&o.top_k)->default_value(5)->value_name("K"), "predictions per [MASK] for --fill-mask")
      ("cased", bk::po::bool_switch(&o.cased), "--fill-mask: keep case and accents (default: lower-case and strip accents)");
    opts.positional("file", -1);
    opts.epilog("Exit status: 0 ok, 1 error (unreadable checkpoint or data), 2 usage error.");
    if (!opts.parse(argc, argv)) return 0;
    o.quiet = opts.quiet();
    for (auto& file : opts.positionals()) s.inputs.push_back(file);
    bk::require_positive("--batch-size", s.batch_size);
    if (s.max_predictions < 0) bk::usage_fail("--max-predictions must be >= 0, got {}", s.max_predictions);
    if (o.fill_mask_texts.empty()) {
      if (s.inputs.empty()) bk::usage_fail("give HDF5 files with --input, or --fill-mask TEXT");
    } else {
      if (!s.inputs.empty()) bk::usage_fail("--fill-mask and --input exclude each other");
      if (o.vocab.empty()) bk::usage_fail("--fill-mask needs --vocab");
      bk::require_positive("--top-k", o.top_k);
    }
    bk::run_eval(o);
    return 0;
  });
}
