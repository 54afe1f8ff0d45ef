#include "tasks/pretraining/pretraining_task.h"

#include "tasks/lr_recipe.h"
#include "model_config/config_presets.h"
#include "model/bert.h"
#include "model/model_dir.h"
#include "model/token_stream.h"
#include "tasks/pretraining/evaluate.h"
#include "pretraining_data/dynamic_masks.h"
#include "tasks/pretraining/inputs.h"
#include "tasks/pretraining/pretrain_loss.h"
#include "tok/text_tokenizer.h"
#include "train/dist/dist.h"
#include "util/error.h"
#include "util/tool_name.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bk {

namespace {

// --config: a bert_config.json as it is; a preset with the vocabulary size of the data's vocabulary.
BertConfig pretraining_model_config(const PretrainingConfig& c) {
  BertConfig model = BertConfig::load(resolve_bert_config(c.config_path));
  if (!names_bert_config_preset(c.config_path)) {
    if (c.vocab_size)
      usage_fail("--vocab-size sizes a preset's vocabulary; {} gives its own vocab_size ({})", c.config_path,
                 model.vocab_size);
    return model;
  }
  if (c.vocab_size) {
    model.vocab_size = *c.vocab_size;
    // No vocabulary to ask for ModernBERT's special tokens: a preset's padding id beyond it names none.
    if (model.modern.pad_token_id >= model.vocab_size) model.modern.pad_token_id = -1;
  } else if (!c.vocab_path.empty()) {
    const TextTokenizer tokenizer = TextTokenizer::load(c.vocab_path, true);
    model.vocab_size = static_cast<int64_t>(tokenizer.size());
    if (model.is_modernbert()) {  // the special tokens' ids of this vocabulary (-1: it has none)
      const SpecialIds& s = tokenizer.specials();
      model.modern.pad_token_id = s.pad;
      model.modern.cls_token_id = model.modern.bos_token_id = s.cls;
      model.modern.sep_token_id = model.modern.eos_token_id = s.sep;
    }
  }
  model.validate(c.config_path);
  return model;
}

}  // namespace

PretrainingTask::PretrainingTask(PretrainingConfig config) : config_(std::move(config)) {
  if (config_.no_nsp) {
    terms_ = {"mlm_loss"};
    metrics_ = {{"mlm_accuracy", 0}};
  }
}
PretrainingTask::~PretrainingTask() = default;

void PretrainingTask::load_init_checkpoint(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return TrainingTask::load_init_checkpoint(path);  // .pt, TF1
  const std::string weights = path + "/model.safetensors";
  const HeadsInit init = load_pretraining_weights(*model_, load_weights(weights), weights);
  // For the banner only: a config.json that does not parse changes nothing of the run.
  if (const std::string saved = path + "/config.json"; std::filesystem::exists(saved, ec)) try {
      init_config_changes_ = BertConfig::load(saved).changes_to(model_config_);
    } catch (const Error&) {
      init_config_changes_.clear();
    }
  if (context_.quiet || context_.rank != 0) return;
  if (!init.initialised.empty()) {
    const bool mlm = std::any_of(init.initialised.begin(), init.initialised.end(), [](const std::string& n) {
      return n.starts_with("cls.predictions.") || n.starts_with("head.") || n.starts_with("decoder.");
    });
    print_warning(fmt::format(
        "{}: no {}; {} initialised as {} initialises them ({}; biases 0; the decoder tied to the word embeddings){}",
        path, mlm ? "pretraining heads (a bare encoder)" : "next-sentence head or pooler",
        fmt::join(init.initialised, ", "), model_config_.is_modernbert() ? "transformers' ModernBERT" : "BERT",
        model_config_.is_modernbert()
            ? "truncated normal, std initializer_range / sqrt(2 layers) for head.dense, norms 1"
            : fmt::format("normal, std {:g}", model_config_.initializer_range),
        mlm ? ": its masked-LM head is untrained, so a first evaluation's figure says little of the encoder" : ""));
  }
  if (!init.dropped.empty())
    print_warning(fmt::format("{}: {} tensors of a fine-tuning head left out ({}...)", path, init.dropped.size(),
                              init.dropped.front()));
}

void PretrainingTask::start(const TaskContext& context) {
  context_ = context;
  model_config_ = pretraining_model_config(config_);
  model_ = std::make_shared<BertForPreTraining>(model_config_);  // draws the initial weights

  DataLoaderConfig dc;
  dc.inputs = config_.train_set;
  dc.batch_size = context.micro_batch_size;
  dc.max_predictions = config_.max_predictions;
  dc.max_positions = model_config_.max_position_embeddings;
  dc.seed = context.seed;
  dc.rank = context.rank;
  dc.world = context.world;
  dc.prefetch = context.prefetch;
  dc.pin_memory = context.pin_memory;
  dc.unpadded = config_.unpadded;
  dc.full_length = context.fixed_shapes;
  dc.global_order = config_.global_data_order;
  dc.masking = config_.masking;
  loader_ = std::make_unique<PretrainDataLoader>(dc);
  whole_bin4_batches_ =
      config_.unpadded && stream_attention_unpadded(context.device, context.compute_dtype,
                                                    model_config_.hidden_size / model_config_.num_attention_heads);
  if (loader_->batches_per_epoch() == 0)
    fail("the inputs hold {} samples: not one batch of {} per process for {} processes", loader_->total_samples(),
         dc.batch_size, context.world);
  if (has_evaluation() && config_.eval_set.rows() < config_.eval_samples)
    fail("--eval-input holds {} samples, fewer than --eval-samples {}", config_.eval_set.rows(), config_.eval_samples);
}

TaskEvaluation PretrainingTask::evaluate() {
  // Rank r takes samples [N r / W, N (r + 1) / W) of the set; the sums of all ranks give the set's metrics, equal to
  // bert-eval's over the same N samples.
  const uint64_t n = config_.eval_samples, world = static_cast<uint64_t>(context_.world);
  const uint64_t rank = static_cast<uint64_t>(context_.rank);
  EvalSettings settings;
  settings.files = config_.eval_set.files();
  settings.batch_size = config_.eval_batch_size;
  settings.max_predictions = 0;
  settings.masking = config_.eval_masking;
  settings.skip_samples = n * rank / world;
  settings.max_samples = n * (rank + 1) / world - settings.skip_samples;
  EvalTotals totals;
  if (settings.max_samples > 0) totals = evaluate_pretraining(*model_, settings);
  at::Tensor sums = at::tensor({static_cast<double>(totals.samples), static_cast<double>(totals.mlm_correct),
                                static_cast<double>(totals.mlm_total), static_cast<double>(totals.nsp_correct),
                                totals.mlm_loss_sum, totals.nsp_loss_sum},
                               at::TensorOptions().dtype(at::kDouble));
  if (context_.world > 1 && context_.dist != nullptr && !context_.independent_workers) {
    at::Tensor on_device = sums.to(context_.device);
    context_.dist->allreduce(on_device);
    sums = on_device.cpu();
  }
  const double* v = sums.data_ptr<double>();
  EvalTotals all;
  all.samples = static_cast<uint64_t>(v[0]);
  all.mlm_correct = static_cast<uint64_t>(v[1]);
  all.mlm_total = static_cast<uint64_t>(v[2]);
  all.nsp_correct = static_cast<uint64_t>(v[3]);
  all.mlm_loss_sum = v[4];
  all.nsp_loss_sum = v[5];
  TaskEvaluation e;
  e.metrics = {{"eval_mlm_accuracy", all.mlm_accuracy()}, {"eval_mlm_loss", all.mlm_loss()}};
  if (model_config_.has_next_sentence_head()) e.metrics.push_back({"eval_nsp_accuracy", all.nsp_accuracy()});
  e.metrics.push_back({"eval_samples", static_cast<double>(all.samples)});
  e.score = all.mlm_accuracy();
  return e;
}

BertModelBase& PretrainingTask::bert() const { return *model_; }

LearningRate PretrainingTask::default_learning_rate(OptimizerKind optimizer, int64_t global_batch,
                                                    bool continues_trained_weights) const {
  if (continues_trained_weights) return continued_pretraining_learning_rate(optimizer, global_batch);
  return pretraining_learning_rate(model_config_, optimizer, global_batch, data_summary().max_length);
}

double PretrainingTask::flops_per_sequence(int64_t seq_len) const {
  return model_config_.training_flops_per_sequence(seq_len, loader_ ? loader_->max_predictions() : config_.max_predictions);
}

StepCounts PretrainingTask::take_micro_batches(int64_t count, int64_t step) {
  batches_.clear();
  for (int64_t k = 0; k < count; ++k) {
    PretrainBatch b;
    // Epochs roll over inside the loader: false marks the end of one, and the next call starts the next.
    if (!loader_->next(b) && !loader_->next(b)) fail("the data loader produced no batch for a new epoch");
    check_vocabulary(b, model_config_, step);
    // Where attention over the token stream computes the real tokens only (flash's variable-length kernel), a bin4
    // batch stays one forward pass whatever its bins: a pass per bin would cost four times the host's work per step
    // and smaller matrix products. (The exact attention elsewhere pads each sequence to the stream's longest, so
    // there the bins keep their passes.)
    if (!loader_->binned() || whole_bin4_batches_) {
      batches_.push_back(std::move(b));
      continue;
    }
    // bin4 with padded attention: the loader's batch holds each bin's share of the ratio, bin after bin; each bin
    // becomes a forward pass of its own, cut to its longest sample (to the bin's bound with --cuda-graphs: one
    // shape per bin), so short samples are not padded to the longest bin's length. The step (and every rank) still
    // sees the ratio's mix.
    int64_t first = 0;
    for (size_t bin = 0; bin < loader_->per_batch().size(); ++bin) {
      const int64_t rows = loader_->per_batch()[bin];
      const int64_t length = context_.fixed_shapes ? loader_->bin_bounds()[bin] : 0;
      if (rows > 0) batches_.push_back(slice_rows(b, first, rows, length));
      first += rows;
    }
  }
  StepCounts counts;
  counts.micro_batches = static_cast<int64_t>(batches_.size());
  double masked = 0, sequences = 0;
  for (auto& b : batches_) {
    masked += static_cast<double>(b.masked_lm_ids.ge(0).sum().item<int64_t>());
    sequences += static_cast<double>(b.next_sentence_labels.size(0));
    if (b.stream.defined()) add_sequence_counts(counts, b.stream.lengths, b.stream.tokens(), *this);
    else add_batch_counts(counts, b.attention_mask, *this);
    counts.max_len = std::max(counts.max_len, b.seq_len());
  }
  counts.denominators = {masked, sequences};
  if (config_.no_nsp) counts.denominators.resize(1);
  counts.sequences = static_cast<int64_t>(sequences);
  return counts;
}

MicroBatchLoss PretrainingTask::forward(size_t index) {
  const PretrainBatch b = batches_.at(index).to(context_.device, /*non_blocking=*/true);
  const PretrainLoss l = pretraining_loss(*model_, b);
  // mean * count = sum; a micro-batch without masked positions contributes nothing to the MLM term.
  at::Tensor mlm_sum = at::where(l.mlm_total > 0, l.mlm_loss * l.mlm_total.to(at::kFloat), at::zeros_like(l.mlm_loss));
  if (config_.no_nsp) return {{mlm_sum}, {l.mlm_correct}};
  at::Tensor nsp_sum = l.nsp_loss * l.nsp_total.to(at::kFloat);
  return {{mlm_sum, nsp_sum}, {l.mlm_correct, l.nsp_correct}};
}

std::string PretrainingTask::cuda_graphs_unsupported() const {
  if (loader_->max_length() == 0)
    return "the inputs' longest row is not known (varlength files): micro-batches would change shape";
  if (config_.unpadded)
    return "unpadded attention gives each micro-batch its own number of tokens (use --attention padded)";
  return "";
}

std::string PretrainingTask::stage_micro_batches() { return stage_batches(batches_, staged_, context_.device); }

std::vector<std::string> PretrainingTask::input_paths() const {
  std::vector<std::string> paths;
  for (const PretrainInputs* set : {&config_.train_set, &config_.eval_set}) {
    paths.insert(paths.end(), set->names.begin(), set->names.end());
    for (const SampleFile& file : set->files()) paths.push_back(file.path);
  }
  return paths;
}

TaskDataSummary PretrainingTask::data_summary() const {
  TaskDataSummary summary;
  summary.samples = loader_->total_samples();
  summary.max_length = loader_->max_length();
  summary.detail = fmt::format("{} file{}, {} masked positions per sample", loader_->files(),
                               loader_->files() == 1 ? "" : "s", loader_->max_predictions());
  if (config_.masking)
    summary.detail += fmt::format(", masks drawn every epoch ({:g}% of the tokens{}{})",
                                  100 * config_.masking->rule.masked_lm_prob,
                                  config_.masking->scheduled()
                                      ? fmt::format(", moving to {:g}% by the last step", 100 * config_.masking->final_prob)
                                      : "",
                                  config_.masking->rule.whole_word_mask ? ", whole words" : "");
  if (loader_->binned()) summary.detail += fmt::format(", bins of {} per batch", fmt::join(loader_->per_batch(), "+"));
  return summary;
}

nlohmann::json PretrainingTask::data_position() const { return nlohmann::json::parse(loader_->position().to_json()); }

void PretrainingTask::restore_data_position(const nlohmann::json& position) {
  loader_->restore(DataPosition::from_json(position.dump()));
}

void check_vocabulary(const PretrainBatch& batch, const BertConfig& config, int64_t step) {
  const int64_t largest = batch.input_ids.max().item<int64_t>();
  if (largest >= config.vocab_size)
    fail("step {}: the data holds token id {}, but the model's vocab_size is {}: the data was made with another "
         "vocabulary than the config describes", step, largest, config.vocab_size);
  // The masked tokens' ids index the vocabulary-sized logits: out of range they would be an index error (a device
  // assert on CUDA) deep inside the loss.
  const int64_t largest_masked = batch.masked_lm_ids.max().item<int64_t>();
  if (largest_masked >= config.vocab_size)
    fail("step {}: the data holds masked_lm_ids {}, but the model's vocab_size is {}: the data was made with another "
         "vocabulary than the config describes", step, largest_masked, config.vocab_size);
  if (batch.segment_ids.max().item<int64_t>() >= config.type_vocab_size)
    fail("step {}: segment id {} exceeds the config's type_vocab_size {}", step,
         batch.segment_ids.max().item<int64_t>(), config.type_vocab_size);
  if (batch.seq_len() > config.max_position_embeddings)
    fail("step {}: sequences of {} tokens exceed the config's max_position_embeddings {}", step, batch.seq_len(),
         config.max_position_embeddings);
}

}  // namespace bk
