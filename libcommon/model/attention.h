// The attention core every encoder shares (model/encoder.h, model/modern_encoder.h): softmax(q k^T / sqrt(d)) v
// inside each sequence, over padded rows or over a token stream of unpadded ones, with every key or only those
// within a symmetric window (ModernBERT's local layers: |query - key| <= window).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <optional>

namespace bk {

struct TokenStream;  // model/token_stream.h

// Every key: the window that means it.
inline constexpr int64_t kNoAttentionWindow = -1;

// Which keys each query may see in one forward pass: the window, and the real keys (key_mask bool [rows, T], or
// undefined: all). SDPA's boolean mask is built on first use and kept for the pass's other layers of the same kind:
// a window's band over 8,192 tokens is 64 MB per row, too much to make again in every layer.
class AttentionScope {
 public:
  AttentionScope(int64_t window, at::Tensor key_mask) : window_(window), key_mask_(std::move(key_mask)) {}
  int64_t window() const { return window_; }
  // [rows, 1, 1, T] without a window, [rows, 1, T, T] with one; nullopt for no window and no padding.
  const std::optional<at::Tensor>& sdpa_mask(int64_t rows, int64_t t, const at::Device& device) const;

 private:
  int64_t window_;
  at::Tensor key_mask_;
  mutable bool built_ = false;
  mutable std::optional<at::Tensor> mask_;
};

// qkv: [B, T, 3, heads, d] (q, k, v; a view of the fused projection is fine); scope's key mask over [B, T]. Returns
// the context [B, T, heads * d]. Dropout p on the probabilities.
at::Tensor padded_attention(const at::Tensor& qkv, const AttentionScope& scope, double dropout_p);

// qkv: [N, 3, heads, d], the stream's tokens; attention never crosses a sequence of the stream. scope: made with
// the stream's padded_mask. Returns [N, heads * d]. On CUDA in half precision ATen's variable-length flash kernel on
// the cumulative lengths (its window arguments for a window); elsewhere an exact path that lays the sequences out
// as [S, max_seqlen] with a key mask for SDPA.
at::Tensor stream_attention(const at::Tensor& qkv, const TokenStream& stream, const AttentionScope& scope,
                            double dropout_p);

}  // namespace bk
