// bert-eval --fill-mask: the model's top-k tokens at each [MASK] of a sentence.
#include "util/error.h"
#include "tasks/pretraining/fill_mask.h"
#include "util/utf8.h"

#include <ATen/ATen.h>

#include <string_view>

namespace bk {

namespace {

// WordPiece: "[MASK]" would be split into "[", "mask", "]" by the basic tokenizer, so the text is cut at each
// literal "[MASK]" and the pieces between are tokenized on their own. Byte-level BPE: the mask is an added token,
// which the tokenizer finds itself.
std::vector<int64_t> fill_mask_ids(const TextTokenizer& tokenizer, const std::string& text, bool quiet) {
  const int32_t cls = tokenizer.require_cls(), sep = tokenizer.require_sep(), mask = tokenizer.require_mask();
  TextTokenizer::Encoder encoder = tokenizer.encoder();
  std::vector<int32_t> piece_ids;
  std::vector<int64_t> ids{cls};
  if (tokenizer.byte_level()) {
    encoder.encode(text, piece_ids);
    const PostTemplate& post = tokenizer.bpe()->post;
    if (!post.empty()) piece_ids = post.apply(piece_ids);
    else piece_ids.push_back(sep);
    ids.assign(piece_ids.begin(), piece_ids.end());
    if (post.empty()) ids.insert(ids.begin(), cls);
  } else {
    const std::string_view mask_text = tokenizer.token(mask);
    size_t start = 0;
    while (true) {
      const size_t at = text.find(mask_text, start);
      encoder.encode(std::string_view(text).substr(start, at == std::string::npos ? std::string::npos : at - start),
                     piece_ids);
      ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
      if (at == std::string::npos) break;
      ids.push_back(mask);
      start = at + mask_text.size();
    }
    ids.push_back(sep);
  }
  if (!quiet) tokenizer.warn_if_misfit(encoder.take_unknown());
  return ids;
}

}  // namespace

nlohmann::ordered_json fill_mask(BertForPreTraining& model, const TextTokenizer& tokenizer, const std::string& text,
                                 int64_t top_k, bool quiet) {
  if (const size_t bad = utf8_invalid_offset(text); bad != std::string::npos)
    fail("--fill-mask text: invalid UTF-8 at byte {}", bad);
  const int32_t mask = tokenizer.require_mask();
  const std::vector<int64_t> ids = fill_mask_ids(tokenizer, text, quiet);
  std::vector<int64_t> mask_positions;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == mask) mask_positions.push_back(static_cast<int64_t>(i));
  if (mask_positions.empty()) fail("--fill-mask text has no {}: {}", tokenizer.token(mask), text);
  const auto t = static_cast<int64_t>(ids.size());
  if (t > model.config().max_position_embeddings)
    fail("--fill-mask text is {} tokens with [CLS] and [SEP], more than the model's {} positions", t,
         model.config().max_position_embeddings);
  top_k = std::min<int64_t>(top_k, model.config().vocab_size);

  model.eval();
  at::InferenceMode inference;
  const at::Device device = model.named_parameter_list().front().tensor.device();
  const at::Tensor input = at::tensor(ids, at::kLong).view({1, t}).to(device);
  const at::Tensor positions = at::tensor(mask_positions, at::kLong).view({1, -1}).to(device);
  const BertOutput out = model.forward(input, at::zeros_like(input), at::ones_like(input), positions);
  const auto [probs, top_ids] = at::softmax(out.mlm_logits.to(at::kFloat), -1).topk(top_k, -1);
  const at::Tensor probs_cpu = probs.to(at::kCPU).to(at::kDouble), ids_cpu = top_ids.to(at::kCPU);

  nlohmann::ordered_json result;
  result["text"] = text;
  result["tokens"] = nlohmann::json::array();
  for (int64_t id : ids) result["tokens"].push_back(std::string(tokenizer.token(static_cast<int32_t>(id))));
  result["masks"] = nlohmann::json::array();
  for (size_t m = 0; m < mask_positions.size(); ++m) {
    nlohmann::ordered_json entry;
    entry["position"] = mask_positions[m];
    entry["predictions"] = nlohmann::json::array();
    for (int64_t k = 0; k < top_k; ++k) {
      const auto id = ids_cpu[static_cast<int64_t>(m)][k].item<int64_t>();
      nlohmann::ordered_json p;
      p["token"] = std::string(tokenizer.token(static_cast<int32_t>(id)));
      p["id"] = id;
      p["probability"] = probs_cpu[static_cast<int64_t>(m)][k].item<double>();
      entry["predictions"].push_back(p);
    }
    result["masks"].push_back(entry);
  }
  return result;
}

}  // namespace bk
