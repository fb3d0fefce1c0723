#pragma once
// Internal: the fast engine of softmax_attention (see softmax_attention.h for the contract). Per
// (batch, head) and tile of query rows, the products go through oneDNN's sgemm (QKᵀ and P·V; the
// backward recomputes QKᵀ and adds four products); the masks, the softmax rows and the dropout
// weights are this project's code (attention_dropout.h, the same mask as the block engine for the
// same key). Memory: the two row statistics kept per query, plus per thread the gathered k and v
// and two or three tiles of [tile][n] floats (tile = 64–256 rows): linear in T.
//
// Keys after the last valid one (right padding) take no part in any product, and the queries
// before and after that point go through separate products, so a sequence padded further gives
// the same bits. A masked key inside the valid range gets probability 0 and enters the products as
// an exact zero (its v must be finite: 0·NaN is NaN). A causal tile of rows computes the logits of
// the keys up to its last row only and masks the rest of its upper triangle.
#include <cstdint>

#include "layers/attention/kernels/attention_dims.h"

namespace tn::kernel_detail {

constexpr int64_t kRowStats = 2;  // floats kept per query row: max logit, 1 / sum of exponentials

/// out and stats [B, H, T, 2] as softmax_attention_forward; arguments already validated.
/// Throws std::runtime_error if oneDNN's sgemm reports a failure.
void full_attention_forward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                            const float* q, const float* k, const float* v, float* out,
                            float* stats, float dropout_p, uint64_t dropout_key);

/// dq, dk, dv (overwritten) as softmax_attention_backward, from the saved stats.
void full_attention_backward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                             const float* q, const float* k, const float* v, const float* stats,
                             const float* d_out, float* dq, float* dk, float* dv, float dropout_p,
                             uint64_t dropout_key);

}  // namespace tn::kernel_detail
