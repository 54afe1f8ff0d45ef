#include "tasks/finetune/finetune_inference.h"

#include "glue/glue_features.h"
#include "squad/squad_logits.h"
#include "squad/squad_features.h"
#include "model/finetune_heads.h"
#include "tasks/finetune/finetuned_model.h"
#include "device/precision.h"
#include "model/token_stream.h"
#include "util/error.h"
#include "model/bert_base.h"
#include "model/finetune_models.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

namespace bk {

namespace {

// A batch of rows as the model takes them, filled on the host and moved at once.
struct HostBatch {
  at::Tensor ids, segments, mask;
  HostBatch(int64_t rows, int64_t len)
      : ids(at::zeros({rows, len}, at::kLong)), segments(at::zeros({rows, len}, at::kLong)),
        mask(at::zeros({rows, len}, at::kLong)) {}
  // Row r: `input` then padding; segment 1 from position `segment_b` on, up to the row's end.
  void set_row(int64_t r, const int32_t* input, size_t length, size_t segment_b) {
    const int64_t len = ids.size(1);
    int64_t* id = ids.data_ptr<int64_t>() + r * len;
    int64_t* segment = segments.data_ptr<int64_t>() + r * len;
    int64_t* m = mask.data_ptr<int64_t>() + r * len;
    for (size_t k = 0; k < length; ++k) {
      id[k] = input[k];
      segment[k] = k >= segment_b ? 1 : 0;
      m[k] = 1;
    }
  }
};

void copy_rows(const at::Tensor& logits, std::vector<float>& out) {
  const at::Tensor host = logits.to(at::kFloat).cpu().contiguous();
  out.insert(out.end(), host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
}

}  // namespace

void check_vocab_matches(const FinetunedModel& model, size_t vocab_size, const std::string& vocab_path) {
  const int64_t model_vocab = model.base->config().vocab_size;
  if (static_cast<int64_t>(vocab_size) != model_vocab)
    fail("{}: {} tokens, but the checkpoint's model has a vocabulary of {}: not the vocabulary it was trained with",
         vocab_path, vocab_size, model_vocab);
}

namespace {

SquadLogits span_rows(BertForQuestionAnswering& qa, const at::Device& device, const SquadFeatures& features,
                      const InferenceOptions& options) {
  at::NoGradGuard no_grad;
  const Precision precision = options.precision.precision;
  const auto& all = features.features();
  const int64_t len = features.options().max_seq_length;
  if (len > qa.config().max_position_embeddings)
    fail("--max-seq-length {} is longer than the model's {} positions", len, qa.config().max_position_embeddings);
  SquadLogits rows;
  rows.positions = static_cast<size_t>(len);
  for (const SquadFeature& f : all) rows.unique_ids.push_back(f.unique_id);
  rows.start.resize(all.size() * rows.positions);
  rows.end.resize(all.size() * rows.positions);
  std::vector<int32_t> ids;
  // Unpadded, the features go through in order of length, so that a batch's attention (per sequence, as wide as
  // its longest) computes little beyond the real tokens; each feature's logits go back to its own place. Padded,
  // every row is max_seq_length wide anyway: input order.
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < all.size(); ++i) order[i] = i;
  if (options.unpadded)
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return features.length(all[a]) < features.length(all[b]); });
  // run_squad.py's RawResult: each float32 logit as a Python float (a double); row `feature` of the output.
  auto place = [&](const at::Tensor& values, size_t r, size_t feature, std::vector<double>& out) {
    const float* v = values.data_ptr<float>() + static_cast<int64_t>(r) * len;
    std::copy(v, v + len, out.begin() + static_cast<std::ptrdiff_t>(feature * rows.positions));
  };
  for (size_t first = 0; first < all.size(); first += static_cast<size_t>(options.batch_size)) {
    const size_t count = std::min(all.size() - first, static_cast<size_t>(options.batch_size));
    HostBatch batch(static_cast<int64_t>(count), len);
    for (size_t r = 0; r < count; ++r) {
      const SquadFeature& f = all[order[first + r]];
      features.input_ids(f, ids);
      batch.set_row(static_cast<int64_t>(r), ids.data(), ids.size(), static_cast<size_t>(features.doc_offset(f)));
    }
    AutocastScope autocast(precision, device);
    at::Tensor start, end;  // [count, len] float32 on the host
    if (options.unpadded) {
      std::vector<std::vector<int64_t>> row_lengths(count);
      for (size_t r = 0; r < count; ++r)
        row_lengths[r] = {static_cast<int64_t>(features.length(all[order[first + r]]))};
      const TokenStream stream = make_token_stream(len, row_lengths).to(device, /*non_blocking=*/false);
      const SpanLogits logits = qa.forward_stream(batch.ids.to(device), batch.segments.to(device), stream);
      // Back to [rows, len]: each real token's logit at its place, the padding's never ranked.
      auto scatter = [&](const at::Tensor& values) {
        at::Tensor out = at::full({static_cast<int64_t>(count) * len}, kUncomputedLogit, at::kFloat);
        out.index_copy_(0, stream.token_index.cpu(), values.to(at::kFloat).cpu());
        return out;
      };
      start = scatter(logits.start);
      end = scatter(logits.end);
    } else {
      const SpanLogits logits = qa.forward(batch.ids.to(device), batch.segments.to(device), batch.mask.to(device));
      start = logits.start.to(at::kFloat).cpu().contiguous();
      end = logits.end.to(at::kFloat).cpu().contiguous();
    }
    for (size_t r = 0; r < count; ++r) {
      place(start, r, order[first + r], rows.start);
      place(end, r, order[first + r], rows.end);
    }
  }
  return rows;
}

}  // namespace

SquadLogits predict_spans(const FinetunedModel& model, const SquadFeatures& features, const InferenceOptions& options) {
  return span_rows(*model.qa, model.device, features, options);
}

SquadLogits predict_spans(BertForQuestionAnswering& qa, const std::string& device, const SquadFeatures& features,
                          const InferenceOptions& options) {
  return span_rows(qa, at::Device(device), features, options);
}

ClassLogitRows predict_classes(const FinetunedModel& model, const GlueFeatures& features,
                               const InferenceOptions& options) {
  const Precision precision = options.precision.precision;
  ClassLogitRows rows;
  rows.num_labels = model.info->num_labels();
  rows.logits.reserve(features.size() * static_cast<size_t>(rows.num_labels));
  for (size_t first = 0; first < features.size(); first += static_cast<size_t>(options.batch_size)) {
    const size_t count = std::min(features.size() - first, static_cast<size_t>(options.batch_size));
    size_t longest = 1;
    for (size_t r = 0; r < count; ++r) longest = std::max(longest, features.input_ids(first + r).size());
    if (static_cast<int64_t>(longest) > model.base->config().max_position_embeddings)
      fail("--max-seq-length {} is longer than the model's {} positions", features.options().max_seq_length,
           model.base->config().max_position_embeddings);
    HostBatch batch(static_cast<int64_t>(count), static_cast<int64_t>(longest));
    for (size_t r = 0; r < count; ++r) {
      const auto ids = features.input_ids(first + r);
      batch.set_row(static_cast<int64_t>(r), ids.data(), ids.size(), features.segment_a_length(first + r));
    }
    AutocastScope autocast(precision, model.device);
    copy_rows(model.classes(batch.ids.to(model.device), batch.segments.to(model.device), batch.mask.to(model.device)),
              rows.logits);
  }
  return rows;
}

}  // namespace bk
