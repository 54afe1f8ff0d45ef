// pack: several BERT pretraining samples per fixed-width row (packed HDF5). See man/pack.1.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "datasets/pack.h"

int main(int argc, char** argv) {
  return bk::run_tool("pack", argc, argv, [](int argc, char** argv) {
    bk::PackConfig cfg;
    bk::Options opts("pack", "[options] -o OUTPUT.hdf5 INPUT.hdf5...",
                     "Pack BERT pretraining samples (NVIDIA or MLPerf varlength HDF5) several to a row of\n"
                     "--max-seq-length tokens, so that training computes on real tokens rather than padding.\n"
                     "Every sample lands in exactly one row, whole; rows record each sample's tokens (input_mask\n"
                     "numbers them 1, 2, ...), positions restarting at 0, masked positions and NSP label. bert-train\n"
                     "reads the output and keeps attention inside each sample. Plan: best-fit decreasing (pack(1)).\n"
                     "Unmasked instances (mkpretrain --masking none) pack with their sample ids, for bert-train to mask.");
    opts.add()
      ("output,o", bk::po::value(&cfg.output)->required()->value_name("FILE"),
       "output file OUTPUT.hdf5 (packed layout); missing directories are created")
      ("max-seq-length", bk::optional_value(cfg.seq_len)->value_name("L"), "row width L (default: the inputs' width, or 512)")
      ("max-sequences", bk::po::value(&cfg.max_sequences)->default_value(cfg.max_sequences)->value_name("N"), "samples per row at most")
      ("max-predictions", bk::optional_value(cfg.max_predictions)->value_name("P"),
       "prediction slots per row (default: the largest sample's count + max-sequences - 1; masked inputs)")
      ("seed", bk::po::value(&cfg.seed)->default_value(cfg.seed)->value_name("S"), "seed of the rows' order in the output")
      ("gzip", bk::po::value(&cfg.gzip_level)->default_value(cfg.gzip_level)->value_name("N"), "deflate level 0-9")
      ("force,f", bk::po::bool_switch(&cfg.force), "replace an existing OUTPUT");
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  pack --max-seq-length 512 -o packed/part-00000.hdf5 phase2/part-00000.hdf5\n"
                "  pack --max-sequences 3 --seed 7 -o packed/all.hdf5 phase2/part-*.hdf5\n"
                "\n"
                "Exit status: 0 success, 1 bad input or I/O error (no output file is left), 2 usage error, 130 interrupted\n"
                "(129 hangup, 143 terminated).");
    if (!opts.parse(argc, argv)) return 0;
    cfg.quiet = opts.quiet();
    cfg.inputs = opts.positionals();
    bk::run_pack(cfg);
    return 0;
  });
}
