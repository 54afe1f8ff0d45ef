// bert-finetune-torch: bert-finetune's train, predict and bench, the subcommands that run a model, which
// bert-finetune execs with its own arguments once their flags are checked (so that its features step and every
// --help start without LibTorch).
#include "cli/run_tool.h"
#include "launch/launcher.h"
#include "tasks/finetune/bert_finetune_commands.h"

#include <string>

int main(int argc, char** argv) {
  return bk::run_tool("bert-finetune", argc, argv, [](int argc, char** argv) {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "train") {
      bk::TrainCommand c;
      if (!c.opts.parse(argc - 1, argv + 1)) return 0;
      if (c.config.loop.launch.launch()) return bk::run_local_workers(c.config.loop.launch, argc, argv);
      c.config.loop.quiet = c.opts.quiet();
      bk::run_bert_finetune_train(c.config);
    } else if (command == "predict") {
      bk::PredictCommand c;
      if (!c.parse(argc - 1, argv + 1)) return 0;
      bk::run_bert_finetune_predict(c.config);
    } else if (command == "bench") {
      bk::BenchCommand c;
      if (!c.opts.parse(argc - 1, argv + 1)) return 0;
      c.config.quiet = c.opts.quiet();
      bk::run_bert_finetune_bench(c.config);
    } else {
      bk::usage_fail("bert-finetune-torch runs train, predict or bench (bert-finetune starts it), got '{}'", command);
    }
    return 0;
  });
}
