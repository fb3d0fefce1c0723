#include "experiments/analysis/grad_stats.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "experiments/analysis/score_mask.h"

namespace tn {
namespace {

/// Whether row i may see key j, and row i is a real token (padded queries have no scores).
bool allowed(const ScoreTap& t, int64_t b, int64_t seq, int64_t i, int64_t j) {
  return key_visible(t, b, seq, i, j) && (!t.key_valid || (*t.key_valid)[b * seq + i]);
}

}  // namespace

double mean_abs_score_grad(const ScoreTap& t) {
  const Tensor& q = t.q->value;
  const Tensor& k = t.k->value;
  const Tensor& v = t.v->value;
  const Tensor& o = t.out->value;
  if (!t.out->has_grad()) throw ShapeError("[grad_stats] the tapped output has no gradient: run backward first");
  const Tensor& g = t.out->grad();
  const int64_t batch = q.dim(0), seq = q.dim(1), heads = t.n_heads;
  const int64_t wq = q.dim(2) / heads, wv = v.dim(2) / heads;
  if (k.dim(2) != q.dim(2) || o.dim(2) != v.dim(2) || k.dim(1) != seq || v.dim(1) != seq)
    throw ShapeError("[grad_stats] tap shapes disagree: q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) +
                     ", v " + shape_str(v.shape()) + ", out " + shape_str(o.shape()));
  // One sum per (batch, head), added in order after the loop: the same bits on any thread count.
  std::vector<double> totals(static_cast<size_t>(batch * heads), 0.0);
  std::vector<int64_t> counts(static_cast<size_t>(batch * heads), 0);
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      double total = 0;
      int64_t count = 0;
      std::vector<double> s(seq), gv(seq);
      for (int64_t i = 0; i < seq; ++i) {
        const float* qi = q.data() + (b * seq + i) * q.dim(2) + h * wq;
        const float* gi = g.data() + (b * seq + i) * o.dim(2) + h * wv;
        const float* oi = o.data() + (b * seq + i) * o.dim(2) + h * wv;
        double go = 0;  // g_i · o_i
        for (int64_t c = 0; c < wv; ++c) go += static_cast<double>(gi[c]) * oi[c];
        double z = 0, max_s = -INFINITY;
        for (int64_t j = 0; j < seq; ++j) {
          if (!allowed(t, b, seq, i, j)) continue;
          const float* kj = k.data() + (b * seq + j) * k.dim(2) + h * wq;
          const float* vj = v.data() + (b * seq + j) * v.dim(2) + h * wv;
          double sij = 0, gvij = 0;
          for (int64_t c = 0; c < wq; ++c) sij += static_cast<double>(qi[c]) * kj[c];
          for (int64_t c = 0; c < wv; ++c) gvij += static_cast<double>(gi[c]) * vj[c];
          s[j] = sij;
          gv[j] = gvij;
          z += sij;
          max_s = std::max(max_s, sij);
        }
        double softmax_z = 0;
        if (t.form == ScoreTap::Form::Softmax)
          for (int64_t j = 0; j < seq; ++j)
            if (allowed(t, b, seq, i, j)) softmax_z += std::exp(s[j] - max_s);
        for (int64_t j = 0; j < seq; ++j) {
          if (!allowed(t, b, seq, i, j)) continue;
          double d = 0;
          switch (t.form) {
            case ScoreTap::Form::Ratio:  // ∂(Σ s v / max(Σ s, eps))/∂s_ij; a clamped denominator is a constant
              d = z > t.eps ? (gv[j] - go) / z : gv[j] / t.eps;
              break;
            case ScoreTap::Form::Direct: d = (t.relu && s[j] <= 0) ? 0.0 : gv[j]; break;     // ∂(Σ a(s) v)/∂s_ij
            case ScoreTap::Form::Softmax: d = std::exp(s[j] - max_s) / softmax_z * (gv[j] - go); break;
          }
          total += std::fabs(d);
          ++count;
        }
      }
      totals[static_cast<size_t>(b * heads + h)] = total;
      counts[static_cast<size_t>(b * heads + h)] = count;
    }
  }
  double total = 0;
  int64_t count = 0;
  for (size_t i = 0; i < totals.size(); ++i) {
    total += totals[i];
    count += counts[i];
  }
  return count > 0 ? total / static_cast<double>(count) : 0.0;
}

std::vector<double> GradStats::end_step() {
  std::vector<double> sum(mixers_.size(), 0.0);
  std::vector<int> n(mixers_.size(), 0);
  for (const ScoreTap& tap : taps_) {  // a layer's taps (several forwards, or two branches) averaged
    const size_t layer = static_cast<size_t>(tap.layer) % mixers_.size();
    sum[layer] += mean_abs_score_grad(tap);
    ++n[layer];
  }
  taps_.clear();
  std::vector<double> out(mixers_.size(), 0.0);
  for (size_t l = 0; l < out.size(); ++l) {
    out[l] = n[l] > 0 ? sum[l] / n[l] : 0.0;
    series_[l].push_back(out[l]);
  }
  return out;
}

nlohmann::json GradStats::summary() const {
  nlohmann::json layers = nlohmann::json::array();
  double rsd_sum = 0;
  for (size_t l = 0; l < series_.size(); ++l) {
    const std::vector<double>& x = series_[l];
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= std::max<size_t>(1, x.size());
    for (double v : x) var += (v - mean) * (v - mean);
    const double std = x.size() > 1 ? std::sqrt(var / static_cast<double>(x.size() - 1)) : 0.0;
    const double rsd = mean > 0 ? std / mean : 0.0;
    rsd_sum += rsd;
    layers.push_back({{"layer", l}, {"mixer", mixers_[l]}, {"mean", mean}, {"std", std}, {"rsd", rsd}, {"n", x.size()}});
  }
  return {{"definition",
           "per layer and logged step: mean over batch, heads and visible (i, j) of |dL/ds_ij|, s_ij the score before "
           "normalisation; rsd = std_t / mean_t over the logged steps (ours: the paper leaves it open; docs/analysis.md)"},
          {"layers", layers},
          {"rsd_mean", series_.empty() ? 0.0 : rsd_sum / static_cast<double>(series_.size())}};
}

nlohmann::json GradStats::state() const { return {{"series", series_}}; }

void GradStats::restore(const nlohmann::json& state) {
  if (state.is_null() || !state.contains("series")) return;
  series_ = state["series"].get<std::vector<std::vector<double>>>();
  series_.resize(mixers_.size());
}

}  // namespace tn
