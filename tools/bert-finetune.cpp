// bert-finetune: BERT fine-tuning (SQuAD, GLUE) on the training loop bert-train uses.
#include "cli/options.h"
#include "cli/run_tool.h"
#include "tasks/finetune/bert_finetune_bench.h"
#include "tasks/finetune/bert_finetune_train.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr const char* kSynopsis = "train|bench [options]";
constexpr const char* kDescription =
    "Fine-tune BERT for SQuAD or a GLUE task, from a pretrained or fine-tuned checkpoint.\n"
    "  train  fine-tune on features (the TFRecords of Google's run_squad.py / run_classifier.py layout)\n"
    "  bench  inference speed of a fine-tuned model: sequences/s and latency percentiles per batch size";

struct TrainOptions {
  bk::FinetuneTrainConfig config;
  bk::Options opts{"bert-finetune train", "--task T --init-checkpoint DIR --train-file F --output-dir DIR [options]",
                   "Fine-tune a checkpoint on a task's features with the training loop of bert-train (AdamW, linear\n"
                   "decay after warm-up, the same precision, accumulation, data-parallel and checkpoint options).\n"
                   "The model's head (qa_outputs for SQuAD, classifier for GLUE) is initialised when the checkpoint\n"
                   "has none. With --eval-file the model is scored after every epoch and the best one is kept."};
  TrainOptions() {
    bk::add_bert_finetune_train_options(opts, config);
    opts.epilog(
        "Examples:\n"
        "  bert-finetune train --task mrpc --init-checkpoint pretrain/checkpoints/step-00001000 \\\n"
        "      --train-file mrpc_train.tfrecord --eval-file mrpc_dev.tfrecord --output-dir mrpc --epochs 3\n"
        "Exit status: 0 ok, 1 error (the last checkpoint is left intact), 2 usage error, 130 interrupted.");
  }
};

struct BenchOptions {
  bk::FinetuneBenchConfig config;
  bk::Options opts{"bert-finetune bench", "--checkpoint DIR --task T [--batch-sizes 1,8,32] [options]",
                   "Time the forward pass of a fine-tuned model on full-length sequences, as NVIDIA's inference tables\n"
                   "do: per batch size one JSON line with sequences_per_second and latency_ms p50/p90/p95/p99 (warm-up\n"
                   "passes excluded)."};
  BenchOptions() {
    bk::add_bert_finetune_bench_options(opts, config);
    opts.epilog("Examples:\n"
                "  bert-finetune bench --checkpoint squad/best --task squad --batch-sizes 1,8,32 --seq-length 384\n"
                "Exit status: 0 ok, 1 error, 2 usage error.");
  }
};

// `bert-finetune --help`: the overview plus every subcommand's options.
int run_top(int argc, char** argv) {
  bk::Options top("bert-finetune", kSynopsis, kDescription);
  if (!top.parse(argc, argv)) {
    if (argc > 1 && std::strcmp(argv[1], "--version") == 0) return 0;
    std::printf("\n%s\n%s", TrainOptions().opts.help_text().c_str(), BenchOptions().opts.help_text().c_str());
    return 0;
  }
  bk::usage_fail("missing subcommand (train or bench)");
}

}  // namespace

int main(int argc, char** argv) {
  return bk::run_tool("bert-finetune", argc, argv, [](int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return run_top(argc, argv);
    const std::string command = argv[1];
    if (command == "train") {
      TrainOptions o;
      // The subcommand sees argv from its own name on, so its --help shows "bert-finetune train".
      if (!o.opts.parse(argc - 1, argv + 1)) return 0;
      if (o.config.loop.launch.launch()) return bk::run_local_workers(o.config.loop.launch, argc, argv);
      o.config.loop.quiet = o.opts.quiet();
      bk::run_bert_finetune_train(o.config);
      return 0;
    }
    if (command == "bench") {
      BenchOptions o;
      if (!o.opts.parse(argc - 1, argv + 1)) return 0;
      o.config.quiet = o.opts.quiet();
      bk::run_bert_finetune_bench(o.config);
      return 0;
    }
    bk::usage_fail("unknown subcommand '{}' (expected train or bench)", command);
  });
}
