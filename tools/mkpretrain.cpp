// mkpretrain: sentence-per-line documents -> BERT MLM/NSP pretraining instances (TFRecord or HDF5),
// the same instances in the same order as google-research/bert create_pretraining_data.py.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "pretraining_data/mkpretrain.h"

int main(int argc, char** argv) {
  return bk::run_tool("mkpretrain", argc, argv, [](int argc, char** argv) {
    bk::MkpretrainConfig cfg;
    const bk::MkpretrainConfig defaults;
    auto& ic = cfg.instances;
    const bk::InstanceConfig& d = defaults.instances;
    bool no_nsp = !d.next_sentence;
    bk::Options opts("mkpretrain", "--vocab VOCAB|--tokenizer FILE -o OUT [options] INPUT...",
                     "Make BERT masked-LM and next-sentence instances from sentence-per-line documents (a blank\n"
                     "line after each document), identical to google-research/bert create_pretraining_data.py.");
    opts.add()
      ("vocab", bk::po::value(&cfg.tokenizer.vocab)->value_name("FILE"), "WordPiece vocabulary (one token per line)")
      ("tokenizer", bk::po::value(&cfg.tokenizer.tokenizer)->value_name("FILE"),
       "instead of --vocab: a byte-level BPE tokenizer.json (or vocab.json with merges.txt beside it); its <s>, </s> "
       "and <mask> (or [CLS], [SEP], [MASK]) wrap and mask the instances")
      ("cased", bk::po::bool_switch(&cfg.tokenizer.cased), "keep case and accents (default: lower-case and strip accents)")
      ("whole-word-mask", bk::po::bool_switch(&ic.whole_word_mask), "mask all pieces of a word together")
      ("no-nsp", bk::po::bool_switch(&no_nsp),
       "no next-sentence pairs: [CLS] sentences [SEP] from one document, segment 0, label 0")
      ("full-sentences", bk::po::bool_switch(&ic.full_sentences),
       "RoBERTa's FULL-SENTENCES: rows of consecutive sentences across documents, a [SEP] between documents, "
       "no NSP (with --masking none)")
      ("max-seq-length", bk::po::value(&ic.max_seq_length)->default_value(d.max_seq_length)->value_name("L"),
       "tokens per instance")
      ("max-predictions", bk::po::value(&ic.max_predictions)->default_value(d.max_predictions)->value_name("P"),
       "masked positions per instance at most")
      ("masked-lm-prob", bk::po::value(&ic.masked_lm_prob)
                             ->default_value(d.masked_lm_prob, bk::default_text(d.masked_lm_prob))
                             ->value_name("X"),
       "share of tokens to mask")
      ("short-seq-prob", bk::po::value(&ic.short_seq_prob)
                             ->default_value(d.short_seq_prob, bk::default_text(d.short_seq_prob))
                             ->value_name("Y"),
       "probability of a shorter target length")
      ("dupe-factor", bk::optional_value(cfg.dupe_factor)->value_name("D"),
       "passes over the documents, each with other masks (default 10; 1 with --masking none)")
      ("masking", bk::choice_value("masking", bk::kMkpretrainMasking, cfg.unmasked, defaults.unmasked)->value_name("M"),
       "static: masks drawn here, as create_pretraining_data.py does; none: the same instances unmasked, for "
       "bert-train to mask at every epoch (HDF5 only)")
      ("seed", bk::po::value(&cfg.seed)->default_value(defaults.seed)->value_name("S"),
       "random seed (an integer of any size, as Python's)")
      ("format", bk::po::value(&cfg.format)->value_name("FORMAT"),
       "tfrecord or hdf5 (default: from the output's extension, else tfrecord)")
      ("layout", bk::po::value(&cfg.hdf5_layout)->default_value(defaults.hdf5_layout)->value_name("LAYOUT"),
       "HDF5 layout: nvidia or varlength")
      ("gzip", bk::po::value(&cfg.gzip_level)->default_value(defaults.gzip_level)->value_name("N"),
       "HDF5 deflate level 1-9 (0 = none)")
      ("output,o", bk::po::value(&cfg.output)->required()->value_name("OUT"), "output file (- = stdout, TFRecord only)")
      ("threads,t", bk::po::value(&cfg.threads)->default_value(defaults.threads)->value_name("N"),
       "tokenization threads (0 = all cores); output is the same for any N")
      ("force,f", bk::po::bool_switch(&cfg.force), "overwrite an existing output file");
    opts.positional("input", -1);
    opts.epilog("The whole input is held in memory, as the reference does, because instances are shuffled across it;\n"
                "run one mkpretrain per shard. HDF5 output needs a file (it is written with seeks); a TFRecord can go\n"
                "to stdout with -o -. Missing directories of OUT are created. On a terminal, a progress line shows\n"
                "the share of the input read, then of the instances written.\n"
                "\n"
                "Examples:\n"
                "  mkpretrain --vocab vocab.txt --dupe-factor 5 -o out.tfrecord sample_text.txt\n"
                "  mkpretrain --vocab vocab.txt --max-seq-length 512 --max-predictions 80 -o shard_00.hdf5 shard_00.txt\n"
                "  mkpretrain --vocab vocab.txt --whole-word-mask -t 0 -o - shard_01.txt | gzip > shard_01.tfrecord.gz\n"
                "\n"
                "Exit status: 0 success, 1 data or I/O error (no output file is left), 2 usage error, 130 interrupted\n"
                "(129 hangup, 143 terminated).");
    if (!opts.parse(argc, argv)) return 0;
    ic.next_sentence = !no_nsp && !ic.full_sentences;
    cfg.inputs = opts.positionals();
    cfg.quiet = opts.quiet();
    bk::run_mkpretrain(cfg);
    return 0;
  });
}
