// The GLUE tasks' processors: which columns of the official TSV files hold the texts and the label, whether the
// file starts with a header, the labels in order (label id = position) and the example ids (guids).
//
// CoLA, MNLI and MRPC follow google-research/bert run_classifier.py's processors. Google has none for the
// others; SST-2, STS-B, QQP, QNLI, RTE and WNLI follow HF transformers' glue processors
// (src/transformers/data/processors/glue.py, as of transformers 4.x; transformers 5 no longer ships them),
// and so does MNLI's mismatched set (MnliMismatchedProcessor). STS-B is a regression: its label is a float.
//
// A file is read as the reference's _read_tsv reads it through tf.gfile: UTF-8, every '\r' dropped, one row per
// '\n'-terminated line, fields split on tabs with no quoting (quotechar=None), an empty line a row with no field.
// Which set a file holds decides the columns and whether labels are read; the reference picks the file by name,
// so does glue_split: train with --train, else test when the file name starts with "test", else dev; MNLI's
// mismatched sets are the files whose name holds "mismatched". A test set's rows carry no label and get label
// id 0 (Google's processors give them their first label; HF's give None, for which we write 0 too).
//
// Errors (bk::Error) name the file and line: a row lacking a column the processor reads, a label that is not
// one of the task's, a STS-B label that is not a number, invalid UTF-8. HF's QQP processor skips rows lacking
// a text or label column instead of failing; we do the same and count them as skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk {

enum class GlueSplit { train, dev, test };

struct GlueColumns {
  int text_a = -1;
  int text_b = -1;   // -1: a single-sentence task
  int label = -1;    // -1: the row's last column (line[-1])
};

struct GlueTask {
  std::string_view name;                  // as --task takes it
  std::string_view processor;             // the reference followed, for messages and --help
  std::vector<std::string_view> labels;   // in the processor's order; empty for a regression (STS-B)
  GlueColumns columns, test_columns;      // train and dev / test
  bool header = true;                     // the first row of train and dev files is a header
  bool test_header = true;
  bool guid_from_first_column = false;    // guid "SET-<column 0>" (else "SET-<row index>")
  bool skip_short_rows = false;           // HF's QQP: rows lacking a column are skipped

  bool regression() const { return labels.empty(); }
  bool pair() const { return columns.text_b >= 0; }
};

const std::vector<GlueTask>& glue_tasks();
const GlueTask* find_glue_task(std::string_view name);  // nullptr when unknown
std::string glue_task_names();                          // "cola, sst-2, ..." for messages

struct GlueExample {
  std::string guid;
  std::string text_a;
  std::string text_b;      // empty: a single sentence (the reference's `if example.text_b`)
  int32_t label_id = 0;    // classification
  float label_value = 0;   // regression
  uint64_t line = 0;       // 1-based line of the input file
};

struct GlueExamples {
  std::vector<GlueExample> examples;
  GlueSplit split = GlueSplit::dev;
  size_t skipped = 0;      // rows the processor skips (HF's QQP only)
};

// The set a file holds: train when `train`, else test or dev from its name (see above).
GlueSplit glue_split(std::string_view path, bool train);

// Reads one TSV file ("-" = stdin; gzip and bzip2 are undone) of `task` as the set `split`.
GlueExamples read_glue_examples(const GlueTask& task, const std::string& path, GlueSplit split);
// The same from the file's bytes; `name` is the file named in errors (and, for MNLI, tells matched from
// mismatched).
GlueExamples parse_glue_examples(const GlueTask& task, std::string_view bytes, const std::string& name,
                                 GlueSplit split);

}  // namespace bk
