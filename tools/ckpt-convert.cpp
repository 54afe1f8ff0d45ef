// ckpt-convert: BERT pretraining checkpoints between TF1 (read without TensorFlow), native, HF safetensors and
// torch .pt; --list prints a TF1 checkpoint's variables as inspect_checkpoint does.
#include "ckpt/ckpt_convert.h"
#include "tok/text_tokenizer.h"
#include "tok/vocab_stamp.h"
#include "cli/options.h"
#include "cli/run_tool.h"
#include "model/pt_export.h"

int main(int argc, char** argv) {
  return bk::run_tool("ckpt-convert", argc, argv, [](int argc, char** argv) {
    bk::CkptConvertConfig cfg;
    const bk::CkptConvertConfig defaults;
    bk::Options opts("ckpt-convert", "(--list | --to native|hf|pt|tf -o OUT) [options] INPUT",
                     "Convert a BERT pretraining checkpoint. INPUT is a TF1 checkpoint prefix (PREFIX.index and\n"
                     "PREFIX.data-*; TensorFlow is not needed), a native checkpoint directory or an HF directory with\n"
                     "model.safetensors, a torch.save file (.pt, .pth, .bin: NVIDIA's checkpoints, HF's pytorch_model.bin)\n"
                     "or a bert-train output directory (its latest checkpoint). Every tensor's CRC32C\n"
                     "and shape (against the config) is checked. native and hf directories get the tokenizer too:\n"
                     "vocab.txt, tokenizer_config.json and special_tokens_map.json. --to tf writes a TF1 checkpoint\n"
                     "with google-research/bert's names (OUT.index, OUT.data-00000-of-00001) that TensorFlow loads,\n"
                     "and bert_config.json, vocab.txt and the `checkpoint` file beside it.");
    opts.add()
      ("list", bk::po::bool_switch(&cfg.list), "print one line per tensor: NAME (DTYPE) [SHAPE]; of a TF checkpoint "
       "reads only the index")
      ("to", bk::po::value(&cfg.to)->value_name("FORMAT"),
       "native (bert-train/bert-eval), hf (transformers from_pretrained), pt (torch.load, state dict under 'model') "
       "or tf (TF1 checkpoint: tf.train.load_checkpoint, google-research/bert's init_checkpoint)")
      ("output,o", bk::po::value(&cfg.output)->value_name("OUT"), "output directory (native, hf), file (pt) or checkpoint prefix (tf: OUT.index; a directory "
       "stands for DIR/bert_model.ckpt)")
      ("config", bk::po::value(&cfg.load.config_path)->value_name("FILE"),
       "bert_config.json or config.json (default: the one beside INPUT)")
      ("keep-optimizer", bk::po::bool_switch(&cfg.load.keep_optimizer),
       "keep Adam/LAMB moments (native: optimizer.safetensors, NAME.exp_avg / NAME.exp_avg_sq; tf: VAR/adam_m, "
       "VAR/adam_v)")
      ("allow-unmapped", bk::po::bool_switch(&cfg.load.allow_unmapped), "drop tensors with no BERT name instead of failing")
      ("pad-vocab", bk::po::value(&cfg.pad_vocab)->default_value(defaults.pad_vocab)->value_name("N"),
       "pad word embeddings and decoder bias with zero rows to a multiple of N (hf, pt; NVIDIA's scripts use 8)")
      ("vocab", bk::po::value(&cfg.vocab)->value_name("FILE"),
       "the model's vocabulary, written with the tokenizer files (default: vocab.txt, else tokenizer.json, beside "
       "INPUT; hf needs one)")
      ("tokenizer", bk::po::value(&cfg.tokenizer)->value_name("FILE"), bk::kTokenizerFlagHelp)
      (bk::kAllowVocabMismatchFlag, bk::po::bool_switch(&cfg.allow_vocab_mismatch), bk::kAllowVocabMismatchHelp)
      ("do-lower-case", bk::po::value(&cfg.lower_case)->value_name("BOOL"),
       "true or false for tokenizer_config.json, native and hf (default: a tokenizer_config.json beside the vocabulary, else "
       "false when the vocabulary is cased: 1% or more of its word pieces hold capitals)")
      ("force,f", bk::po::bool_switch(&cfg.force), "replace an existing output (a directory only when it holds "
       "nothing but a model's files)");
    opts.positional("input", 1);
    opts.epilog("Examples:\n"
                "  ckpt-convert --list uncased_L-12_H-768_A-12/bert_model.ckpt\n"
                "  ckpt-convert --to native -o init/ uncased_L-12_H-768_A-12/bert_model.ckpt\n"
                "  ckpt-convert --to hf -o hf-model/ run/checkpoint-7038/\n"
                "  ckpt-convert --to pt --pad-vocab 8 -o bert_base.pt model.ckpt-28252\n"
                "\n"
                "Exit status: 0 success, 1 error (nothing is written), 2 usage error, 130 interrupted (129 hangup,\n"
                "143 terminated; nothing is left).");
    if (!opts.parse(argc, argv)) return 0;
    auto inputs = opts.positionals();
    if (!inputs.empty()) cfg.input = inputs[0];
    cfg.quiet = opts.quiet();
    cfg.write_pt = bk::write_pt_state_dict;
    bk::run_ckpt_convert(cfg);
    return 0;
  });
}
