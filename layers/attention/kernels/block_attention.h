#pragma once
// Internal: the shared fast engine of diag_attention (blocks of W) and softmax_attention (one block
// of T). Arguments are validated by the public wrappers; see diag_attention.h for the contract.
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"
#include "layers/attention/kernels/diag_attention.h"

namespace tn::kernel_detail {

void block_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                             bool causal, const uint8_t* key_valid, const float* q, const float* k,
                             const float* v, float* out, float* probs);

void block_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                              bool causal, const uint8_t* key_valid, const float* q, const float* k,
                              const float* v, const float* probs, const float* d_out, float* dq,
                              float* dk, float* dv);

}  // namespace tn::kernel_detail
