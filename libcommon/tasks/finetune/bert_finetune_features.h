// bert-finetune's runs, behind the thin main in tools/bert-finetune.cpp. Torch-free.
//
//   features  a SQuAD JSON file or a GLUE TSV file -> the task's features as TFRecords, identical to what
//             google-research/bert's run_squad.py (FeatureWriter) and run_classifier.py
//             (file_based_convert_examples_to_features) write.
//
// The pieces (squad_examples.h, squad_features.h, glue_tasks.h, glue_features.h) are the library a training or
// prediction step builds on; the flags that choose the features are declared once here, for every subcommand.
#pragma once

#include "glue/glue_features.h"
#include "squad/squad_features.h"
#include "tok/text_tokenizer.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace bk {

class Options;

// What turns a task's text into features: the task, the tokenizer and the lengths.
struct FinetuneFeaturesConfig {
  std::string task;        // squad (v1.1), squad2 (v2.0, version_2_with_negative) or a GLUE task (glue_tasks.h)
  TokenizerFlags tokenizer;  // --vocab (WordPiece, with --cased) or --tokenizer (byte-level BPE)
  bool train = false;      // training features (SQuAD: answer positions, questions shuffled; GLUE: a training file)
  // Unset: the task's own defaults, written once in SquadFeatureOptions and GlueFeatureOptions.
  std::optional<int> max_seq_length;
  std::optional<int> doc_stride, max_query_length;  // SQuAD only
  std::string input;       // the SQuAD JSON or GLUE TSV file; "-" = stdin
  std::string output;      // the TFRecord file; "-" = stdout
  bool force = false;
  bool quiet = false;

  // bk::UsageError for a task, flag or value no run can use.
  void validate() const;
  // The same, less INPUT and OUTPUT: what any subcommand that tokenizes for a task needs.
  // The tokenizer flags (--task, --vocab or --tokenizer, --cased, lengths); predict finds the tokenizer beside its
  // checkpoint.
  void validate_tokenization(bool vocab_required = true) const;
  bool squad() const { return task == "squad" || task == "squad2"; }
  SquadFeatureOptions squad_options() const;
  GlueFeatureOptions glue_options() const;
};

struct FinetuneFeaturesSummary {
  size_t examples = 0;   // examples made into features
  size_t features = 0;   // records written
  size_t skipped = 0;    // examples the reference skips (SQuAD answers not found again; HF QQP short rows)
  UnknownCount unknown;  // the pieces made, and the unknown ones
};

// The `features` subcommand: reads INPUT, writes OUTPUT through bk::Output (a temporary renamed on success, an
// existing file kept unless `force`), prints one summary line on stderr unless `quiet`.
FinetuneFeaturesSummary run_bert_finetune_features(const FinetuneFeaturesConfig& config);

// Declares --task, --vocab, --tokenizer, --cased, --max-seq-length, --doc-stride, --max-query-length and (with `training`)
// --train bound to `config` (each default from the options structs), for every subcommand that makes features.
void add_finetune_feature_options(Options& options, FinetuneFeaturesConfig& config, bool training = true);

// --doc-stride and --max-query-length (SQuAD's windows over a document), unset unless given: declared once for
// features, train and predict.
void add_squad_window_options(Options& options, std::optional<int>& doc_stride, std::optional<int>& max_query_length);

}  // namespace bk
