#pragma once
// Tape ops around the attention kernels (layers/attention/kernels/): each records one backward
// that calls the kernel's hand-written gradient. Tensors are [batch, seq_len, d_model] with heads
// as consecutive d_head-wide slices.
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"
#include "layers/attention/kernels/diag_attention.h"

namespace tn {

struct LinearAttentionOut {
  Var num;  // [B, T, d_model]: Σ_j (q_i·k_j) v_j
  Var den;  // [B, T, n_heads]: Σ_j q_i·k_j (null unless requested)
};

/// Kernelised attention terms (docs/model.md §6), causal in the chunked O(T·d²) form.
/// q, k: [B, T, H·d_key] (feature maps may change the width), v: [B, T, H·d_head].
LinearAttentionOut linear_attention(Tape& tape, const Var& q, const Var& k, const Var& v,
                                    int64_t n_heads, bool causal, int64_t chunk, bool with_den);

/// o = num / max(den, eps) per head (classic linear attention's "scaling"). num [B,T,D], den [B,T,H].
Var divide_by_denominator(Tape& tape, const Var& num, const Var& den, float eps);

/// DiagAttention core (docs/model.md §7): attention inside blocks of block_size; q pre-scaled.
/// dropout_p > 0: attention dropout on A with the counter-based mask of dropout_key (see
/// kernels/diag_attention.h); the backward reuses the same key. 0 (default): none.
Var diag_attention(Tape& tape, const Var& q, const Var& k, const Var& v, int64_t n_heads,
                   int64_t block_size, DiagInnerKind inner, bool causal,
                   const std::vector<uint8_t>* key_valid, float dropout_p = 0.f,
                   uint64_t dropout_key = 0);

/// Vanilla softmax attention core; q pre-scaled by 1/√d_head. O(T²) memory for the saved probs.
/// dropout_p, dropout_key: attention dropout on P as in diag_attention
/// (kernels/softmax_attention.h).
Var softmax_attention(Tape& tape, const Var& q, const Var& k, const Var& v, int64_t n_heads,
                      bool causal, const std::vector<uint8_t>* key_valid, float dropout_p = 0.f,
                      uint64_t dropout_key = 0);

/// URPE (householder non-null) or RoPE on q or k (docs/model.md §4), per head; positions
/// offset + t, or (offset + t) mod period when period > 0 (inside diag blocks). theta: [d_head/2]
/// (learned for URPE). offset > 0 places row 0 at an absolute position (incremental decoding).
Var relative_position(Tape& tape, const Var& x, int64_t n_heads, const Var& theta,
                      const Var& householder, int64_t period, int64_t offset = 0);

/// FAVOR+ feature map (Performer; docs/model.md §8): x [B, T, H·d_head] → φ [B, T, H·m]
/// with the fixed random `features` [H, m, d_head]; the stabiliser is a constant for autograd
/// (queries: row max; encoder keys: max over features and real positions; decoder keys: 0).
Var performer_features(Tape& tape, const Var& x, int64_t n_heads, const Var& features,
                       bool is_query, bool causal, double feature_eps,
                       const std::vector<uint8_t>* key_valid);

/// cosFormer re-weighting (docs/model.md §8): x [B, T, H·d_head] → [relu(x) sin a_i,
/// relu(x) cos a_i] per head [B, T, H·2d_head], a_i = (π/2)·i/M, M = each sequence's real length
/// (from key_valid; the whole T when null).
Var cosformer_features(Tape& tape, const Var& x, int64_t n_heads, const std::vector<uint8_t>* key_valid);

/// Zeroes rows of x [B, T, D] at padded positions (key_valid 0); returns x itself (no copy) when
/// key_valid is null or marks every row valid.
Var mask_rows(Tape& tape, const Var& x, const std::vector<uint8_t>* key_valid);

}  // namespace tn
