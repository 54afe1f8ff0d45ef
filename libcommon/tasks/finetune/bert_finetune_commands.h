// bert-finetune's command line (torch-free): its four subcommands' flags and help, and the front that runs
// `features` itself and hands train, predict and bench, once their flags are checked, to bert-finetune-torch
// (cli/torch_backend.h), so that `features` and every --help start without loading LibTorch. That backend's own
// main (tools/bert-finetune-torch.cpp) parses them again with the same commands and runs them.
#pragma once

#include "cli/options.h"
#include "tasks/finetune/bert_finetune_bench.h"
#include "tasks/finetune/bert_finetune_features.h"
#include "tasks/finetune/bert_finetune_predict.h"
#include "tasks/finetune/bert_finetune_train.h"

namespace bk {

// Each subcommand's config and the flags bound to it, its --help text included.
struct FeaturesCommand {
  FinetuneFeaturesConfig config;
  Options opts;
  FeaturesCommand();
};
struct TrainCommand {
  FinetuneTrainConfig config;
  Options opts;
  TrainCommand();
};
struct PredictCommand {
  FinetunePredictConfig config;
  Options opts;
  PredictCommand();
  // Parses argv (the subcommand's name first); false after --help or --version.
  bool parse(int argc, char** argv);
};
struct BenchCommand {
  FinetuneBenchConfig config;
  Options opts;
  BenchCommand();
};

// bert-finetune's main, inside the error funnel: argv[0] the tool, argv[1] the subcommand.
int run_bert_finetune(int argc, char** argv);

}  // namespace bk
