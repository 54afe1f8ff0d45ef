#include "train/loop/run_resume.h"

#include "ckpt/checkpoint_path.h"
#include "util/error.h"
#include "util/tool_name.h"
#include "io/input.h"
#include "io/output_over_input.h"
#include "train/loop/checkpoint.h"
#include "train/loop/generator_state.h"
#include "train/loop/loop_run.h"
#include "train/loop/train_state.h"

#include <cstdio>
#include <filesystem>

namespace bk {

namespace fs = std::filesystem;

namespace {

TrainingState restore_run(LoopRun& run, const std::string& dir) {
  Checkpoint ckpt = read_checkpoint_dir(dir);
  run.task->load_model_state(ckpt.model, dir + "/model.safetensors");
  if (ckpt.optimizer.empty()) fail("{}: no optimizer.safetensors; --resume needs a checkpoint {} wrote", dir, tool_name());
  const TrainingState state = TrainingState::from_json(ckpt.state, dir + "/trainer_state.json");
  // AdamW's and StableAdamW's moments have the same names: another optimizer would take them silently.
  const char* optimizer = choice_name(kOptimizerKinds, run.cfg.optimizer);
  if (!state.optimizer.empty() && state.optimizer != optimizer)
    fail("{}: the run was started with --optimizer {}, this one has {}; resume with the same optimizer", dir,
         state.optimizer, optimizer);
  // --precision auto picks by the machine: a run resumed on another one, or begun before auto was the default,
  // would change its arithmetic unasked. An explicit --precision is the user's choice.
  const char* precision = choice_name(kPrecisions, run.precision);
  if (!run.cfg.precision && !state.precision.empty() && state.precision != precision)
    fail("{}: the run was trained in {}, and --precision auto takes {} here ({}); give --precision {} to resume it "
         "as it ran (or name the precision to change it)", dir, state.precision, precision, run.precision_reason,
         state.precision);
  run.optimizer->load_state(ckpt.optimizer);
  run.scaler->load_state(ckpt.optimizer);
  if (state.world_size != run.dist->world())
    fail("{}: written by a run of {} processes, this one has {}; resume with the same world size", dir,
         state.world_size, run.dist->world());
  run.step = state.step;
  run.micro_batch = state.micro_batch;
  run.schedule_offset = state.schedule_offset;
  run.task->restore_data_position(state.data_position);
  restore_generator_states(state.generators, run.device);
  return state;
}

// The step a checkpoint directory (step-NNNNNNNN) holds, from its trainer_state.json.
int64_t checkpoint_step(const std::string& dir) {
  const std::string path = dir + "/trainer_state.json";
  return TrainingState::from_json(nlohmann::json::parse(read_file(path), nullptr, false), path).step;
}

// What the run reads besides the task's data: the vocabulary, and the checkpoint it starts from with all that
// reading it touches (not how it was named: a run's directory may hold the next run beside its checkpoints).
std::vector<std::string> model_inputs(const LoopConfig& cfg) {
  std::vector<std::string> inputs = {cfg.vocab};
  std::error_code ec;
  if (!cfg.init_checkpoint.empty() &&
      (fs::exists(cfg.init_checkpoint, ec) || fs::exists(cfg.init_checkpoint + ".index", ec)))
    for (std::string& path : checkpoint_read_paths(resolve_checkpoint(cfg.init_checkpoint)))
      inputs.push_back(std::move(path));
  return inputs;
}

// No output is one of the run's inputs or lies inside the checkpoint it reads, checked before the output
// directory is made. The output directory is written into, never replaced whole: a file's rules. A data
// directory may hold it (its *.hdf5 files are read, not what lies below them).
void refuse_outputs_over_inputs(const LoopConfig& cfg, const std::vector<std::string>& data,
                                const std::vector<std::string>& model) {
  std::vector<std::string> inputs = model;
  std::error_code ec;
  for (const std::string& path : data)
    if (!fs::is_directory(path, ec)) inputs.push_back(path);
  refuse_output_over_inputs("--output-dir", cfg.output_dir, OutputKind::file, inputs);
  refuse_output_over_inputs("--log-file", cfg.log_file, OutputKind::file, inputs);
  refuse_output_over_inputs("--mlperf-log", cfg.mlperf_log, OutputKind::file, inputs);
}

}  // namespace

RunStart find_start(const LoopRun& run) {
  const LoopConfig& cfg = run.cfg;
  const std::optional<std::string> latest = cfg.resume ? latest_checkpoint(cfg.output_dir) : std::nullopt;
  RunStart start{latest ? *latest : cfg.init_checkpoint, 0};
  if (latest && cfg.dry_run) start.step = checkpoint_step(*latest);
  return start;
}

bool claim_and_restore(LoopRun& run, RunStart& start) {
  const LoopConfig& cfg = run.cfg;
  const bool main = run.dist->is_main();
  if (main) {
    const std::vector<std::string> data = run.task->input_paths(), model = model_inputs(cfg);
    refuse_outputs_over_inputs(cfg, data, model);
    run.lock = std::make_unique<OutputDirLock>(cfg.output_dir);
    if (!cfg.resume) {
      std::vector<std::string> inputs = data;  // --force removes no step directory that holds one
      inputs.insert(inputs.end(), model.begin(), model.end());
      inputs.push_back(cfg.init_checkpoint);
      claim_for_new_run(cfg.output_dir, cfg.force, inputs);
    }
  }
  const std::optional<std::string> latest = cfg.resume ? latest_checkpoint(cfg.output_dir) : std::nullopt;
  if (latest) {
    const TrainingState state = restore_run(run, *latest);
    start = {*latest, run.step};
    run.last_checkpoint = fs::path(*latest).filename().string();
    const bool target = state.saved_because == "target";
    if (run.step >= cfg.max_steps || target) {
      if (main)
        std::fprintf(stderr, "%s: %s: this run already finished (%s at step %lld of --max-steps %lld); nothing to do%s\n",
                     tool_name().c_str(), cfg.output_dir.c_str(),
                     target ? "it reached its target" : "its last checkpoint is", static_cast<long long>(run.step),
                     static_cast<long long>(cfg.max_steps), target ? "" : " (a larger --max-steps trains on)");
      return false;
    }
  } else if (cfg.resume && main && !cfg.quiet) {
    std::fprintf(stderr, "%s: --resume: no checkpoint in %s/checkpoints yet, starting at step 0\n",
                 tool_name().c_str(), cfg.output_dir.c_str());
  }
  return true;
}

void init_optimizer(LoopRun& run) {
  const std::string& dir = run.cfg.init_checkpoint;
  Checkpoint ckpt = read_checkpoint_dir(dir);
  if (ckpt.optimizer.empty())
    fail("{}: no optimizer.safetensors: --init-optimizer needs a checkpoint that {} wrote", dir, tool_name());
  const TrainingState state = TrainingState::from_json(ckpt.state, dir + "/trainer_state.json");
  const char* optimizer = choice_name(kOptimizerKinds, run.cfg.optimizer);
  if (!state.optimizer.empty() && state.optimizer != optimizer)
    fail("{}: holds {} state, and this run's --optimizer is {}", dir, state.optimizer, optimizer);
  try {
    run.optimizer->load_state(ckpt.optimizer);
  } catch (const Error& e) {
    fail("{}/optimizer.safetensors: {}", dir, e.what());
  }
  run.schedule_offset = run.optimizer->steps();
}

}  // namespace bk
