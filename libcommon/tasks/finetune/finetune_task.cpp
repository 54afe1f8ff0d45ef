#include "tasks/finetune/finetune_task.h"

#include "tasks/lr_recipe.h"
#include "tok/tokenizer_json.h"
#include "util/fnv1a.h"
#include "ckpt/convert.h"
#include "util/tool_name.h"
#include "util/py_random.h"
#include "model/finetune_models.h"
#include "model/model_dir.h"
#include "squad/squad_logits.h"
#include "tasks/finetune/finetune_inference.h"
#include "tasks/finetune/glue_metrics.h"
#include "tasks/finetune/squad_dataset.h"
#include "train/feed/data_position.h"
#include "train/loop/checkpoint.h"
#include "util/error.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>

namespace bk {

namespace fs = std::filesystem;

namespace {

// SQuAD's windows: the training features' length with the stride and query length of the flags (run_squad.py's
// defaults when unset). The evaluation during training makes its features with them and task.json records them,
// so that predict, scoring the same file, makes the same features. Without --eval-file, features too short for
// the default query length leave them unrecorded (predict then needs its own flags) instead of failing the run.
std::optional<SquadFeatureOptions> squad_windows(const FinetuneTaskConfig& config, int64_t seq_len) {
  SquadFeatureOptions o;
  o.max_seq_length = static_cast<int>(seq_len);
  if (config.doc_stride) o.doc_stride = *config.doc_stride;
  if (config.max_query_length) o.max_query_length = *config.max_query_length;
  if (o.max_seq_length <= o.max_query_length + 3) {
    if (!config.max_query_length && config.eval_file.empty()) return std::nullopt;
    usage_fail("{}: features of {} tokens leave no room for {} --max-query-length {} (it must be below {}): give "
               "train the --max-query-length (and --doc-stride) the features were made with", config.train_file,
               o.max_seq_length, config.max_query_length ? "a" : "the default", o.max_query_length,
               o.max_seq_length - 3);
  }
  o.validate();
  return o;
}

constexpr uint32_t kOrderTag = 0x46544f52;  // "FTOR": the stream of fine-tuning orders

uint64_t fingerprint_of(const FeatureRows& rows, const TaskContext& c, const std::string& task) {
  const uint64_t hash = fnv1a64(fmt::format("{} {} {} {} {} {} {}", task, rows.size(), rows.seq_len, c.seed, c.world,
                                             c.micro_batch_size, c.accumulation));
  return hash == 0 ? 1 : hash;
}

}  // namespace

FinetuneTask::FinetuneTask(FinetuneTaskConfig config)
    : config_(std::move(config)), info_(finetune_task_info(config_.task)) {
  config_.validate();
  train_ = read_feature_records(config_.train_file);
  if (info_.kind == FinetuneKind::span && !train_.has_spans())
    fail("{}: no start_positions: SQuAD training needs features made with --train", config_.train_file);
  if (info_.kind != FinetuneKind::span && !train_.has_labels())
    fail("{}: no label_ids: not GLUE classification features", config_.train_file);
  if (info_.kind == FinetuneKind::classification)
    for (size_t i = 0; i < train_.labels.size(); ++i)
      if (train_.labels[i] < 0 || train_.labels[i] >= static_cast<float>(info_.num_labels()))
        fail("{}: record {}: label {} but {} has {} labels", config_.train_file, i, train_.labels[i], info_.name,
             info_.num_labels());
  if (info_.kind == FinetuneKind::span) squad_windows_ = squad_windows(config_, train_.seq_len);
  if (!config_.eval_file.empty() && info_.kind == FinetuneKind::span) {
    squad_eval_ = load_squad_eval_set(config_.eval_file, config_.vocab_path, config_.cased, info_.name == "squad2",
                                      *squad_windows_);
  } else if (!config_.eval_file.empty()) {
    eval_ = read_feature_records(config_.eval_file);
    if (!eval_.has_labels()) fail("{}: no label_ids to evaluate against", config_.eval_file);
  }
  switch (info_.kind) {
    case FinetuneKind::span: terms_ = {"span_loss"}; break;
    case FinetuneKind::classification: terms_ = {"cls_loss"}; metrics_ = {{"accuracy", 0}}; break;
    case FinetuneKind::regression: terms_ = {"mse_loss"}; break;
  }
}

FinetuneTask::~FinetuneTask() = default;

int64_t FinetuneTask::steps_per_epoch(int64_t global_batch) const {
  return global_batch > 0 ? static_cast<int64_t>(train_.size()) / global_batch : 0;
}

std::string FinetuneTask::head_prefix() const {
  return task_head_prefix(model_config_, info_.kind == FinetuneKind::span);
}

void FinetuneTask::start(const TaskContext& context) {
  context_ = context;
  const fs::path dir(config_.model_dir);
  const fs::path config = fs::is_directory(dir) ? dir / "config.json" : fs::path(config_beside_file(dir.string()));
  if (config.empty() || !fs::exists(config)) fail("{}: no config.json or bert_config.json beside the checkpoint", config_.model_dir);
  model_config_ = BertConfig::load(config.string());
  if (train_.seq_len > model_config_.max_position_embeddings)
    fail("{}: features of {} tokens, but the model's max_position_embeddings is {}", config_.train_file,
         train_.seq_len, model_config_.max_position_embeddings);
  if (info_.kind == FinetuneKind::span) {
    qa_ = std::make_shared<BertForQuestionAnswering>(model_config_);
    model_ = qa_.get();
  } else {
    classifier_ = std::make_shared<BertForSequenceClassification>(model_config_, info_.num_labels());
    model_ = classifier_.get();
  }
  for (int32_t id : train_.input_ids)
    if (id < 0 || id >= model_config_.vocab_size)
      fail("{}: token id {} is outside the model's vocabulary of {}: features made with another vocabulary",
           config_.train_file, id, model_config_.vocab_size);
  const int64_t global = context.micro_batch_size * context.world;
  batches_per_epoch_ = static_cast<int64_t>(train_.size()) / global / context.accumulation * context.accumulation;
  if (batches_per_epoch_ == 0)
    fail("{}: {} features are fewer than one step of {} samples on {} processes", config_.train_file, train_.size(),
         global * context.accumulation, context.world);
  open_epoch(0);
}

void FinetuneTask::load_init_checkpoint(const std::string& path) {
  const fs::path dir = fs::is_directory(path) ? fs::path(path) : fs::path(path).parent_path();
  const fs::path weights = fs::is_directory(path) ? dir / "model.safetensors" : fs::path(path);
  const nlohmann::json described = read_checkpoint_task(dir.string());
  const std::string other = described.is_object() ? described.value("task", std::string()) : "";
  if (!other.empty() && other != info_.name) fail("{}: a checkpoint fine-tuned for {}, not for {}", path, other, info_.name);
  std::map<std::string, at::Tensor> tensors = load_weights(weights.string());
  // ModernBERT's two task classes name their output layer alike: the checkpoint's task.json or architectures say
  // which it is, so that a model fine-tuned for spans does not start a classifier (or the other way round).
  const bool spans = info_.kind == FinetuneKind::span;
  if (model_config_.is_modernbert() && tensors.count("classifier.weight") &&
      modernbert_checkpoint_is_spans(path, (dir / "config.json").string()) != spans)
    fail("{}: a checkpoint fine-tuned for {}, not for {}", path, spans ? "classification" : "question answering",
         info_.name);
  const HeadsInit init = load_finetune_weights(*model_, std::move(tensors), head_prefix(), weights.string());
  if (context_.quiet || context_.rank != 0) return;
  if (!init.initialised.empty())
    std::fprintf(stderr, "%s: %s: no %s head; %s initialised as %s\n", tool_name().c_str(), path.c_str(),
                 info_.name.c_str(), fmt::format("{}", fmt::join(init.initialised, ", ")).c_str(),
                 model_config_.is_modernbert()
                     ? "transformers initialises ModernBERT's (truncated normals: std hidden^-0.5 for the classifier, "
                       "initializer_range / sqrt(2 layers) for head.dense; biases 0, norms 1)"
                     : fmt::format("BERT initialises (normal, std {:g}; biases 0)", model_config_.initializer_range).c_str());
  if (!init.dropped.empty())
    std::fprintf(stderr, "%s: %s: %zu tensors of other heads left out (%s...)\n", tool_name().c_str(), path.c_str(),
                 init.dropped.size(), init.dropped.front().c_str());
}

BertModelBase& FinetuneTask::bert() const { return *model_; }

LearningRate FinetuneTask::default_learning_rate(OptimizerKind, int64_t, bool) const { return finetuning_learning_rate(); }

double FinetuneTask::flops_per_sequence(int64_t seq_len) const {
  return model_config_.training_flops_per_sequence(seq_len, 0);
}

void FinetuneTask::open_epoch(int64_t epoch) {
  epoch_ = epoch;
  batch_ = 0;
  order_.resize(train_.size());
  std::iota(order_.begin(), order_.end(), size_t{0});
  PyRandom rng;
  rng.seed_words({static_cast<uint32_t>(context_.seed), static_cast<uint32_t>(context_.seed >> 32),
                  static_cast<uint32_t>(epoch), kOrderTag});
  rng.shuffle(order_);
}

FinetuneBatch FinetuneTask::make_batch(const std::vector<size_t>& rows, const FeatureRows& from) const {
  // Classification reads only [CLS] and padding is masked in attention, so a batch is cut to its longest feature
  // (dynamic truncation, the same logits). Spans are not: the references' start/end softmax runs over all
  // max_seq_length positions, padding included, and cutting it would change the loss.
  int64_t t = from.seq_len;
  if (info_.kind != FinetuneKind::span && !context_.fixed_shapes) {  // --cuda-graphs: one shape
    t = 1;
    for (size_t r : rows) t = std::max(t, from.length(r));
  }
  const auto b = static_cast<int64_t>(rows.size());
  FinetuneBatch batch;
  batch.input_ids = at::zeros({b, t}, at::kLong);
  batch.segment_ids = at::zeros({b, t}, at::kLong);
  batch.attention_mask = at::zeros({b, t}, at::kLong);
  auto* ids = batch.input_ids.data_ptr<int64_t>();
  auto* segments = batch.segment_ids.data_ptr<int64_t>();
  auto* mask = batch.attention_mask.data_ptr<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    const size_t base = rows[static_cast<size_t>(i)] * static_cast<size_t>(from.seq_len);
    for (int64_t k = 0; k < t; ++k) {
      ids[i * t + k] = from.input_ids[base + static_cast<size_t>(k)];
      segments[i * t + k] = from.segment_ids[base + static_cast<size_t>(k)];
      mask[i * t + k] = from.input_mask[base + static_cast<size_t>(k)];
    }
  }
  // Unpadded classification: each feature's real tokens (input_mask's leading ones) as one stream.
  if (info_.kind != FinetuneKind::span && config_.unpadded) {
    std::vector<std::vector<int64_t>> lengths;
    for (size_t r : rows) lengths.push_back({std::max<int64_t>(from.length(r), 1)});
    batch.stream = make_token_stream(t, lengths);
  }
  if (from.has_spans()) {
    batch.start_positions = at::empty({b}, at::kLong);
    batch.end_positions = at::empty({b}, at::kLong);
    auto* start = batch.start_positions.data_ptr<int64_t>();
    auto* end = batch.end_positions.data_ptr<int64_t>();
    for (int64_t i = 0; i < b; ++i) {
      start[i] = from.start_positions[rows[static_cast<size_t>(i)]];
      end[i] = from.end_positions[rows[static_cast<size_t>(i)]];
    }
  }
  if (from.has_labels()) {
    if (info_.kind == FinetuneKind::regression) {
      batch.labels = at::empty({b}, at::kFloat);
      auto* labels = batch.labels.data_ptr<float>();
      for (int64_t i = 0; i < b; ++i) labels[i] = from.labels[rows[static_cast<size_t>(i)]];
    } else {
      batch.labels = at::empty({b}, at::kLong);
      auto* labels = batch.labels.data_ptr<int64_t>();
      for (int64_t i = 0; i < b; ++i) labels[i] = static_cast<int64_t>(from.labels[rows[static_cast<size_t>(i)]]);
    }
  }
  return batch;
}

StepCounts FinetuneTask::take_micro_batches(int64_t count, int64_t /*step*/) {
  batches_.clear();
  StepCounts counts;
  const auto b = static_cast<size_t>(context_.micro_batch_size);
  for (int64_t k = 0; k < count; ++k) {
    if (batch_ >= batches_per_epoch_) open_epoch(epoch_ + 1);
    const size_t first = (static_cast<size_t>(batch_) * static_cast<size_t>(context_.world) +
                          static_cast<size_t>(context_.rank)) * b;
    ++batch_;
    std::vector<size_t> rows(order_.begin() + static_cast<ptrdiff_t>(first),
                             order_.begin() + static_cast<ptrdiff_t>(first + b));
    batches_.push_back(make_batch(rows, train_));
    counts.sequences += static_cast<int64_t>(b);
    const TokenStream& stream = batches_.back().stream;
    if (stream.defined()) add_sequence_counts(counts, stream.lengths, stream.tokens(), *this);
    else add_batch_counts(counts, batches_.back().attention_mask, *this);
    counts.max_len = std::max(counts.max_len, batches_.back().input_ids.size(1));
  }
  counts.denominators = {static_cast<double>(counts.sequences)};
  return counts;
}

MicroBatchLoss FinetuneTask::forward(size_t index) {
  const FinetuneBatch& host = batches_.at(index);
  auto dev = [&](const at::Tensor& t) { return t.to(context_.device, /*non_blocking=*/true); };
  const at::Tensor ids = dev(host.input_ids), segments = dev(host.segment_ids), mask = dev(host.attention_mask);
  if (info_.kind == FinetuneKind::span) {
    const SpanLogits logits = qa_->forward(ids, segments, mask);
    // HF's BertForQuestionAnswering: positions outside the sequence are clamped to T and ignored.
    const int64_t t = logits.start.size(1);
    const at::Tensor start = dev(host.start_positions).clamp(0, t), end = dev(host.end_positions).clamp(0, t);
    const at::Tensor start_loss = at::cross_entropy_loss(logits.start.to(at::kFloat), start, {}, at::Reduction::Sum, t);
    const at::Tensor end_loss = at::cross_entropy_loss(logits.end.to(at::kFloat), end, {}, at::Reduction::Sum, t);
    return {{(start_loss + end_loss) / 2}, {}};
  }
  const at::Tensor logits =
      (host.stream.defined() ? classifier_->forward_stream(ids, segments, host.stream.to(context_.device, true))
                             : classifier_->forward(ids, segments, mask))
          .to(at::kFloat);
  const at::Tensor labels = dev(host.labels);
  if (info_.kind == FinetuneKind::regression) return {{(logits.squeeze(-1) - labels).pow(2).sum()}, {}};
  const at::Tensor correct = logits.detach().argmax(-1).eq(labels).sum();
  return {{at::cross_entropy_loss(logits, labels, {}, at::Reduction::Sum)}, {correct}};
}

std::string FinetuneTask::cuda_graphs_unsupported() const {
  if (info_.kind != FinetuneKind::span && config_.unpadded)
    return "unpadded attention gives each micro-batch its own number of tokens (use --attention padded)";
  return "";
}

std::string FinetuneTask::stage_micro_batches() { return stage_batches(batches_, staged_, context_.device); }

std::vector<std::string> FinetuneTask::input_paths() const {
  std::vector<std::string> paths = tokenizer_file_paths(config_.vocab_path);  // a vocab.json's merges.txt too
  paths.push_back(config_.train_file);
  paths.push_back(config_.eval_file);
  return paths;
}

TaskDataSummary FinetuneTask::data_summary() const {
  return {train_.size(), train_.seq_len, fmt::format("{} features of {}", info_.name, config_.train_file)};
}

nlohmann::json FinetuneTask::data_position() const {
  const DataPosition p{epoch_, batch_, fingerprint_of(train_, context_, info_.name)};
  return nlohmann::json::parse(p.to_json());
}

void FinetuneTask::restore_data_position(const nlohmann::json& position) {
  const DataPosition p = DataPosition::from_json(position.dump());
  if (p.fingerprint != 0 && p.fingerprint != fingerprint_of(train_, context_, info_.name))
    fail("the data position to resume from belongs to other features, seed, world size or batch size");
  if (p.epoch < 0 || p.batch < 0 || p.batch > batches_per_epoch_)
    fail("data position epoch {} batch {} is outside the data ({} batches per epoch)", p.epoch, p.batch,
         batches_per_epoch_);
  open_epoch(p.epoch);
  batch_ = p.batch;
}

nlohmann::json FinetuneTask::description() const {
  nlohmann::json d = {{"task", info_.name},
                      {"kind", info_.kind == FinetuneKind::span ? "span"
                               : info_.kind == FinetuneKind::regression ? "regression" : "classification"},
                      {"max_seq_length", train_.seq_len}};
  if (info_.kind == FinetuneKind::classification) d["labels"] = info_.labels;
  if (squad_windows_) {
    d["doc_stride"] = squad_windows_->doc_stride;
    d["max_query_length"] = squad_windows_->max_query_length;
  }
  return d;
}

TaskEvaluation FinetuneTask::evaluate() {
  at::NoGradGuard no_grad;
  if (squad_eval_) {
    const SquadLogits logits =
        predict_spans(*qa_, context_.device.str(), squad_eval_->dataset.features, InferenceOptions{});
    TaskEvaluation e;
    const nlohmann::ordered_json scores = squad_eval_->score(logits);
    for (const auto& [name, value] : scores.items())
      if (value.is_number()) e.metrics.emplace_back("eval_" + name, value.template get<double>());
    for (const auto& [name, value] : e.metrics)
      if (name == "eval_f1") e.score = value;
    return e;
  }
  std::vector<int64_t> predicted, gold;
  std::vector<double> values, targets;
  double loss = 0;
  constexpr size_t kBatch = 64;
  for (size_t first = 0; first < eval_.size(); first += kBatch) {
    std::vector<size_t> rows;
    for (size_t r = first; r < std::min(eval_.size(), first + kBatch); ++r)
      if (eval_.real[r]) rows.push_back(r);
    if (rows.empty()) continue;
    const FinetuneBatch b = make_batch(rows, eval_);
    auto dev = [&](const at::Tensor& t) { return t.to(context_.device); };
    const at::Tensor logits =
        classifier_->forward(dev(b.input_ids), dev(b.segment_ids), dev(b.attention_mask)).to(at::kFloat).cpu();
    if (info_.kind == FinetuneKind::regression) {
      const at::Tensor p = logits.squeeze(-1).contiguous();
      loss += (p - b.labels).pow(2).sum().item<double>();
      values.insert(values.end(), p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
      targets.insert(targets.end(), b.labels.data_ptr<float>(), b.labels.data_ptr<float>() + b.labels.numel());
    } else {
      loss += at::cross_entropy_loss(logits, b.labels, {}, at::Reduction::Sum).item<double>();
      const at::Tensor p = logits.argmax(-1).contiguous();
      predicted.insert(predicted.end(), p.data_ptr<int64_t>(), p.data_ptr<int64_t>() + p.numel());
      gold.insert(gold.end(), b.labels.data_ptr<int64_t>(), b.labels.data_ptr<int64_t>() + b.labels.numel());
    }
  }
  TaskEvaluation e;
  const double n = static_cast<double>(std::max(gold.size(), targets.size()));
  e.metrics.emplace_back("eval_loss", loss / std::max(n, 1.0));
  if (info_.kind == FinetuneKind::regression) {
    e.metrics.emplace_back("eval_pearson", pearson(values, targets));
    e.metrics.emplace_back("eval_spearman", spearman(values, targets));
  } else {
    e.metrics.emplace_back("eval_accuracy", accuracy(predicted, gold));
    if (info_.metric == "f1") e.metrics.emplace_back("eval_f1", f1_score(predicted, gold));
    if (info_.metric == "mcc") e.metrics.emplace_back("eval_mcc", matthews_corrcoef(predicted, gold));
  }
  for (const auto& [name, value] : e.metrics)
    if (name == "eval_" + info_.metric) e.score = value;
  return e;
}

}  // namespace bk
