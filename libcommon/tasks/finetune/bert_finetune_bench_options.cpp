#include "tasks/finetune/bert_finetune_bench.h"

#include "cli/options.h"
#include "tasks/finetune/finetune_config.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bk {

void FinetuneBenchConfig::validate() const {
  finetune_task_info(task);
  if (checkpoint.empty()) usage_fail("--checkpoint is required");
  if (batch_sizes.empty()) usage_fail("--batch-sizes: give at least one batch size");
  for (int64_t b : batch_sizes)
    if (b < 1) usage_fail("--batch-sizes: {} is not a positive batch size", b);
  if (seq_length < 0) usage_fail("--seq-length must be positive (or 0 for the checkpoint's), got {}", seq_length);
  if (iterations < 1) usage_fail("--iterations must be positive, got {}", iterations);
  if (warmup < 0) usage_fail("--warmup must not be negative, got {}", warmup);
  if (device != "cpu" && device != "cuda") usage_fail("--device must be cpu or cuda, got '{}'", device);
}

void add_bert_finetune_bench_options(Options& options, FinetuneBenchConfig& c) {
  const FinetuneBenchConfig d;
  options.add()
    ("checkpoint", po::value(&c.checkpoint)->required()->value_name("DIR"), "a fine-tuned checkpoint directory")
    ("task", po::value(&c.task)->required()->value_name("T"), "the task it was fine-tuned for")
    ("batch-sizes", po::value<std::string>()->default_value(fmt::format("{}", fmt::join(d.batch_sizes, ",")))
         ->value_name("LIST")->notifier([&c](const std::string& text) {
           c.batch_sizes.clear();
           for (size_t start = 0; start <= text.size();) {
             size_t comma = text.find(',', start);
             if (comma == std::string::npos) comma = text.size();
             const std::string part = text.substr(start, comma - start);
             try {
               size_t used = 0;
               c.batch_sizes.push_back(std::stoll(part, &used));
               if (used != part.size()) throw std::invalid_argument(part);
             } catch (const std::exception&) {
               usage_fail("--batch-sizes: '{}' is not a number", part);
             }
             start = comma + 1;
           }
         }),
     "comma-separated batch sizes")
    ("seq-length", po::value(&c.seq_length)->default_value(d.seq_length)->value_name("T"),
     "tokens per sequence (0 = the checkpoint's max_seq_length)")
    ("precision", choice_value("precision", kPrecisionFlags, c.precision, d.precision)->value_name("P"), kPrecisionHelp)
    ("device", po::value(&c.device)->default_value(d.device)->value_name("D"), "cpu or cuda")
    ("iterations", po::value(&c.iterations)->default_value(d.iterations)->value_name("N"), "timed passes per batch size")
    ("warmup", po::value(&c.warmup)->default_value(d.warmup)->value_name("N"), "untimed passes first");
}

}  // namespace bk
