#include "tasks/finetune/bert_finetune_features.h"

#include "cli/options.h"
#include "io/progress.h"
#include "tfrecord/example.h"
#include "tfrecord/tfrecord.h"
#include "io/output_over_input.h"
#include "io/input.h"
#include "io/output.h"
#include "tok/tokenizer_json.h"
#include "tok/vocab_fit.h"
#include "util/error.h"

#include <fmt/format.h>

namespace bk {
namespace {

// Serialises and frames each record into one buffer, written in large pieces.
template <typename Fill>
void write_records(Output& out, size_t count, Fill&& fill) {
  Example example;
  std::string framed, record;
  for (size_t i = 0; i < count; ++i) {
    fill(i, example);
    encode_example(example, record);
    framed += frame_tfrecord(record);
    if (framed.size() >= (1u << 20)) {
      out.write(framed);
      framed.clear();
    }
  }
  out.write(framed);
  out.commit();
}

}  // namespace

void FinetuneFeaturesConfig::validate() const {
  validate_tokenization();
  if (input.empty()) usage_fail("missing INPUT (the SQuAD JSON or GLUE TSV file)");
  if (output.empty()) usage_fail("-o/--output is required");
  std::vector<std::string> read = tokenizer_file_paths(tokenizer.path());  // a vocab.json's merges.txt too
  read.push_back(input);
  refuse_output_over_inputs("-o", output, OutputKind::file, read);
}

void FinetuneFeaturesConfig::validate_tokenization(bool vocab_required) const {
  if (task.empty()) usage_fail("--task is required");
  if (!squad() && !find_glue_task(task))
    usage_fail("--task must be squad, squad2 or a GLUE task ({}), got '{}'", glue_task_names(), task);
  if (tokenizer.path().empty() && vocab_required) usage_fail("--vocab (or --tokenizer) is required");
  if (squad()) {
    squad_options().validate();
  } else {
    if (doc_stride) usage_fail("--doc-stride applies to squad and squad2 only");
    if (max_query_length) usage_fail("--max-query-length applies to squad and squad2 only");
    glue_options().validate();
  }
}

SquadFeatureOptions FinetuneFeaturesConfig::squad_options() const {
  SquadFeatureOptions o;
  if (max_seq_length) o.max_seq_length = *max_seq_length;
  if (doc_stride) o.doc_stride = *doc_stride;
  if (max_query_length) o.max_query_length = *max_query_length;
  o.is_training = train;
  return o;
}

GlueFeatureOptions FinetuneFeaturesConfig::glue_options() const {
  GlueFeatureOptions o;
  if (max_seq_length) o.max_seq_length = *max_seq_length;
  return o;
}

FinetuneFeaturesSummary run_bert_finetune_features(const FinetuneFeaturesConfig& config) {
  config.validate();
  Progress progress(config.quiet);
  const TextTokenizer tokenizer = TextTokenizer::load(config.tokenizer);
  // Opened before the input is read, so that an output that cannot be written fails at once; the temporary
  // goes away with any later error or SIGINT.
  Output out(config.output, config.force);
  const std::string text = read_file(config.input);
  const std::string name = config.input == "-" ? std::string("<stdin>") : config.input;

  FinetuneFeaturesSummary summary;
  if (config.squad()) {
    SquadExamples examples = parse_squad_examples(text, name, {config.train, config.task == "squad2"});
    // run_squad.py's main shuffles the training examples before making their features.
    if (config.train) shuffle_squad_training_examples(examples.examples);
    const SquadFeatures features = SquadFeatures::convert(examples, tokenizer, config.squad_options());
    write_records(out, features.features().size(),
                  [&](size_t i, Example& record) { features.to_example(features.features()[i], record); });
    summary = {examples.examples.size(), features.features().size(), examples.skipped, features.unknown()};
  } else {
    const GlueTask& task = *find_glue_task(config.task);
    const GlueExamples examples = parse_glue_examples(task, text, name, glue_split(config.input, config.train));
    const GlueFeatures features = GlueFeatures::convert(task, examples, tokenizer, config.glue_options());
    write_records(out, features.size(), [&](size_t i, Example& record) { features.to_example(i, record); });
    summary = {examples.examples.size(), features.size(), examples.skipped, features.unknown()};
  }
  progress.finish(text.size(), fmt::format("{}: {} examples, {} features, {} skipped, {}", config.task,
                                           summary.examples, summary.features, summary.skipped,
                                           summary.unknown.summary()));
  if (!config.quiet) tokenizer.warn_if_misfit(summary.unknown);
  return summary;
}

void add_squad_window_options(Options& options, std::optional<int>& doc_stride, std::optional<int>& max_query_length) {
  const SquadFeatureOptions squad;
  options.add()
    ("doc-stride", optional_value(doc_stride)->value_name("S"),
     fmt::format("SQuAD: pieces between the starts of a document's windows (default {})", squad.doc_stride).c_str())
    ("max-query-length", optional_value(max_query_length)->value_name("Q"),
     fmt::format("SQuAD: question pieces kept (default {})", squad.max_query_length).c_str());
}

void add_finetune_feature_options(Options& options, FinetuneFeaturesConfig& c, bool training) {
  const SquadFeatureOptions squad;  // the defaults, written once in the options structs
  const GlueFeatureOptions glue;
  options.add()
    ("task", po::value(&c.task)->required()->value_name("T"),
     fmt::format("squad (SQuAD v1.1), squad2 (v2.0) or a GLUE task: {}", glue_task_names()).c_str())
    ("vocab", po::value(&c.tokenizer.vocab)->value_name("FILE"),
     training ? "WordPiece vocabulary (one token per line)"
              : "WordPiece vocabulary (default: the tokenizer beside --checkpoint)")
    ("tokenizer", po::value(&c.tokenizer.tokenizer)->value_name("FILE"), kTokenizerFlagHelp)
    ("cased", po::bool_switch(&c.tokenizer.cased), "keep case and accents (default: lower-case and strip accents)")
    ("max-seq-length", optional_value(c.max_seq_length)->value_name("L"),
     fmt::format("tokens per feature (default {} for squad and squad2, {} for GLUE)", squad.max_seq_length,
                 glue.max_seq_length).c_str());
  add_squad_window_options(options, c.doc_stride, c.max_query_length);
  if (!training) return;
  options.add()
    ("train", po::bool_switch(&c.train),
     "training features: SQuAD answer positions (questions shuffled as run_squad.py does); GLUE: INPUT is a "
     "training file");
}

}  // namespace bk
