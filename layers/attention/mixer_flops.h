#pragma once
// The FLOP formulas the token mixers' table entries share (experiments/bench/bench_flops.h: the
// convention and every mixer's formula). Matrix products only, one multiply-add = 2 FLOPs;
// N = batch·seq_len tokens, d = d_model, H = n_heads, D = d/H.
#include <cstdint>

#include "layers/config/model_config.h"

namespace tn {

/// `count` d×d projections over N tokens: count · 2·N·d² (q/k/v/out: count 4).
double dense_projection_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, double count);

/// Query–key pairs within a block of w positions: w(w+1)/2 causal, w² bidirectional.
double attended_pairs(double w, bool causal);

/// QKᵀ and PV over `pairs` query–key pairs per sequence and head: batch·H · 4·pairs·D.
double pairwise_core_flops(const ModelConfig& config, int64_t batch, double pairs);

/// The linear family's KᵀV state and Q·state: batch·H · 4·seq_len·K·(D + den), K = key_width
/// (the feature width of q and k), den = 1 when the mixer divides by Σ q·k (denominator), else 0.
double linear_core_flops(const ModelConfig& config, int64_t batch, int64_t seq_len, double key_width,
                         bool denominator);

}  // namespace tn
