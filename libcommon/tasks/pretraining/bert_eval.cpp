#include "tasks/pretraining/evaluate.h"

#include "device/device.h"
#include "device/precision.h"
#include "launch/dist_env.h"

#include "tasks/pretraining/fill_mask.h"
#include "tasks/pretraining/inputs.h"
#include "tok/vocab.h"
#include "ckpt/checkpoint_path.h"
#include "ckpt/checkpoint_tokenizer.h"
#include "ckpt/tokenizer_files.h"

#include "util/error.h"
#include "io/progress.h"
#include "hdf5/hdf5_reader.h"
#include "pretraining_data/dynamic_masks.h"
#include "model/model_dir.h"
#include "tasks/pretraining/pretrain_loss.h"
#include "tasks/pretraining/batch.h"

#include <ATen/ATen.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

namespace bk {

namespace {

// Packs samples [begin, end) into a PretrainBatch (batch.h conventions) padded to the longest of them.
PretrainBatch make_batch(const std::vector<PretrainSample>& samples, size_t begin, size_t end, int64_t max_predictions,
                         const std::string& file, uint64_t first_row) {
  int64_t p = max_predictions;
  for (size_t i = begin; i < end; ++i) {
    const auto n = static_cast<int64_t>(samples[i].masked_lm_positions.size());
    if (max_predictions > 0 && n > max_predictions)
      fail("{}: row {}: {} masked positions, more than --max-predictions {}", file, first_row + (i - begin), n,
           max_predictions);
    if (max_predictions == 0) p = std::max(p, n);
  }
  p = std::max<int64_t>(p, 1);
  // The training loader's collation, so evaluation and training batches are built the same way; unpadded, so
  // packed files are read too and no work is spent on padding.
  return collate_pretrain_batch(std::vector<PretrainSample>(samples.begin() + static_cast<ptrdiff_t>(begin),
                                                            samples.begin() + static_cast<ptrdiff_t>(end)), p,
                                /*pin_memory=*/false, /*unpadded=*/true);
}

at::Device model_device(const BertForPreTraining& model) { return model.named_parameter_list().front().tensor.device(); }

}  // namespace

nlohmann::ordered_json EvalTotals::to_json() const {
  nlohmann::ordered_json j;
  j["samples"] = samples;
  j["mlm_accuracy"] = mlm_accuracy();
  if (next_sentence) j["nsp_accuracy"] = nsp_accuracy();
  j["mlm_loss"] = mlm_loss();
  if (next_sentence) j["nsp_loss"] = nsp_loss();
  j["masked_predictions"] = mlm_total;
  j["seconds"] = seconds;
  j["samples_per_second"] = seconds > 0 ? static_cast<double>(samples) / seconds : 0.0;
  return j;
}

namespace {

// Masks an unmasked block once (settings.masking), then checks its ids: one beyond the vocabulary would be an
// index error deep inside LibTorch (a device assert on CUDA).
void prepare_block(std::vector<PretrainSample>& block, const EvalSettings& settings, const BertConfig& config,
                   const std::string& path, uint64_t first_row) {
  for (size_t i = 0; i < block.size(); ++i) {
    PretrainSample& sample = block[i];
    if (settings.masking && sample.unmasked() &&
        mask_sample(sample, settings.masking->rule, settings.masking->vocab, settings.mask_seed, 0) == 0)
      fail("{}: row {}: no token to mask (the sample holds only [CLS] and [SEP])", path, first_row + i);
    for (const auto* ids : {&sample.input_ids, &sample.masked_lm_ids})
      for (int32_t id : *ids)
        if (id < 0 || id >= config.vocab_size)
          fail("{}: row {}: token id {} is outside the model's vocabulary of {}", path, first_row + i, id,
               config.vocab_size);
    for (int32_t seg : sample.segment_ids)
      if (seg >= config.type_vocab_size)
        fail("{}: row {}: segment id {} but the model's type_vocab_size is {}", path, first_row + i, seg,
             config.type_vocab_size);
  }
}

}  // namespace

EvalTotals evaluate_pretraining(BertForPreTraining& model, const EvalSettings& settings, Progress* progress) {
  const auto start = std::chrono::steady_clock::now();
  model.eval();
  at::InferenceMode inference;
  const at::Device device = model_device(model);
  EvalTotals totals;
  totals.next_sentence = model.config().has_next_sentence_head();
  std::vector<PretrainSample> block;
  uint64_t to_skip = settings.skip_samples, rows_done = 0;
  if (progress && progress->on_terminal()) {  // the total: the inputs' rows, less those skipped, up to the limit
    uint64_t rows = 0;
    bool packed = false;
    for (const SampleFile& file : settings.files) {
      rows += file.rows;
      packed = packed || file.max_sequences > 1;
    }
    rows = rows > to_skip ? rows - to_skip : 0;
    if (settings.max_samples > 0 && !packed) rows = std::min<uint64_t>(rows, settings.max_samples);
    progress->set_total(rows, packed ? "rows" : "samples");
  }
  for (const SampleFile& file : settings.files) {
    const std::string& path = file.path;
    PretrainReader reader(path);
    while (settings.max_samples == 0 || totals.samples < settings.max_samples) {
      uint64_t first_row = reader.next_row();
      if (!reader.read_block(block, 4096)) break;
      if (to_skip > 0) {  // rows, one sample each: packed files are evaluated whole
        const uint64_t skipped = std::min<uint64_t>(to_skip, block.size());
        block.erase(block.begin(), block.begin() + static_cast<ptrdiff_t>(skipped));
        first_row += skipped;
        to_skip -= skipped;
        if (block.empty()) continue;
      }
      if (settings.max_samples > 0 && block.size() > settings.max_samples - totals.samples)
        block.resize(settings.max_samples - totals.samples);
      prepare_block(block, settings, model.config(), path, first_row);
      for (size_t begin = 0; begin < block.size(); begin += static_cast<size_t>(settings.batch_size)) {
        const size_t end = std::min(block.size(), begin + static_cast<size_t>(settings.batch_size));
        const PretrainBatch batch =
            make_batch(block, begin, end, settings.max_predictions, path, first_row + begin).to(device);
        const PretrainLoss r = [&] {
          AutocastScope autocast(settings.precision, device);
          return pretraining_loss(model, batch);
        }();
        const auto mlm_total = r.mlm_total.item<int64_t>();
        const auto n = static_cast<uint64_t>(r.sequences.item<int64_t>());  // samples: several per packed row
        totals.samples += n;
        totals.mlm_correct += static_cast<uint64_t>(r.mlm_correct.item<int64_t>());
        totals.mlm_total += static_cast<uint64_t>(mlm_total);
        totals.nsp_correct += static_cast<uint64_t>(r.nsp_correct.item<int64_t>());
        if (mlm_total > 0) totals.mlm_loss_sum += r.mlm_loss.item<double>() * static_cast<double>(mlm_total);
        totals.nsp_loss_sum += r.nsp_loss.item<double>() * static_cast<double>(n);
        rows_done += end - begin;
        if (progress && progress->wants_update())
          progress->update(rows_done, fmt::format("mlm_accuracy {:.4f}", static_cast<double>(totals.mlm_correct) /
                                                                          static_cast<double>(std::max<uint64_t>(totals.mlm_total, 1))));
      }
    }
    if (settings.max_samples > 0 && totals.samples >= settings.max_samples) break;
  }
  totals.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return totals;
}

namespace {

// --fill-mask: the text tokenized as the model was trained (ckpt/checkpoint_tokenizer.h's rule).
void run_fill_mask(const BertEvalConfig& options, const std::string& checkpoint, const at::Device& device) {
  const TextTokenizer tokenizer =
      checkpoint_tokenizer(checkpoint, {options.vocab, options.tokenizer, options.cased}, options.allow_vocab_mismatch,
                           "--fill-mask", "--vocab or --tokenizer")
          .load();
  auto model = load_model_dir(checkpoint, options.config);
  model->to(device);
  model->eval();
  if (static_cast<int64_t>(tokenizer.size()) != model->config().vocab_size)
    fail("{}: {} tokens, but the model's vocab_size is {}", tokenizer.path(), tokenizer.size(), model->config().vocab_size);
  for (const auto& text : options.fill_mask_texts)
    std::cout << fill_mask(*model, tokenizer, text, options.top_k, options.quiet).dump() << '\n';
  std::cout.flush();
}

// The settings --input resolves to: its files as bert-train reads them (directories of HDF5 files, or bin4's, in
// its order), and for unmasked ones (--masking dynamic) the rule they are masked with once. Data of another
// vocabulary than the model's is refused.
EvalSettings eval_settings(const BertEvalConfig& options, const std::string& checkpoint, int64_t max_positions) {
  const PretrainInputs inputs = resolve_pretrain_inputs(options.inputs);
  check_max_predictions(options.settings.max_predictions, inputs, max_positions);
  if (inputs.vocab)
    if (const auto model_vocab = checkpoint_vocab_stamp(checkpoint))
      check_same_vocabulary(*inputs.vocab, *model_vocab, true, options.allow_vocab_mismatch);
  EvalSettings settings = options.settings;
  const std::string named = TokenizerFlags{options.vocab, options.tokenizer}.path();
  settings.masking = resolve_masking(options.masking_flags, inputs, named.empty() ? vocab_beside_checkpoint(checkpoint) : named,
                                     settings.max_predictions, false);
  // --max-predictions counts one sample's masks; a packed row of several takes more slots.
  if (settings.masking) settings.max_predictions = dynamic_prediction_slots(inputs.sources, *settings.masking);
  settings.files = inputs.files();
  return settings;
}

}  // namespace

void run_bert_eval(const BertEvalConfig& options) {
  options.validate();
  const at::Device device = choose_device(options.device, detect_dist_env());
  set_up_cuda_runtime(device);
  const std::string checkpoint = resolve_checkpoint(options.checkpoint);
  if (!options.fill_mask_texts.empty()) return run_fill_mask(options, checkpoint, device);
  auto model = load_model_dir(checkpoint, options.config);
  model->to(device);
  model->eval();
  EvalSettings settings = eval_settings(options, checkpoint, model->config().max_position_embeddings);
  const ChosenPrecision precision = choose_precision(options.precision, device, !options.quiet);
  settings.precision = precision.precision;
  Progress progress(options.quiet);
  EvalTotals totals = evaluate_pretraining(*model, settings, &progress);
  // An accuracy of 0.0 over nothing would read as a result.
  if (totals.samples == 0) fail("{}: no samples to evaluate", fmt::join(options.inputs, ", "));
  nlohmann::ordered_json out;
  out["checkpoint"] = checkpoint;
  out["device"] = device.str();
  out["precision"] = choice_name(kPrecisions, precision.precision);
  out["precision_reason"] = precision.reason;
  const nlohmann::ordered_json metrics = totals.to_json();  // named: items() of a temporary would dangle
  for (const auto& [k, v] : metrics.items()) out[k] = v;
  std::cout << out.dump() << std::endl;
  uint64_t input_bytes = 0;
  for (const SampleFile& file : settings.files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file.path, ec);
    if (!ec) input_bytes += size;
  }
  progress.finish(input_bytes, fmt::format("{} samples, mlm_accuracy {:.4f}{}", totals.samples, totals.mlm_accuracy(),
                                           totals.next_sentence
                                               ? fmt::format(", nsp_accuracy {:.4f}", totals.nsp_accuracy())
                                               : ""));
}

}  // namespace bk
