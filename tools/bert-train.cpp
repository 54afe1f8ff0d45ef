// bert-train: BERT pretraining in LibTorch, from one CPU process to many GPUs and nodes.
#include "cli/run_tool.h"
#include "cli/options.h"
#include "train/launcher.h"
#include "train/trainer.h"

int main(int argc, char** argv) {
  return bk::run_tool("bert-train", argc, argv, [](int argc, char** argv) {
    bk::TrainerConfig cfg;
    bk::LaunchOptions launch;
    bool no_tensorboard = false;
    namespace po = bk::po;
    bk::Options opts("bert-train", "--config CFG.json --input FILE_OR_DIR... --output-dir DIR [options]",
                     "Pretrain BERT (masked LM + next sentence) on HDF5 data made by mkpretrain, tfrecord2hdf5 or bin4.\n"
                     "Distributed runs take their rank from torchrun-style variables, Slurm or Open MPI, or start their\n"
                     "own workers with --nproc-per-node.");
    opts.add()
      ("config", po::value(&cfg.config_path)->required()->value_name("FILE"), "bert_config.json (Google's or HF's keys)")
      ("input", po::value(&cfg.inputs)->required()->multitoken()->value_name("PATH..."),
       "HDF5 files, directories of them, or bin4 directories")
      ("output-dir", po::value(&cfg.output_dir)->required()->value_name("DIR"), "checkpoints, log.jsonl and tensorboard/ go here")
      ("train-batch-size", po::value(&cfg.train_batch_size)->required()->value_name("B"),
       "samples per process per optimizer step (split over the accumulation steps)")
      ("max-steps", po::value(&cfg.max_steps)->required()->value_name("N"), "optimizer steps of the whole run")
      ("learning-rate", po::value(&cfg.learning_rate)->default_value(1e-4, "1e-4")->value_name("LR"), "peak learning rate")
      ("optimizer", po::value(&cfg.optimizer)->default_value("lamb")->value_name("NAME"), "lamb (NVLAMB) or adamw")
      ("precision", po::value(&cfg.precision)->default_value("fp32")->value_name("P"), "fp32, bf16 (autocast) or fp16 (CUDA, loss scaling)")
      ("tf32", po::bool_switch(&cfg.tf32), "allow TF32 matmuls on CUDA")
      ("seed", po::value(&cfg.seed)->default_value(12345)->value_name("S"), "weights, dropout and data order")
      ("log-file", po::value(&cfg.log_file)->value_name("FILE"), "JSON lines, one per logging step (default OUTPUT_DIR/log.jsonl)")
      ("log-every", po::value(&cfg.log_every)->default_value(1)->value_name("N"), "log every N steps")
      ("no-tensorboard", po::bool_switch(&no_tensorboard), "do not write OUTPUT_DIR/tensorboard/ event files")
      ("warmup-proportion", po::value(&cfg.warmup_proportion)->default_value(0.01, "0.01")->value_name("W"), "share of steps in linear warm-up")
      ("lr-decay", po::value(&cfg.lr_decay)->default_value("poly")->value_name("D"), "poly (NVIDIA's, power 0.5) or linear")
      ("weight-decay", po::value(&cfg.weight_decay)->default_value(0.01, "0.01")->value_name("WD"), "except biases and LayerNorm")
      ("max-grad-norm", po::value(&cfg.max_grad_norm)->default_value(1.0, "1.0")->value_name("N"), "LAMB pre-normalisation / AdamW clipping")
      ("gradient-accumulation-steps", po::value(&cfg.gradient_accumulation_steps)->default_value(1)->value_name("K"), "micro-batches per step")
      ("max-predictions", po::value(&cfg.max_predictions)->default_value(20)->value_name("P"), "masked positions per sample in the data")
      ("checkpoint-every", po::value(&cfg.checkpoint_every)->default_value(0)->value_name("N"), "steps between checkpoints (0 = at the end)")
      ("keep-checkpoints", po::value(&cfg.keep_checkpoints)->default_value(3)->value_name("K"), "keep the last K checkpoints")
      ("resume", po::bool_switch(&cfg.resume), "continue from OUTPUT_DIR's latest checkpoint, exactly")
      ("init-checkpoint", po::value(&cfg.init_checkpoint)->value_name("DIR"), "start from these weights (strict: keys must match)")
      ("stop-after", po::value(&cfg.stop_after)->default_value(0)->value_name("N"), "stop with a checkpoint after N steps of this run")
      ("throughput-warmup-steps", po::value(&cfg.throughput_warmup_steps)->default_value(0)->value_name("N"),
       "leave the first N steps out of the throughput figure")
      ("peak-tflops", po::value(&cfg.peak_tflops)->default_value(0)->value_name("T"), "device peak for MFU (default: known GPUs)")
      ("device", po::value(&cfg.device)->default_value("cpu")->value_name("D"), "cpu or cuda (LOCAL_RANK picks the GPU)")
      ("no-sync-gradients", po::bool_switch(&cfg.no_sync_gradients), "independent workers; the best is kept at the end")
      ("local-clip", po::bool_switch(&cfg.local_clip), "clip each worker's gradients before the all-reduce")
      ("lr-scaling", po::value(&cfg.lr_scaling)->default_value("none")->value_name("S"), "scale the rate with workers: none, linear, sqrt")
      ("prefetch", po::value(&cfg.prefetch)->default_value(4)->value_name("N"), "batches prepared ahead by a background thread")
      ("global-data-order", po::bool_switch(&cfg.global_data_order),
       "every worker reads the single-process sample order and keeps its slice of each global batch");
    bk::add_launcher_options(opts, launch);
    opts.epilog("Exit status: 0 ok, 1 error (the last checkpoint is left intact), 2 usage error, 130 interrupted.");
    if (!opts.parse(argc, argv)) return 0;
    if (launch.launch()) return bk::run_local_workers(launch, argc, argv);
    cfg.tensorboard = !no_tensorboard;
    cfg.dist_timeout_seconds = launch.dist_timeout_seconds;  // --dist-timeout belongs to the launcher's options
    cfg.quiet = opts.quiet();
    if (cfg.log_every <= 0) bk::usage_fail("--log-every must be positive");
    if (cfg.keep_checkpoints < 1) bk::usage_fail("--keep-checkpoints must be at least 1");
    bk::run_training(cfg);
    return 0;
  });
}
