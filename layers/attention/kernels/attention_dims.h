#pragma once
// Shapes shared by the raw-pointer attention kernels in this folder.
//
// Layout everywhere: q, k, v, outputs and their gradients are [batch, seq_len, n_heads, d_head]
// contiguous, i.e. the [batch, seq_len, d_model] projection output with heads as consecutive
// d_head-wide slices. Row t of head h of batch b starts at ((b*seq_len + t)*n_heads + h)*d_head.
#include <cstdint>
#include <string>

#include "core/error.h"

namespace tn {

struct AttentionDims {
  int64_t batch, seq_len, n_heads, d_head;
};

/// Number of floats in one [batch, seq_len, n_heads, d_head] tensor.
inline int64_t attention_numel(const AttentionDims& dims) {
  return dims.batch * dims.seq_len * dims.n_heads * dims.d_head;
}

/// Throws ShapeError "[op] ..." unless batch, seq_len, n_heads >= 0 and d_head >= 1.
inline void check_attention_dims(const char* op, const AttentionDims& dims) {
  if (dims.batch < 0 || dims.seq_len < 0 || dims.n_heads < 0 || dims.d_head < 1)
    throw ShapeError(std::string("[") + op +
                     "] expected batch, seq_len, n_heads >= 0 and d_head >= 1, got batch " +
                     std::to_string(dims.batch) + ", seq_len " + std::to_string(dims.seq_len) +
                     ", n_heads " + std::to_string(dims.n_heads) + ", d_head " +
                     std::to_string(dims.d_head));
}

}  // namespace tn
