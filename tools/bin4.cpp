// bin4: split BERT pretraining HDF5 files into length bins, each bin sharded. See man/bin4.1.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "data/bin4.h"

int main(int argc, char** argv) {
  return bk::run_tool("bin4", argc, argv, [](int argc, char** argv) {
    bk::Bin4Options cfg;
    std::string bins = "128,256,384,512", layout;
    bk::Options opts("bin4", "[options] -o DIR INPUT.hdf5...",
                     "Split BERT pretraining samples (NVIDIA or MLPerf varlength HDF5) into bins by their number of\n"
                     "real tokens, sum(input_mask): DIR/128/ holds [1,128], DIR/256/ [129,256], and so on. Within a\n"
                     "bin, samples are dealt round-robin to K shards, DIR/<bin>/part-00000-of-0000K.hdf5.\n"
                     "DIR/bin4.json, written last, records the counts per bin.");
    opts.add()
      ("output,o", bk::po::value<std::string>(&cfg.output_dir)->required(), "output directory DIR")
      ("bins", bk::po::value<std::string>(&bins)->default_value(bins), "upper bounds of the bins, increasing")
      ("shards-per-bin", bk::po::value<int>(&cfg.shards_per_bin)->default_value(1), "shard files per bin (K)")
      ("trim", bk::po::bool_switch(&cfg.trim), "NVIDIA layout: make each bin's rows as wide as its bound")
      ("layout", bk::po::value<std::string>(&layout), "output layout: nvidia or varlength (default: the first input's)")
      ("gzip", bk::po::value<int>(&cfg.gzip_level), "deflate level 0-9 (default: 4 for nvidia, 0 for varlength)")
      ("max-predictions", bk::po::value<int>(&cfg.max_predictions),
       "prediction slots of NVIDIA output (default: the inputs' largest)")
      ("drop-long", bk::po::bool_switch(&cfg.drop_long), "skip samples longer than the last bound instead of failing")
      ("force,f", bk::po::bool_switch(&cfg.force), "write into an existing non-empty DIR, replacing its files");
    opts.positional("input", -1);
    opts.epilog("Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 130 interrupted.");
    if (!opts.parse(argc, argv)) return 0;
    cfg.quiet = opts.quiet();
    cfg.inputs = opts.positionals();
    cfg.bins = bk::parse_bins(bins);
    if (!layout.empty()) {
      bk::Hdf5Layout parsed;
      if (!bk::parse_layout(layout, parsed)) bk::usage_fail("--layout must be nvidia or varlength, got '{}'", layout);
      cfg.layout = parsed;
    }
    if (opts.has("gzip")) bk::require_range("gzip", cfg.gzip_level, 0, 9);
    if (opts.has("max-predictions")) bk::require_positive("max-predictions", cfg.max_predictions);
    bk::run_bin4(cfg);
    return 0;
  });
}
