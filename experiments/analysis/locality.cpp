#include "experiments/analysis/locality.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "experiments/analysis/score_mask.h"

namespace tn {
namespace {

/// Collects the taps of one forward.
class TapCollector : public ScoreProbe {
 public:
  std::vector<ScoreTap> taps;

 protected:
  void take(ScoreTap tap) override { taps.push_back(std::move(tap)); }
};

}  // namespace

std::vector<double> locality_grid(double step) {
  if (!(step > 0 && step <= 1)) throw ConfigError("--r-step must be in (0, 1], got " + std::to_string(step));
  std::vector<double> r;
  const int64_t n = static_cast<int64_t>(std::ceil(1.0 / step - 1e-9));
  for (int64_t i = 0; i < n; ++i) r.push_back(static_cast<double>(i) * step);
  r.push_back(1.0);
  return r;
}

void accumulate_locality(const std::vector<double>& P, int64_t seq, bool causal, const std::vector<double>& r,
                         std::vector<double>& sum, int64_t& rows) {
  for (int64_t i = 0; i < seq; ++i) {
    const double* row = P.data() + i * seq;
    double mass = 0;
    for (int64_t j = 0; j < seq; ++j) mass += row[j];
    if (mass == 0) continue;  // a padded query
    for (size_t k = 0; k < r.size(); ++k) {
      // m = floor(r·N) + 1 positions: {i} at r = 0, the whole row at r = 1.
      const int64_t m = std::min<int64_t>(seq, static_cast<int64_t>(std::floor(r[k] * static_cast<double>(seq) + 1e-9)) + 1);
      int64_t lo, hi;
      if (causal) {
        lo = std::max<int64_t>(0, i - (m - 1));
        hi = i;
      } else {  // centred on i, slid inward at the ends of the sequence so it keeps m positions
        lo = std::clamp<int64_t>(i - (m - 1) / 2, 0, seq - m);
        hi = lo + m - 1;
      }
      double l = 0;
      for (int64_t j = lo; j <= hi; ++j) l += row[j];
      sum[k] += l;
    }
    ++rows;
  }
}

std::vector<std::vector<double>> attention_matrices(const ScoreTap& t) {
  const Tensor& q = t.q->value;
  const Tensor& k = t.k->value;
  const int64_t batch = q.dim(0), seq = q.dim(1), heads = t.n_heads, w = q.dim(2) / heads;
  std::vector<std::vector<double>> out(batch * heads, std::vector<double>(seq * seq, 0.0));
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      std::vector<double>& P = out[b * heads + h];
      for (int64_t i = 0; i < seq; ++i) {
        if (t.key_valid && !(*t.key_valid)[b * seq + i]) continue;
        const float* qi = q.data() + (b * seq + i) * q.dim(2) + h * w;
        double* row = P.data() + i * seq;
        double max_s = -INFINITY;
        for (int64_t j = 0; j < seq; ++j) {
          if (!key_visible(t, b, seq, i, j)) continue;
          const float* kj = k.data() + (b * seq + j) * k.dim(2) + h * w;
          double s = 0;
          for (int64_t c = 0; c < w; ++c) s += static_cast<double>(qi[c]) * kj[c];
          row[j] = s;
          max_s = std::max(max_s, s);
        }
        double z = 0;
        for (int64_t j = 0; j < seq; ++j) {
          if (!key_visible(t, b, seq, i, j)) continue;
          if (t.form == ScoreTap::Form::Softmax) row[j] = std::exp(row[j] - max_s);
          else if (t.relu) row[j] = std::max(row[j], 0.0);
          else row[j] = std::fabs(row[j]);
          z += row[j];
        }
        for (int64_t j = 0; j < seq; ++j) row[j] = z > 0 ? row[j] / z : 0.0;
      }
    }
  }
  return out;
}

nlohmann::json LocalityCurves::to_json() const {
  nlohmann::json layer_list = nlohmann::json::array();
  for (const Layer& l : layers) layer_list.push_back({{"layer", l.layer}, {"mixer", l.mixer}, {"l", l.l}});
  return {{"seq_len", seq_len}, {"r", r}, {"layers", layer_list}, {"mean", mean}};
}

LocalityCurves analyze_locality(TransNormerModel& model, const std::vector<int32_t>& stream, int64_t seq_len,
                                int64_t samples, double r_step) {
  const int64_t blocks = std::min<int64_t>(samples, static_cast<int64_t>(stream.size()) / seq_len);
  if (blocks < 1)
    throw DataError("the data holds " + std::to_string(stream.size()) + " tokens, less than one sample of --seq-len " +
                    std::to_string(seq_len) + "; lower --seq-len or give more text");
  LocalityCurves out;
  out.seq_len = seq_len;
  out.r = locality_grid(r_step);
  const int64_t n_layers = static_cast<int64_t>(model.config().layers.size());
  // [layer][branch]: a layer's taps in one forward are its branches (two for diag_norm_parallel).
  std::vector<std::vector<std::vector<double>>> sums(n_layers);
  std::vector<std::vector<int64_t>> rows(n_layers);
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  for (int64_t s = 0; s < blocks; ++s) {  // one sample at a time: P is seq_len² per head
    TapCollector collector;
    ForwardContext ctx{tape, false, rng, nullptr, &collector};
    const std::vector<int32_t> tokens(stream.begin() + s * seq_len, stream.begin() + (s + 1) * seq_len);
    model.forward(ctx, tokens, 1, seq_len);
    std::vector<size_t> branch(n_layers, 0);
    for (const ScoreTap& tap : collector.taps) {
      if (tap.layer < 0 || tap.layer >= n_layers) continue;
      const size_t b = branch[tap.layer]++;
      if (sums[tap.layer].size() <= b) {
        sums[tap.layer].emplace_back(out.r.size(), 0.0);
        rows[tap.layer].push_back(0);
      }
      for (const std::vector<double>& P : attention_matrices(tap))
        accumulate_locality(P, seq_len, tap.causal, out.r, sums[tap.layer][b], rows[tap.layer][b]);
    }
  }
  out.mean.assign(out.r.size(), 0.0);
  for (int64_t l = 0; l < n_layers; ++l) {
    LocalityCurves::Layer layer{l, to_string(model.config().layers[l]), {}};
    for (size_t k = 0; k < out.r.size(); ++k) {  // each branch's rows pooled over samples; branches averaged
      double sum = 0;
      for (size_t b = 0; b < sums[l].size(); ++b)
        sum += rows[l][b] > 0 ? sums[l][b][k] / static_cast<double>(rows[l][b]) : 0.0;
      layer.l.push_back(sums[l].empty() ? 0.0 : sum / static_cast<double>(sums[l].size()));
      out.mean[k] += layer.l.back() / static_cast<double>(n_layers);
    }
    out.layers.push_back(std::move(layer));
  }
  return out;
}

}  // namespace tn
