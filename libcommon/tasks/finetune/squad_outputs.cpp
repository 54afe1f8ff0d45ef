#include "tasks/finetune/squad_outputs.h"

#include "io/output.h"
#include "io/output_over_input.h"
#include "io/staged_output.h"
#include "squad/squad_logits.h"
#include "squad/squad_predictions.h"
#include "util/error.h"

#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

std::vector<std::string> SquadOutputs::prediction_paths() const {
  std::vector<std::string> paths = {(fs::path(output_dir) / "predictions.json").string(),
                                    (fs::path(output_dir) / "nbest_predictions.json").string()};
  if (v2) paths.push_back((fs::path(output_dir) / "null_odds.json").string());
  return paths;
}

void check_squad_outputs(const SquadOutputs& o) {
  const std::vector<std::string> paths = o.prediction_paths();
  std::error_code ec;
  for (const std::string& path : paths) {
    refuse_output_over_inputs("-o", path, OutputKind::file, o.inputs);
    if (!o.save_logits.empty() && fs::weakly_canonical(o.save_logits, ec) == fs::weakly_canonical(path, ec))
      usage_fail("--save-logits {}: is where the predictions go; name another file", o.save_logits);
  }
  refuse_output_over_inputs("--save-logits", o.save_logits, OutputKind::file, o.inputs);
  for (const std::string& path : paths) check_overwrite(path, o.force);
  check_overwrite(o.save_logits, o.force);
}

void write_squad_outputs(const SquadOutputs& o, const SquadPredictions& predictions, const SquadLogits& logits) {
  auto write_logits = [&](const std::string& path) {
    Output out(path, true);
    SquadLogitsWriter writer(out);
    for (size_t i = 0; i < logits.size(); ++i)
      writer.write(logits.unique_ids[i], logits.start_logits(i), logits.end_logits(i));
    out.commit();
  };
  StagedFiles files;  // the logits and the predictions go in place together, or none of them
  try {
    if (!o.save_logits.empty() && o.save_logits != "-") write_logits(files.stage(o.save_logits));
    const auto written = squad_prediction_files(predictions);
    const std::vector<std::string> paths = o.prediction_paths();
    for (size_t i = 0; i < written.size(); ++i) write_file_atomic(files.stage(paths[i]), written[i].second);
    files.commit();
  } catch (const Error& e) {
    throw Error(files.as_destination(e.what()));  // a file as the user knows it, not its staging name
  }
  if (o.save_logits == "-") write_logits("-");
}

}  // namespace bk
