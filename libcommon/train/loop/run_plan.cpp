#include "train/loop/run_plan.h"

#include "model_config/bert_config.h"
#include "util/tool_name.h"
#include "train/loop/loop_run.h"
#include "bertkit/version.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace bk {

namespace {

// 110106428 -> "110,106,428".
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

int64_t parameter_count(const LoopRun& run) {
  int64_t n = 0;
  for (const auto& [name, tensor] : run.task->parameters()) n += tensor.numel();
  return n;
}

// What the first line adds for ModernBERT: its window and what it trains.
std::string architecture_text(const BertConfig& model) {
  if (!model.is_modernbert()) return "";
  int64_t local = 0;
  for (int64_t i = 0; i < model.num_hidden_layers; ++i) local += model.modern.is_global(i) ? 0 : 1;
  return fmt::format("; window {} on {} of {} layers; masked LM only (no next-sentence head)",
                     model.modern.local_attention, local, model.num_hidden_layers);
}

std::string start_text(const LoopRun& run, const RunStart& start) {
  if (start.step > 0) return fmt::format("resuming at step {} from {}", start.step, start.checkpoint);
  if (!start.checkpoint.empty()) {
    const std::vector<std::string> changes = run.task->init_config_changes();
    return fmt::format("step 0 from {}{}{}", start.checkpoint, run.cfg.init_optimizer ? " (weights and optimizer)" : "",
                       changes.empty() ? "" : fmt::format("; its config changed, no tensor's shape: {}",
                                                          fmt::join(changes, ", ")));
  }
  return "step 0 from freshly initialised weights";
}

}  // namespace

std::vector<std::string> run_plan_lines(const LoopRun& run, const RunStart& start) {
  const LoopConfig& cfg = run.cfg;
  const BertConfig& model = run.task->model_config();
  const TaskDataSummary data = run.task->data_summary();
  const int world = run.dist->world();
  const int64_t global = run.global_batch();
  std::vector<std::string> lines;
  lines.push_back(fmt::format("model: {} L={} H={} A={} I={}, vocabulary {}, {} parameters{}",
                              model.is_modernbert() ? "ModernBERT" : "BERT", model.num_hidden_layers,
                              model.hidden_size, model.num_attention_heads, model.intermediate_size, model.vocab_size,
                              grouped(static_cast<uint64_t>(parameter_count(run))), architecture_text(model)));
  std::string rows = data.max_length > 0 ? fmt::format(", rows of up to {} tokens", data.max_length) : "";
  const double epochs = data.samples > 0 ? static_cast<double>(run.samples_through(cfg.max_steps)) /
                                               static_cast<double>(data.samples)
                                         : 0;
  lines.push_back(fmt::format("data: {} samples ({}){}; {:.3g} epochs in {} steps", grouped(data.samples), data.detail,
                              rows, epochs, cfg.max_steps));
  std::string tokens = data.max_length > 0
                           ? fmt::format("; up to {} tokens per step", grouped(static_cast<uint64_t>(global * data.max_length)))
                           : "";
  const std::string ramp = cfg.batch_size_warmup_steps > 0
                               ? fmt::format("; batch warm-up from {} over {} steps", cfg.batch_size_warmup_start * world,
                                             cfg.batch_size_warmup_steps)
                               : "";
  lines.push_back(fmt::format("processes: {} on {} ({}); global batch {} = {} x {} per micro-batch x {} accumulation{}{}",
                              world, run.device.str(), ChosenPrecision{run.precision, run.precision_reason}.text(), global, world,
                              cfg.micro_batch_size(), cfg.gradient_accumulation_steps, tokens, ramp));
  const auto warmup = static_cast<int64_t>(run.schedule.warmup_proportion * static_cast<double>(cfg.max_steps));
  std::string checkpoints = cfg.checkpoint_every > 0 ? fmt::format("every {} steps", cfg.checkpoint_every) : "at the end";
  const std::string decay =
      run.schedule.decay_steps > 0
          ? fmt::format("the peak until step {}, then {} decay over the last {} steps", run.schedule.stable_until(),
                        choice_name(kLrDecays, cfg.lr_decay), run.schedule.decay_steps)
      : cfg.lr_decay == LrDecay::constant ? std::string("then the rate held to the end (constant)")
                                          : fmt::format("then {} decay", choice_name(kLrDecays, cfg.lr_decay));
  lines.push_back(fmt::format("schedule: {} at learning rate {:g} ({}), {} warm-up steps, {}; checkpoints {} in "
                              "{}/checkpoints",
                              choice_name(kOptimizerKinds, cfg.optimizer), run.learning_rate * run.lr_scale,
                              run.learning_rate_source, warmup, decay, checkpoints, cfg.output_dir));
  lines.push_back("start: " + start_text(run, start));
  return lines;
}

std::string run_header_json(const LoopRun& run, const RunStart& start) {
  const LoopConfig& cfg = run.cfg;
  const TaskDataSummary data = run.task->data_summary();
  nlohmann::ordered_json j;
  j["tool"] = tool_name();
  j["version"] = BERTKIT_VERSION;
  j["arguments"] = tool_arguments();
  j["model_config"] = run.task->model_config().to_json();
  j["parameters"] = parameter_count(run);
  j["training_samples"] = data.samples;
  j["data"] = data.detail;
  j["world_size"] = run.dist->world();
  j["device"] = run.device.str();
  j["precision"] = choice_name(kPrecisions, run.precision);
  j["precision_reason"] = run.precision_reason;
  j["global_batch"] = run.global_batch();
  j["gradient_accumulation_steps"] = cfg.gradient_accumulation_steps;
  j["max_steps"] = cfg.max_steps;
  j["optimizer"] = choice_name(kOptimizerKinds, cfg.optimizer);
  j["learning_rate"] = run.learning_rate * run.lr_scale;
  j["learning_rate_source"] = run.learning_rate_source;
  j["warmup_proportion"] = run.schedule.warmup_proportion;
  j["lr_decay"] = choice_name(kLrDecays, cfg.lr_decay);
  j["lr_decay_steps"] = cfg.lr_decay_steps;
  j["seed"] = cfg.seed;
  j["start_checkpoint"] = start.checkpoint;
  j["start_step"] = start.step;
  return j.dump();
}

}  // namespace bk
