#pragma once
// Locality accumulation (paper §3.2, Fig. 2): l(r), the attention mass a token puts inside the
// neighbourhood of size r·N around itself, averaged over tokens, heads and samples, per layer.
// Our definitions (the paper leaves them open; docs/analysis.md):
//   window_i(r) holds m = floor(r·N) + 1 positions: the m ending at i for a causal model
//   ({ j : i - m < j <= i }, fewer near the start), the m centred on i for a bidirectional one
//   (slid inward at the ends of the sequence); l_i(r) = Σ_{j in window_i(r)} P_ij;
//   P = the softmax probabilities for softmax and DiagAttention with softmax inside its blocks;
//   the row-normalised |s_ij| for the kernel mixers (s_ij = φ(q_i)·φ(k_j)) and for DiagAttention
//   with ReLU (s = ReLU(q·k/√d)), over the keys row i may see.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layers/attention/score_tap.h"
#include "layers/models/transnormer.h"

namespace tn {

/// The grid r = 0, step, 2·step, ..., 1 (the last point is 1 exactly). Throws ConfigError for a
/// step outside (0, 1].
std::vector<double> locality_grid(double step);

/// Adds l_i(r) of every row of one attention matrix P [seq_len x seq_len] (row-major; rows sum to 1
/// over their visible keys) to `sum` (one entry per r) and the number of rows to `rows`.
void accumulate_locality(const std::vector<double>& P, int64_t seq_len, bool causal, const std::vector<double>& r,
                         std::vector<double>& sum, int64_t& rows);

/// The attention matrices P of one tap (eval mode: no gradient needed), [batch * heads] of them,
/// each [seq_len x seq_len]; rows of padded queries are all zero.
std::vector<std::vector<double>> attention_matrices(const ScoreTap& tap);

struct LocalityCurves {
  int64_t seq_len = 0;
  std::vector<double> r;
  struct Layer {
    int64_t layer = 0;
    std::string mixer;
    std::vector<double> l;
  };
  std::vector<Layer> layers;
  std::vector<double> mean;  // over the layers
  /// {"seq_len", "r", "layers": [{"layer", "mixer", "l"}], "mean"}
  nlohmann::json to_json() const;
};

/// l(r) of every layer of `model` on the first `samples` blocks of seq_len tokens of `stream`
/// (fewer when the stream is shorter). Throws DataError when the stream holds no whole block.
LocalityCurves analyze_locality(TransNormerModel& model, const std::vector<int32_t>& stream, int64_t seq_len,
                                int64_t samples, double r_step);

}  // namespace tn
