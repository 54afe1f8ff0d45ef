// bert-eval: masked-LM and next-sentence metrics of a BERT checkpoint on HDF5 pretraining data, or the model's
// guesses for [MASK] in a sentence.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "tasks/pretraining/bert_eval.h"

int main(int argc, char** argv) {
  return bk::run_tool("bert-eval", argc, argv, [](int argc, char** argv) {
    bk::BertEvalConfig cfg;
    bk::Options opts("bert-eval", "--checkpoint DIR [options] --input FILE...\n"
                     "       bert-eval --checkpoint DIR --vocab VOCAB --fill-mask TEXT [--top-k K]",
                     "Evaluate a BERT pretraining checkpoint (an HF safetensors directory or a bertkit checkpoint):\n"
                     "masked-LM accuracy (the MLPerf metric), next-sentence accuracy and both losses over HDF5 files\n"
                     "(NVIDIA or MLPerf varlength layout), printed as one JSON object; or, with --fill-mask, the top-k\n"
                     "tokens for each [MASK] of a text, one JSON object per text.");
    bk::add_bert_eval_options(opts, cfg);
    opts.positional("file", -1);
    opts.epilog("Examples:\n"
                "  bert-eval --checkpoint ckpt/step_7038 --input eval/*.hdf5 --device cuda\n"
                "  bert-eval --checkpoint phase2/ --fill-mask \"paris is the [MASK] of france.\"\n"
                "  bert-eval --checkpoint bert-base-uncased/ --vocab vocab.txt --fill-mask \"the capital of france is [MASK].\" --top-k 3\n"
                "\n"
                "Exit status: 0 success, 1 error (unreadable checkpoint or data), 2 usage error, 130 interrupted\n"
                "(129 hangup, 143 terminated).");
    if (!opts.parse(argc, argv)) return 0;
    cfg.quiet = opts.quiet();
    for (auto& file : opts.positionals()) cfg.inputs.push_back(file);
    bk::run_bert_eval(cfg);
    return 0;
  });
}
