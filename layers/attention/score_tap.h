#pragma once
// What a token mixer shows the gradient analysis (train.analysis.grad_stats; paper §3.1, Table 2;
// docs/analysis.md): the inputs of its attention scores s_ij and the value whose gradient, after
// backward, gives ∂L/∂s_ij through the mixer's quadratic form. Kernel mixers never materialise the
// scores in training; the analysis recomputes them from the tap, at its own cost, only when on.
#include <cstdint>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

struct ScoreTap {
  /// How the scores make the tapped output `out` (per head; j over the keys row i may see):
  enum class Form {
    Ratio,    // o_i = Σ_j s_ij v_j / Σ_j s_ij            (linear with scaling, Performer, cosFormer)
    Direct,   // t_i = Σ_j a(s_ij) v_j, a = id or ReLU    (NormAttention and linear before their norm; Diag T1)
    Softmax,  // o_i = Σ_j softmax_j(s_ij) v_j            (softmax; Diag T2)
  };
  Form form = Form::Ratio;
  bool relu = false;  // Direct: a = ReLU (DiagAttention T1)
  /// [batch, seq_len, n_heads * width]: s_ij = q_i · k_j per head (any 1/√d already in q).
  Var q, k, v;
  /// [batch, seq_len, n_heads * d_v]: o (Ratio, Softmax) or t (Direct); its grad is read after backward.
  Var out;
  int64_t n_heads = 1;
  bool causal = false;
  int64_t block = 0;  // > 0: attention only inside blocks of this many positions (DiagAttention)
  const std::vector<uint8_t>* key_valid = nullptr;  // [batch * seq_len], null = all real
  float eps = 0;  // Ratio: the denominator is max(Σ_j s_ij, eps), as the mixer computes it
  int64_t layer = 0;  // the layer it came from (set by ScoreProbe::record, not by the mixer)
};

/// Receives the taps of one forward, in layer order. The model calls begin_layer(l) before layer
/// l's token mixer; a mixer records one tap per attention it computes (one for most, two for
/// diag_norm_parallel, whose branches are both layer l's), and each tap is labelled with the layer.
class ScoreProbe {
 public:
  virtual ~ScoreProbe() = default;
  void begin_layer(int64_t layer) { layer_ = layer; }
  /// Labels the tap with the current layer and hands it to take().
  void record(ScoreTap tap) {
    tap.layer = layer_;
    take(std::move(tap));
  }

 protected:
  virtual void take(ScoreTap tap) = 0;

 private:
  int64_t layer_ = 0;
};

}  // namespace tn
