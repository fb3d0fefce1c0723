#pragma once
// Internal: the fast engine of softmax_attention (see softmax_attention.h for the contract). Per
// (batch, head), the T×T products go through oneDNN's sgemm (QKᵀ, P·V and the four products of the
// backward); the masks, the softmax rows and the dropout weights are this project's code
// (attention_dropout.h, the same mask as the block engine for the same key).
//
// Keys after the last valid one (right padding) take no part in any product, and the queries
// before and after that point go through separate products, so a sequence padded further gives
// the same bits. A masked key inside the valid range gets probability 0 and enters the products as
// an exact zero (its v must be finite: 0·NaN is NaN). Causal rows compute the full n×n logits and
// mask the upper triangle.
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn::kernel_detail {

/// out and probs [B, H, T, T] as softmax_attention_forward; arguments already validated.
/// Throws std::runtime_error if oneDNN's sgemm reports a failure.
void full_attention_forward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                            const float* q, const float* k, const float* v, float* out,
                            float* probs, float dropout_p, uint64_t dropout_key);

/// dq, dk, dv (overwritten) as softmax_attention_backward, from the saved probs.
void full_attention_backward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                             const float* q, const float* k, const float* v, const float* probs,
                             const float* d_out, float* dq, float* dk, float* dv, float dropout_p,
                             uint64_t dropout_key);

}  // namespace tn::kernel_detail
