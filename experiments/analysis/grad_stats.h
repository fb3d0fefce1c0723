#pragma once
// Gradient statistics of the attention scores (paper §3.1, Table 2), opt-in with
// train.analysis.grad_stats. Our definition (the paper leaves it open; docs/analysis.md):
//   g_t(layer) = mean over batch, heads and every (i, j) that row i may attend to of |∂L/∂s_ij|,
// at each logged training step t, where s_ij is the layer's score before its normalisation
// (softmax logit q·k/√d; kernel product φ(q_i)·φ(k_j) for linear attention, NormAttention,
// Performer and cosFormer; q·k/√d before the ReLU or softmax of DiagAttention), and L is the
// step's training loss (mean over targets). The scores are recomputed from the mixers' taps in
// their quadratic form. Over training, each layer's relative standard deviation
// RSD = std_t(g_t) / mean_t(g_t) goes to summary.json.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "layers/attention/score_tap.h"

namespace tn {

/// mean |∂L/∂s_ij| of one tap after backward (its `out` carries the gradient). Throws ShapeError
/// when the tap's shapes disagree or `out` has no gradient. The same bits on any thread count.
double mean_abs_score_grad(const ScoreTap& tap);

class GradStats : public ScoreProbe {
 public:
  /// `mixers`: the mixer name of each layer, in order (labels of the output).
  explicit GradStats(std::vector<std::string> mixers) : mixers_(std::move(mixers)), series_(mixers_.size()) {}
  void take(ScoreTap tap) override { taps_.push_back(std::move(tap)); }
  /// After the step's backward: each layer's g_t (taps of several batches of the step are
  /// averaged per layer), appended to the series; releases the taps.
  std::vector<double> end_step();
  /// Drops the taps of a step that is not analysed.
  void discard() { taps_.clear(); }

  /// The summary: {"definition", "layers": [{"layer", "mixer", "mean", "std", "rsd", "n"}], "rsd_mean"}.
  nlohmann::json summary() const;
  /// The series so far, for a resumed run ({"series": [[g per step] per layer]}), and back.
  nlohmann::json state() const;
  void restore(const nlohmann::json& state);

 private:
  std::vector<std::string> mixers_;
  std::vector<std::vector<double>> series_;  // [layer][logged step]
  std::vector<ScoreTap> taps_;
};

}  // namespace tn
