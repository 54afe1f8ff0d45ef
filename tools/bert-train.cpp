// bert-train: BERT pretraining in LibTorch, from one CPU process to many GPUs and nodes.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "tasks/pretraining/bert_train.h"

int main(int argc, char** argv) {
  return bk::run_tool("bert-train", argc, argv, [](int argc, char** argv) {
    bk::BertTrainConfig cfg;
    bk::Options opts("bert-train", "--config CFG.json|--init-checkpoint DIR --input PATH... --output-dir DIR --train-batch-size B --max-steps N [options]",
                     "Pretrain BERT (masked LM + next sentence) on HDF5 data made by mkpretrain, tfrecord2hdf5 or bin4.\n"
                     "Distributed runs take their rank from torchrun-style variables, Slurm, Open MPI, Intel MPI, MPICH\n"
                     "or MVAPICH2, or start their own workers with --nproc-per-node.");
    bk::add_bert_train_options(opts, cfg);
    opts.epilog("Examples:\n"
                "  bert-train --config bert_config.json --input hdf5/ --output-dir run1 --train-batch-size 32 \\\n"
                "      --max-steps 1000 --learning-rate 1e-3 --precision bf16\n"
                "  bert-train --nproc-per-node 8 --device cuda --precision bf16 --config large.json --input bins/ \\\n"
                "      --output-dir phase1 --train-batch-size 8192 --gradient-accumulation-steps 128 \\\n"
                "      --max-steps 7038 --learning-rate 6e-3 --warmup-proportion 0.2843\n"
                "  srun bert-train --device cuda ...\n"
                "  bert-train --init-checkpoint my-hf-model --vocab my-hf-model/vocab.txt --input mine.hdf5 \\\n"
                "      --output-dir run --train-batch-size 32 --max-steps 2000 --no-nsp   # continue a published model\n"
                "\n"
                "Exit status: 0 success, 1 error (the last checkpoint is left intact), 2 usage error, 130 interrupted\n"
                "(129 hangup, 143 terminated; one process saves a checkpoint first).");
    if (!opts.parse(argc, argv)) return 0;
    if (cfg.loop.launch.launch()) return bk::run_local_workers(cfg.loop.launch, argc, argv);
    cfg.loop.quiet = opts.quiet();
    bk::run_bert_train(cfg);
    return 0;
  });
}
