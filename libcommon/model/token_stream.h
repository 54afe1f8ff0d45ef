// A batch without its padding (unpadded attention, model/encoder.h): its N real tokens as one stream in row order,
// cut into S sequences (one per sample; a packed row holds several). Made on the host by the pretraining batch's
// collation (tasks/pretraining/batch.h).
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace bk {

// The encoder runs its GEMMs on [N, H] and attention on each sequence alone (model/encoder.h), as
// MosaicBERT and NVIDIA's MLPerf BERT do after unpadding once before the first layer.
struct TokenStream {
  at::Tensor token_index;   // int64 [N]: row * T + column of each real token in the [B, T] tensors
  at::Tensor positions;     // int64 [N]: the token's position in its own sequence (restarting in packed rows)
  at::Tensor cu_seqlens;    // int32 [S + 1]: sequence s is tokens [cu_seqlens[s], cu_seqlens[s + 1]) of the stream
  at::Tensor first_tokens;  // int64 [S]: where each sequence's [CLS] is in the stream
  at::Tensor padded_index;  // int64 [N]: s * max_seqlen + position, the token's place in an [S, max_seqlen] layout
  at::Tensor padded_mask;   // bool [S, max_seqlen]: the real tokens of that layout
  int64_t max_seqlen = 0;   // on the host, so no kernel needs a device-to-host read to size its work
  std::vector<int64_t> lengths;  // the S sequence lengths, on the host (for FLOP counts)

  bool defined() const { return token_index.defined(); }
  int64_t tokens() const { return token_index.defined() ? token_index.size(0) : 0; }
  int64_t sequences() const { return static_cast<int64_t>(lengths.size()); }

  // The same tensors on `device` (host fields as they are).
  TokenStream to(const at::Device& device, bool non_blocking) const;
  // Page-locked host tensors, for fast copies to a CUDA device.
  void pin_memory();
};

// Whether attention over a token stream computes the real tokens only: ATen's variable-length flash kernel, on CUDA
// in bf16/fp16 (the autocast dtype) with a head size that is a multiple of 8 up to 256. Elsewhere it is exact but
// lays the sequences out side by side, each padded to the stream's longest (model/encoder.cpp).
bool stream_attention_unpadded(const at::Device& device, at::ScalarType dtype, int64_t head_size);

// The stream of B rows of width `row_width` whose real tokens come first: row b holds the sequences of
// row_lengths[b], back to back (one sequence per row unless rows are packed).
TokenStream make_token_stream(int64_t row_width, const std::vector<std::vector<int64_t>>& row_lengths);

}  // namespace bk
