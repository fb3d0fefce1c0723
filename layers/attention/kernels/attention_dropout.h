#pragma once
// Internal: the attention-dropout weights shared by the block engine (diag_attention,
// block_attention.cpp) and the full softmax engine (full_attention.cpp), so both drop the same
// entries for the same key.
#include <cstdint>

#include "core/runtime/rng.h"

namespace tn::kernel_detail {

/// Attention dropout of one (b, h, block). Entry (i, j) (query and key counted from the block
/// start s0) has flat index base + i·T + j with base = ((b·H + h)·T + s0)·T + s0, i.e. its index in
/// a [B, H, T, T] tensor at global positions, whatever the block size or thread split. It is kept
/// with weight 1/(1 − p) when counter_uniform(key, index) >= p and dropped (weight 0) otherwise:
/// dropout_weight (core/runtime/rng.h), the rule of core/runtime/ops dropout. on == false (p = 0) skips every
/// dropout line, so the bits are those of the no-dropout engine.
struct BlockDropout {
  bool on = false;
  float p = 0.f;
  float scale = 1.f;
  uint64_t key = 0;
  uint64_t base = 0;
  int64_t row_stride = 0;  // T
  /// m[j] = weight of entry (i, j) for j < count.
  void row(int64_t i, int64_t count, float* __restrict m) const {
    const uint64_t r = base + uint64_t(i) * uint64_t(row_stride);
    for (int64_t j = 0; j < count; ++j)
      m[j] = dropout_weight(key, r + uint64_t(j), p, scale);
  }
};

/// The dropout of block s0 of (b, h) for dropout_p p (off when p is 0) and seq_len T.
inline BlockDropout block_dropout(float p, uint64_t key, int64_t T, int64_t H, int64_t b,
                                  int64_t h, int64_t s0) {
  BlockDropout drop;
  if (!(p > 0.f)) return drop;
  drop.on = true;
  drop.p = p;
  drop.scale = 1.f / (1.f - p);
  drop.key = key;
  const uint64_t row = (uint64_t(b) * uint64_t(H) + uint64_t(h)) * uint64_t(T) + uint64_t(s0);
  drop.base = row * uint64_t(T) + uint64_t(s0);
  drop.row_stride = T;
  return drop;
}

}  // namespace tn::kernel_detail
