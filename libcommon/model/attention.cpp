#include "model/attention.h"

#include "model/token_stream.h"

#include <ATen/ATen.h>

namespace bk {

namespace {

// bool [T, T]: |query - key| <= window.
at::Tensor window_band(int64_t t, int64_t window, const at::Device& device) {
  const at::Tensor pos = at::arange(t, at::TensorOptions().dtype(at::kLong).device(device));
  return (pos.unsqueeze(1) - pos.unsqueeze(0)).abs().le(window);
}

}  // namespace

// A padding query that the band leaves without a real key gets zeros, as transformers' SDPA path gives it (torch's
// SDPA returns 0 for a query that may see no key, and no NaN in its gradients): SQuAD's softmax over every position
// reads those rows.
const std::optional<at::Tensor>& AttentionScope::sdpa_mask(int64_t rows, int64_t t, const at::Device& device) const {
  if (built_) return mask_;
  built_ = true;
  if (window_ == kNoAttentionWindow) {
    if (key_mask_.defined()) mask_ = key_mask_.view({rows, 1, 1, t});
    return mask_;
  }
  const at::Tensor band = window_band(t, window_, device).view({1, 1, t, t});
  mask_ = key_mask_.defined() ? band.logical_and(key_mask_.view({rows, 1, 1, t})) : band;
  return mask_;
}

at::Tensor padded_attention(const at::Tensor& qkv, const AttentionScope& scope, double dropout_p) {
  const int64_t b = qkv.size(0), t = qkv.size(1), h = qkv.size(3) * qkv.size(4);
  // [B, T, 3, heads, d] -> [3, B, heads, T, d]: strided views, the layout SDPA's kernels take as they are.
  const auto parts = qkv.permute({2, 0, 3, 1, 4}).unbind(0);
  const at::Tensor context = at::scaled_dot_product_attention(
      parts[0], parts[1], parts[2], scope.sdpa_mask(b, t, qkv.device()), dropout_p);
  return context.transpose(1, 2).reshape({b, t, h});
}

at::Tensor stream_attention(const at::Tensor& qkv, const TokenStream& stream, const AttentionScope& scope,
                            double dropout_p) {
  const int64_t n = qkv.size(0), heads = qkv.size(2), d = qkv.size(3), h = heads * d;
  if (stream_attention_unpadded(qkv.device(), qkv.scalar_type(), d)) {
    const auto parts = qkv.unbind(1);  // [N, heads, d] each, the layout of the varlen kernel
    std::optional<int64_t> left, right;
    if (scope.window() != kNoAttentionWindow) left = right = scope.window();  // flash's window bounds are inclusive
    const auto out = at::_flash_attention_forward(parts[0], parts[1], parts[2], stream.cu_seqlens, stream.cu_seqlens,
                                                  stream.max_seqlen, stream.max_seqlen, dropout_p,
                                                  /*is_causal=*/false, /*return_debug_mask=*/false, std::nullopt,
                                                  left, right);
    return std::get<0>(out).reshape({n, h});
  }
  // Exact everywhere: the sequences side by side as [S, L] rows, padding masked out of the keys, then back.
  const int64_t s = stream.first_tokens.size(0), l = stream.max_seqlen;
  const at::Tensor padded = at::zeros({s * l, 3, heads, d}, qkv.options()).index_copy(0, stream.padded_index, qkv);
  const auto parts = padded.view({s, l, 3, heads, d}).permute({2, 0, 3, 1, 4}).unbind(0);
  const at::Tensor context = at::scaled_dot_product_attention(
      parts[0], parts[1], parts[2], scope.sdpa_mask(s, l, qkv.device()), dropout_p);
  return context.transpose(1, 2).reshape({s * l, h}).index_select(0, stream.padded_index);
}

}  // namespace bk
