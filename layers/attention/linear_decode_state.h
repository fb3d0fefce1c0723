#pragma once
// The recurrent form of causal kernelised attention (docs/model.md §6), used to decode one
// token at a time: per head h,
//   kv_state_h ← kv_state_h + k_tᵀ v_t   [d_key × d_head]      k_sum_h ← k_sum_h + k_t   [d_key]
//   num_t = q_t kv_state_h               [d_head]               den_t = q_t · k_sum_h
// i.e. num_t = Σ_{j≤t} (q_t·k_j) v_j and den_t = Σ_{j≤t} q_t·k_j, the same terms as
// linear_attention(causal) at row t (diagonal included). The state has a fixed size whatever t:
// n_heads·d_key·(d_head + 1) numbers. Accumulated in double, so long generations do not drift.
// d_key = d_head for linear/NormAttention, the number of features m for Performer.
#include <cstdint>
#include <vector>

#include "layers/module/module.h"

namespace tn {

class LinearDecodeState : public DecodeState {
 public:
  /// with_den: also keep k_sum and return den (the `scaling` denominator, Performer).
  LinearDecodeState(int64_t n_heads, int64_t d_key, int64_t d_head, bool with_den);

  /// Adds row t to the state, then reads it. q, k: [n_heads·d_key] (φ and relative PE applied);
  /// v, num: [n_heads·d_head]; den: [n_heads], or null when the state was made without it.
  void step(const float* q, const float* k, const float* v, float* num, float* den);

  int64_t size_bytes() const override;

 private:
  int64_t n_heads_, d_key_, d_head_;
  bool with_den_;
  std::vector<double> kv_state_;  // [n_heads, d_key, d_head]
  std::vector<double> k_sum_;     // [n_heads, d_key] (empty without den)
  std::vector<double> acc_;       // [d_head] scratch for one head's num
};

}  // namespace tn
