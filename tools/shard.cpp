// shard: split documents into N training and M test shards balanced by bytes, keeping every document whole.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "shard/shard.h"

#include <string>

namespace {

constexpr const char* kEpilog =
    "Documents are read in the document text format (one line per sentence or paragraph, a blank line after\n"
    "each document). The seed chooses round(F * documents) test documents; each split is then balanced by\n"
    "bytes (largest document first into the lightest shard), so no shard exceeds the mean by more than one\n"
    "document. Shards keep the input order of their documents.\n"
    "\n"
    "Writes PREFIX_training-00000-of-0000N.txt ... and PREFIX_test-00000-of-0000M.txt (0-based), each\n"
    "atomically, then PREFIX.done last: a JSON list of the shards with their document and byte counts.\n"
    "The inputs are read twice (more often with more shards than --max-open-files); stdin is spooled to a\n"
    "new PREFIX.stdin-spool.tmp.XXXXXX meanwhile (an existing file is never reused), and any other input\n"
    "that is not a regular file (a named pipe, <(...), a device) to a new PREFIX.input-spool.tmp.XXXXXX.\n"
    "Memory: about 32 bytes per document plus the largest document.\n"
    "\n"
    "On a terminal, a progress line shows which pass of how many runs and its share of the inputs.\n"
    "\n"
    "Examples:\n"
    "  shard --training-shards 256 --test-shards 16 --test-fraction 0.01 -o out/wiki sentences.txt\n"
    "  sent-seg articles.txt | shard -n 4 -o out/demo -\n"
    "  shard -n 1024 --max-open-files 256 -o shards/enwiki enwiki-sentences-*.txt.gz\n"
    "\n"
    "Exit status: 0 done, 1 data or I/O error (nothing is left half-written), 2 usage error, 130 interrupted\n"
    "(129 hangup, 143 terminated).";

int body(int argc, char** argv) {
  bk::ShardConfig config;
  const bk::ShardConfig defaults;
  bk::Options opts("shard", "[options] -o PREFIX INPUT...",
                   "Split documents into balanced training and test shards, keeping every document whole.");
  opts.add()
    ("training-shards,n", bk::po::value(&config.training_shards)->required()->value_name("N"),
     "number of training shards")
    ("test-shards,m", bk::po::value(&config.test_shards)->default_value(defaults.test_shards)->value_name("M"),
     "number of test shards")
    ("test-fraction", bk::po::value(&config.test_fraction)
                          ->default_value(defaults.test_fraction, bk::default_text(defaults.test_fraction))
                          ->value_name("F"),
     "fraction of the documents for the test split, in [0, 1)")
    ("seed", bk::po::value(&config.seed)->default_value(defaults.seed)->value_name("S"),
     "seed of the test choice and of the shard numbering")
    ("output,o", bk::po::value(&config.prefix)->required()->value_name("PREFIX"),
     "output path prefix (missing directories are created)")
    ("max-open-files", bk::po::value(&config.max_open)->default_value(defaults.max_open)->value_name("K"),
     "shards written per pass over the inputs")
    ("force,f", bk::po::bool_switch(&config.force), "replace existing shards and marker");
  opts.positional("input", -1);
  opts.epilog(kEpilog);
  if (!opts.parse(argc, argv)) return 0;
  config.inputs = opts.positionals();
  config.quiet = opts.quiet();
  bk::run_shard(config);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bk::run_tool("shard", argc, argv, body); }
