#include "model/token_stream.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace bk {

TokenStream TokenStream::to(const at::Device& device, bool non_blocking) const {
  TokenStream moved = *this;
  for (at::Tensor* t : {&moved.token_index, &moved.positions, &moved.cu_seqlens, &moved.first_tokens,
                        &moved.padded_index, &moved.padded_mask})
    if (t->defined()) *t = t->to(device, non_blocking);
  return moved;
}

void TokenStream::pin_memory() {
  for (at::Tensor* t : {&token_index, &positions, &cu_seqlens, &first_tokens, &padded_index, &padded_mask})
    if (t->defined()) *t = t->pin_memory();
}

TokenStream make_token_stream(int64_t row_width, const std::vector<std::vector<int64_t>>& row_lengths) {
  TokenStream s;
  int64_t n = 0;
  for (const auto& row : row_lengths)
    for (int64_t length : row) {
      s.lengths.push_back(length);
      s.max_seqlen = std::max(s.max_seqlen, length);
      n += length;
    }
  const auto S = static_cast<int64_t>(s.lengths.size()), L = s.max_seqlen;
  s.token_index = at::empty({n}, at::kLong);
  s.positions = at::empty({n}, at::kLong);
  s.padded_index = at::empty({n}, at::kLong);
  s.cu_seqlens = at::empty({S + 1}, at::kInt);
  s.first_tokens = at::empty({S}, at::kLong);
  s.padded_mask = at::zeros({S, L}, at::kBool);
  int64_t* token_index = s.token_index.data_ptr<int64_t>();
  int64_t* positions = s.positions.data_ptr<int64_t>();
  int64_t* padded_index = s.padded_index.data_ptr<int64_t>();
  int32_t* cu = s.cu_seqlens.data_ptr<int32_t>();
  int64_t* first = s.first_tokens.data_ptr<int64_t>();
  bool* mask = s.padded_mask.data_ptr<bool>();
  int64_t token = 0, seq = 0;
  cu[0] = 0;
  for (size_t b = 0; b < row_lengths.size(); ++b) {
    int64_t column = 0;
    for (int64_t length : row_lengths[b]) {
      first[seq] = token;
      for (int64_t j = 0; j < length; ++j, ++token, ++column) {
        token_index[token] = static_cast<int64_t>(b) * row_width + column;
        positions[token] = j;
        padded_index[token] = seq * L + j;
        mask[seq * L + j] = true;
      }
      cu[++seq] = static_cast<int32_t>(token);
    }
  }
  return s;
}

bool stream_attention_unpadded(const at::Device& device, at::ScalarType dtype, int64_t head_size) {
  return device.is_cuda() && (dtype == at::kBFloat16 || dtype == at::kHalf) && head_size % 8 == 0 && head_size > 0 &&
         head_size <= 256;
}

}  // namespace bk
