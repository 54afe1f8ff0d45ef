#include "tasks/finetune/bert_finetune_commands.h"

#include "cli/torch_backend.h"
#include "util/error.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace bk {

namespace {

constexpr const char* kSynopsis = "features|train|predict|bench [options]";
constexpr const char* kDescription =
    "Fine-tune BERT on SQuAD and GLUE.\n"
    "  features  a SQuAD JSON or GLUE TSV file -> the task's features as TFRecords, identical to\n"
    "            google-research/bert's run_squad.py and run_classifier.py\n"
    "  train     fine-tune a pretrained or fine-tuned checkpoint on features\n"
    "  predict   a fine-tuned model's predictions (and scores) on a SQuAD or GLUE file, or one interactive answer\n"
    "  bench     inference speed of a fine-tuned model: sequences/s and latency percentiles per batch size";

}  // namespace

FeaturesCommand::FeaturesCommand()
    : opts("bert-finetune features", "--task T --vocab VOCAB [options] -o OUT.tfrecord INPUT",
          "Write the features of a SQuAD JSON file (squad, squad2) or of a GLUE TSV file (INPUT is the\n"
          "file itself) as TFRecords in google-research/bert's layout: unique_ids, input_ids, input_mask,\n"
          "segment_ids (+ start_positions, end_positions, is_impossible with --train) for SQuAD;\n"
          "input_ids, input_mask, segment_ids, label_ids, is_real_example for GLUE.") {
  add_finetune_feature_options(opts, config);
  opts.add()
    ("output,o", po::value(&config.output)->required()->value_name("OUT"), "the TFRecord file to write")
    ("force,f", po::bool_switch(&config.force), "replace an existing output file");
  opts.positional("input", -1);
  opts.epilog(
      "Without --train a GLUE file whose name starts with \"test\" is a test set (no labels: label_ids 0),\n"
      "any other an evaluation set (labels required); for mnli a name holding \"mismatched\" is the\n"
      "mismatched set. STS-B's label_ids is a float.\n"
      "\n"
      "Examples:\n"
      "  bert-finetune features --task squad --vocab vocab.txt --train -o train.tfrecord train-v1.1.json\n"
      "  bert-finetune features --task squad2 --vocab vocab.txt -o eval.tfrecord dev-v2.0.json\n"
      "  bert-finetune features --task mrpc --vocab vocab.txt --train -o mrpc-train.tfrecord MRPC/train.tsv\n"
      "  bert-finetune features --task mnli --vocab vocab.txt --cased --max-seq-length 256 \\\n"
      "      -o mnli-mm.tfrecord MNLI/dev_mismatched.tsv\n"
      "\n"
      "Exit status: 0 ok, 1 error (nothing is written), 2 usage error, 130 interrupted.");
}

TrainCommand::TrainCommand()
    : opts("bert-finetune train", "--task T --init-checkpoint DIR --train-file F --output-dir DIR [options]",
          "Fine-tune a checkpoint on a task's features with the training loop of bert-train (AdamW, linear\n"
          "decay after warm-up, the same precision, accumulation, data-parallel and checkpoint options).\n"
          "The model's head (qa_outputs for SQuAD, classifier for GLUE) is initialised when the checkpoint\n"
          "has none. With --eval-file the model is scored after every epoch and the best one is kept.") {
  add_bert_finetune_train_options(opts, config);
  opts.epilog(
      "Examples:\n"
      "  bert-finetune train --task mrpc --init-checkpoint pretrain/checkpoints/step-00001000 \\\n"
      "      --train-file mrpc-train.tfrecord --eval-file mrpc-dev.tfrecord --output-dir mrpc --epochs 3\n"
      "  bert-finetune train --task squad --init-checkpoint pretrain/checkpoints/step-00001000 \\\n"
      "      --train-file squad-train.tfrecord --output-dir squad --epochs 2 --learning-rate 3e-5\n"
      "\n"
      "Exit status: 0 ok, 1 error (the last checkpoint is left intact), 2 usage error, 130 interrupted.");
}

PredictCommand::PredictCommand()
    : opts("bert-finetune predict",
          "--task T --checkpoint DIR [--vocab VOCAB] (--predict-file F -o DIR | --question Q --context C | --text S)",
          "Predict with a fine-tuned model. SQuAD: DIR/predictions.json and nbest_predictions.json (and\n"
          "null_odds.json for squad2), what run_squad.py's write_predictions writes from the same logits; when\n"
          "the questions carry answers, the official evaluate-v1.1.py / evaluate-v2.0.py scores on stdout as\n"
          "one JSON object. GLUE: DIR/<TASK>.tsv in the GLUE submission format (index, prediction) and, when\n"
          "the file has labels, the task's scores. With --question and --context (SQuAD) or --text (GLUE):\n"
          "the answer or label and its probability as one JSON object, and nothing is written.") {
  add_bert_finetune_predict_options(opts, config);
  opts.epilog(
      "The features are made as `bert-finetune features` makes them; --max-seq-length defaults to the length\n"
      "the checkpoint was fine-tuned with. SQuAD runs the encoder on each feature's real tokens (features in\n"
      "order of length); --attention padded computes every position as the reference does. A GLUE file\n"
      "whose name starts with \"test\" has no labels; an MNLI file whose name holds \"mismatched\" is\n"
      "written as MNLI-mm.tsv.\n"
      "\n"
      "Examples:\n"
      "  bert-finetune predict --task squad --checkpoint squad/best --vocab vocab.txt \\\n"
      "      --predict-file dev-v1.1.json -o squad-pred\n"
      "  bert-finetune predict --task mrpc --checkpoint mrpc/best --vocab vocab.txt --predict-file MRPC/test.tsv -o glue\n"
      "  bert-finetune predict --task squad --checkpoint squad/best --vocab vocab.txt \\\n"
      "      --question \"Who built the engine?\" --context \"The engine was built by Aldous Penwright in 1871.\"\n"
      "  bert-finetune predict --task sst-2 --checkpoint sst2/best --vocab vocab.txt --text \"a gripping film\"\n"
      "\n"
      "Exit status: 0 ok, 1 error (no prediction file is left), 2 usage error, 130 interrupted.");
}

BenchCommand::BenchCommand()
    : opts("bert-finetune bench", "--checkpoint DIR --task T [--batch-sizes 1,8,32] [options]",
          "Time the forward pass of a fine-tuned model on full-length sequences, as NVIDIA's inference tables\n"
          "do: per batch size one JSON line with sequences_per_second and latency_ms p50/p90/p95/p99 (warm-up\n"
          "passes excluded).") {
  add_bert_finetune_bench_options(opts, config);
  opts.epilog("Examples:\n"
              "  bert-finetune bench --checkpoint squad/best --task squad --batch-sizes 1,8,32 --seq-length 384\n"
              "  bert-finetune bench --checkpoint mrpc/best --task mrpc --batch-sizes 1,8,32\n"
              "\n"
              "Exit status: 0 ok, 1 error, 2 usage error, 130 interrupted.");
}

bool PredictCommand::parse(int argc, char** argv) {
  if (!opts.parse(argc, argv)) return false;
  settle_predict_attention(opts, config);
  config.quiet = opts.quiet();
  return true;
}

namespace {

int run_features(int argc, char** argv) {
  FeaturesCommand c;
  if (!c.opts.parse(argc, argv)) return 0;
  const auto inputs = c.opts.positionals();
  if (inputs.size() > 1) usage_fail("expected one INPUT, got {}", inputs.size());
  if (!inputs.empty()) c.config.input = inputs.front();
  c.config.quiet = c.opts.quiet();
  run_bert_finetune_features(c.config);
  return 0;
}

// `bert-finetune --help`: the overview plus every subcommand's options.
int run_top(int argc, char** argv) {
  Options top("bert-finetune", kSynopsis, kDescription);
  if (!top.parse(argc, argv)) {
    if (argc > 1 && std::strcmp(argv[1], "--version") == 0) return 0;
    std::printf("\n%s\n%s\n%s\n%s", FeaturesCommand().opts.help_text().c_str(), TrainCommand().opts.help_text().c_str(),
                PredictCommand().opts.help_text().c_str(), BenchCommand().opts.help_text().c_str());
    return 0;
  }
  usage_fail("missing subcommand (features, train, predict or bench)");
}

// train, predict and bench run in bert-finetune-torch. Their flags are checked here first: usage errors and --help
// need no LibTorch, and a build without it says so.
int hand_to_backend(const std::string& command, int argc, char** argv) {
  if (command == "train") {
    if (!TrainCommand().opts.parse(argc - 1, argv + 1)) return 0;
  } else if (command == "predict") {
    PredictCommand c;
    if (!c.parse(argc - 1, argv + 1)) return 0;
    c.config.validate();
  } else {
    BenchCommand c;
    if (!c.opts.parse(argc - 1, argv + 1)) return 0;
    c.config.validate();
  }
  exec_torch_backend("bert-finetune-torch", argv, fmt::format("bert-finetune {}", command));
}

}  // namespace

int run_bert_finetune(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return run_top(argc, argv);
  const std::string command = argv[1];
  // Subcommands see argv from their own name on, so their --help shows "bert-finetune features".
  if (command == "features") return run_features(argc - 1, argv + 1);
  if (command == "train" || command == "predict" || command == "bench") return hand_to_backend(command, argc, argv);
  usage_fail("unknown subcommand '{}' (expected features, train, predict or bench)", command);
}

}  // namespace bk
