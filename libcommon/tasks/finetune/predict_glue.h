// bert-finetune predict for GLUE, resolved from the command line once (bert_finetune_predict.cpp): a file's GLUE
// submission TSV and its scores, or one text (pair) classified.
#pragma once

#include "glue/glue_features.h"
#include "tasks/finetune/finetune_inference.h"

#include <string>

namespace bk {

class TextTokenizer;
struct FinetunedModel;

struct GluePredictSettings {
  GlueFeatureOptions features;  // the model's length when --max-seq-length is not given
  InferenceOptions inference;
  std::string predict_file;     // "-": stdin
  std::string output_dir;
  bool force = false;
  bool quiet = false;
  // What the run reads (the predict file, the vocabulary, the checkpoint): never written over or into.
  std::vector<std::string> inputs;
};

// OUTPUT_DIR/<TASK>.tsv in the GLUE submission format, and the task's scores on stdout when the file has labels.
void predict_glue_file(const GluePredictSettings& settings, const FinetunedModel& model, const TextTokenizer& tokenizer);

// The label (or STS-B's value) of one text or pair, with its probability: one JSON object on stdout.
void classify_glue_text(const GluePredictSettings& settings, const std::string& text, const std::string& text_b,
                        const FinetunedModel& model, const TextTokenizer& tokenizer);

}  // namespace bk
