// bert-train: BERT pretraining in LibTorch, from one CPU process to many GPUs and nodes.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "tasks/pretraining/bert_train.h"

int main(int argc, char** argv) {
  return bk::run_tool("bert-train", argc, argv, [](int argc, char** argv) {
    bk::BertTrainConfig cfg;
    bk::Options opts("bert-train", "--config CFG.json --input PATH... --output-dir DIR --train-batch-size B --max-steps N [options]",
                     "Pretrain BERT (masked LM + next sentence) on HDF5 data made by mkpretrain, tfrecord2hdf5 or bin4.\n"
                     "Distributed runs take their rank from torchrun-style variables, Slurm, Open MPI, Intel MPI, MPICH\n"
                     "or MVAPICH2, or start their own workers with --nproc-per-node.");
    bk::add_bert_train_options(opts, cfg);
    opts.epilog("Exit status: 0 ok, 1 error (the last checkpoint is left intact), 2 usage error, 130 interrupted.");
    if (!opts.parse(argc, argv)) return 0;
    if (cfg.loop.launch.launch()) return bk::run_local_workers(cfg.loop.launch, argc, argv);
    cfg.loop.quiet = opts.quiet();
    bk::run_bert_train(cfg);
    return 0;
  });
}
