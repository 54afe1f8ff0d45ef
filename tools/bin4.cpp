// bin4: split BERT pretraining HDF5 files into length bins, each bin sharded. See man/bin4.1.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "datasets/bin4.h"

int main(int argc, char** argv) {
  return bk::run_tool("bin4", argc, argv, [](int argc, char** argv) {
    bk::Bin4Config cfg;
    const bk::Bin4Config defaults;
    bk::Options opts("bin4", "[options] -o DIR INPUT.hdf5...",
                     "Split BERT pretraining samples (NVIDIA or MLPerf varlength HDF5) into bins by their number of\n"
                     "real tokens, sum(input_mask): DIR/128/ holds [1,128], DIR/256/ [129,256], and so on. Within a\n"
                     "bin, samples are dealt round-robin to K shards, DIR/<bin>/part-00000-of-0000K.hdf5.\n"
                     "DIR/bin4.json, written last, records the counts per bin.");
    opts.add()
      ("output,o", bk::po::value(&cfg.output_dir)->required()->value_name("DIR"),
       "output directory (created with any missing parents)")
      ("bins", bk::po::value<std::string>()
                   ->default_value(bk::format_bins(defaults.bins))
                   ->value_name("LIST")
                   ->notifier([&cfg](const std::string& text) { cfg.bins = bk::parse_bins(text); }),
       "upper bounds of the bins, increasing")
      ("shards-per-bin", bk::po::value(&cfg.shards_per_bin)->default_value(defaults.shards_per_bin)->value_name("K"),
       "shard files per bin (K); bins x K files are open at once, at most 256 less a few (fewer with a low "
       "ulimit -n)")
      ("trim", bk::po::bool_switch(&cfg.trim), "NVIDIA layout: make each bin's rows as wide as its bound")
      ("layout", bk::po::value(&cfg.layout)->value_name("LAYOUT"), "output layout: nvidia or varlength (default: the first input's)")
      ("gzip", bk::optional_value(cfg.gzip_level)->value_name("N"), "deflate level 0-9 (default: 4 for nvidia, 0 for varlength)")
      ("max-predictions", bk::optional_value(cfg.max_predictions)->value_name("P"),
       "prediction slots of NVIDIA output (default: the inputs' largest)")
      ("drop-long", bk::po::bool_switch(&cfg.drop_long), "skip samples longer than the last bound instead of failing")
      ("threads,t", bk::po::value(&cfg.threads)->default_value(defaults.threads)->value_name("N"),
       "deflate threads (0 = all cores); output is the same for any N")
      ("force,f", bk::po::bool_switch(&cfg.force), "replace an existing DIR that holds an earlier bin4 output, whole");
    opts.positional("input", -1);
    opts.epilog("Examples:\n"
                "  bin4 --shards-per-bin 4 --trim -t 0 -o bins/ wiki_*.hdf5\n"
                "  bin4 --layout varlength --bins 128,512 -o bins2/ phase2/part-*.hdf5\n"
                "  bin4 --drop-long --force -o bins/ extra.hdf5\n"
                "\n"
                "Exit status: 0 success, 1 bad input or I/O error, 2 usage error, 130 interrupted (129 hangup, 143\n"
                "terminated). A failed or interrupted run removes its temporaries and the directories it created.");
    if (!opts.parse(argc, argv)) return 0;
    cfg.quiet = opts.quiet();
    cfg.inputs = opts.positionals();
    bk::run_bin4(cfg);
    return 0;
  });
}
