// tfrecord2hdf5: TFRecord files of tf.train.Example records -> HDF5 (NVIDIA or MLPerf pretraining layout, or one
// generic column per feature), every record's checksums verified.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "datasets/tfrecord2hdf5.h"

int main(int argc, char** argv) {
  return bk::run_tool("tfrecord2hdf5", argc, argv, [](int argc, char** argv) {
    bk::Tfrecord2hdf5Config cfg;
    const bk::Tfrecord2hdf5Config defaults;
    bk::Options opts("tfrecord2hdf5", "(-o OUT.hdf5 | --output-dir DIR) [options] INPUT...",
                     "Convert TFRecord files of tf.train.Example records to HDF5. Both CRCs of every record are\n"
                     "checked; a damaged or truncated record stops the run with the file, record index and byte offset.");
    opts.add()
      ("output,o", bk::po::value(&cfg.output)->value_name("FILE"), "one HDF5 file for all inputs")
      ("output-dir", bk::po::value(&cfg.output_dir)->value_name("DIR"), "one DIR/NAME.hdf5 per input instead")
      ("layout", bk::po::value(&cfg.layout)->default_value(defaults.layout)->value_name("LAYOUT"),
       "nvidia, varlength (MLPerf), generic, or auto: nvidia for pretraining records, else generic")
      ("max-seq-length", bk::po::value(&cfg.max_seq_length)->default_value(defaults.max_seq_length)->value_name("L"),
       "row width of the nvidia layout (0 = the first record's)")
      ("max-predictions", bk::po::value(&cfg.max_predictions)->default_value(defaults.max_predictions)->value_name("P"),
       "prediction slots of the nvidia layout (0 = the first record's)")
      ("gzip", bk::po::value(&cfg.gzip_level)->default_value(defaults.gzip_level)->value_name("N"),
       "deflate level 1-9 (0 = none)")
      ("skip-corrupt", bk::po::bool_switch(&cfg.skip_corrupt), "count and skip records whose data CRC is wrong")
      ("force,f", bk::po::bool_switch(&cfg.force), "overwrite existing output files");
    opts.positional("input", -1);
    opts.epilog("A missing output directory (of FILE, or DIR itself) is created. On a terminal, a progress line shows the\n"
                "share of the inputs read.\n"
                "\n"
                "Examples:\n"
                "  tfrecord2hdf5 -o part-00000.hdf5 part-00000-of-00500.tfrecord\n"
                "  tfrecord2hdf5 --layout varlength --output-dir hdf5/ tfrecords/*.tfrecord\n"
                "  tfrecord2hdf5 -o mrpc.hdf5 train.tf_record\n"
                "\n"
                "Exit status: 0 success, 1 data or I/O error (no output file is left), 2 usage error, 130 interrupted\n"
                "(129 hangup, 143 terminated).");
    if (!opts.parse(argc, argv)) return 0;
    cfg.inputs = opts.positionals();
    cfg.quiet = opts.quiet();
    bk::run_tfrecord2hdf5(cfg);
    return 0;
  });
}
