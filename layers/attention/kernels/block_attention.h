#pragma once
// Internal: the shared fast engine of diag_attention (blocks of W) and softmax_attention (one block
// of T). Arguments are validated by the public wrappers; see diag_attention.h for the contract
// (including the dropout mask: dropout_p = 0 runs exactly the no-dropout code).
#include <cstdint>
#include <string>

#include "core/error.h"
#include "layers/attention/kernels/attention_dims.h"
#include "layers/attention/kernels/diag_attention.h"

namespace tn::kernel_detail {

/// Throws ShapeError "[op] dropout_p must be in [0, 1), got p" (NaN included).
inline void check_dropout_p(const char* op, float dropout_p) {
  if (!(dropout_p >= 0.f && dropout_p < 1.f))
    throw ShapeError(std::string("[") + op + "] dropout_p must be in [0, 1), got " +
                     std::to_string(dropout_p));
}

void block_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                             bool causal, const uint8_t* key_valid, const float* q, const float* k,
                             const float* v, float* out, float* probs, float dropout_p,
                             uint64_t dropout_key);

void block_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                              bool causal, const uint8_t* key_valid, const float* q, const float* k,
                              const float* v, const float* probs, const float* d_out, float* dq,
                              float* dk, float* dv, float dropout_p, uint64_t dropout_key);

}  // namespace tn::kernel_detail
