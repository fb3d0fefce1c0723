#pragma once
// Shapes shared by the raw-pointer attention kernels in this folder.
//
// Layout everywhere: q, k, v, outputs and their gradients are [batch, seq_len, n_heads, width]
// contiguous, i.e. the [batch, seq_len, n_heads·width] projection output with heads as consecutive
// width-wide slices. Row t of head h of batch b starts at ((b*seq_len + t)*n_heads + h)*width.
// width is d_head for v and everything derived from it; q and k of linear_attention have
// key_width(dims) (feature maps such as Performer's or cosFormer's change the width of q and k
// but not of v).
#include <cstdint>
#include <string>

#include "core/error.h"

namespace tn {

struct AttentionDims {
  int64_t batch, seq_len, n_heads, d_head;
  /// Width per head of q and k (and dq, dk); 0 means "same as d_head". Only linear_attention and
  /// the feature maps (performer_features, cosformer_features) accept a value other than 0 or
  /// d_head; every other kernel throws on it.
  int64_t d_key = 0;
};

/// Width per head of q and k: d_key, or d_head when d_key is 0.
inline int64_t key_width(const AttentionDims& dims) {
  return dims.d_key > 0 ? dims.d_key : dims.d_head;
}

/// Number of floats in one [batch, seq_len, n_heads, d_head] tensor (v-shaped).
inline int64_t attention_numel(const AttentionDims& dims) {
  return dims.batch * dims.seq_len * dims.n_heads * dims.d_head;
}

/// Number of floats in one [batch, seq_len, n_heads, key_width] tensor (q- and k-shaped).
inline int64_t attention_key_numel(const AttentionDims& dims) {
  return dims.batch * dims.seq_len * dims.n_heads * key_width(dims);
}

/// Throws ShapeError "[op] ..." unless batch, seq_len, n_heads >= 0, d_head >= 1 and d_key >= 0.
inline void check_attention_dims_any_key(const char* op, const AttentionDims& dims) {
  if (dims.batch < 0 || dims.seq_len < 0 || dims.n_heads < 0 || dims.d_head < 1 || dims.d_key < 0)
    throw ShapeError(std::string("[") + op +
                     "] expected batch, seq_len, n_heads >= 0, d_head >= 1 and d_key >= 0, got "
                     "batch " +
                     std::to_string(dims.batch) + ", seq_len " + std::to_string(dims.seq_len) +
                     ", n_heads " + std::to_string(dims.n_heads) + ", d_head " +
                     std::to_string(dims.d_head) + ", d_key " + std::to_string(dims.d_key));
}

/// Throws ShapeError "[op] ..." unless batch, seq_len, n_heads >= 0, d_head >= 1 and d_key is 0 or
/// d_head (kernels whose q and k have the width of v).
inline void check_attention_dims(const char* op, const AttentionDims& dims) {
  check_attention_dims_any_key(op, dims);
  if (key_width(dims) != dims.d_head)
    throw ShapeError(std::string("[") + op +
                     "] q and k must have the width of v: d_key must be 0 or d_head " +
                     std::to_string(dims.d_head) + ", got " + std::to_string(dims.d_key));
}

}  // namespace tn
