// Cross entropy of the masked-LM logits, one CUDA kernel each way, reading the decoder's bf16/fp16 product over the
// padded vocabulary where it lies (model/fused_cross_entropy.h wraps them for autograd). The ATen ops it replaces
// copy the first vocab_size columns out, take log-softmax in the 16-bit type, cast it to fp32 for the loss and
// write fp32 one-hot gradients that are cast back: about five passes over a [rows, vocab] tensor each way. Here
// forward reads the logits once (a row's max, sum of exponentials and first arg-max in fp32, one block per row)
// and backward reads them once and writes their gradient, padded columns included. Plain pointers and a
// cudaStream_t passed as void*, as in bias_gelu.h.
#pragma once

#include "kernels/half_type.h"

#include <cstdint>

namespace bk::kernels {

// cols classes of a padded_cols-wide row: padded_cols a multiple of 8 (16-byte rows), cols at most padded_cols.
bool cross_entropy_supports(int64_t cols, int64_t padded_cols);

struct CrossEntropyForward {
  const void* logits = nullptr;     // [rows, padded_cols]; columns from cols on are not read as classes
  const int64_t* labels = nullptr;  // [rows]: a class, or negative for a row without one
  float* loss = nullptr;            // [rows]: logsumexp - logit[label]; 0 without a label; NaN for a label >= cols
  float* logsumexp = nullptr;       // [rows], for backward
  int64_t* predicted = nullptr;     // [rows]: the class of the row's largest logit (the first, on a tie)
  int64_t rows = 0, cols = 0, padded_cols = 0;
};

struct CrossEntropyBackward {
  const float* grad_loss = nullptr;  // [rows]: the gradient of each row's loss
  const void* logits = nullptr;      // logits, labels, logsumexp: as forward took and gave them
  const int64_t* labels = nullptr;
  const float* logsumexp = nullptr;
  void* grad_logits = nullptr;  // [rows, padded_cols]: (softmax - one-hot) * grad_loss; 0 in padded columns and in
                                // rows without a label
  int64_t rows = 0, cols = 0, padded_cols = 0;
};

// Both return the launch's error text, or an empty string.
const char* cross_entropy_forward(HalfType type, const CrossEntropyForward& args, void* stream);
const char* cross_entropy_backward(HalfType type, const CrossEntropyBackward& args, void* stream);

}  // namespace bk::kernels
