// The attention core every encoder shares (model/encoder.h, model/modern_encoder.h): softmax(q k^T / sqrt(d)) v
// inside each sequence, over padded rows or over a token stream of unpadded ones, with every key or only those
// within a symmetric window (ModernBERT's local layers: |query - key| <= window).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>

namespace bk {

struct TokenStream;  // model/token_stream.h

// Every key: the window that means it.
inline constexpr int64_t kNoAttentionWindow = -1;

// qkv: [B, T, 3, heads, d] (q, k, v; a view of the fused projection is fine); key_mask bool [B, T] (true = a real
// token) or undefined (no padding). Returns the context [B, T, heads * d]. Dropout p on the probabilities.
at::Tensor padded_attention(const at::Tensor& qkv, const at::Tensor& key_mask, double dropout_p,
                            int64_t window = kNoAttentionWindow);

// qkv: [N, 3, heads, d], the stream's tokens; attention never crosses a sequence of the stream. Returns
// [N, heads * d].
// On CUDA in half precision ATen's variable-length flash kernel on the cumulative lengths (its window arguments for a
// window); elsewhere an exact path that lays the sequences out as [S, max_seqlen] with a key mask for SDPA.
at::Tensor stream_attention(const at::Tensor& qkv, const TokenStream& stream, double dropout_p,
                            int64_t window = kNoAttentionWindow);

}  // namespace bk
