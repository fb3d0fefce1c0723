// The paper's two analyses (docs/analysis.md): the closed-form ∂L/∂s_ij of the gradient
// statistics against central differences of the explicit quadratic form, and the locality
// accumulation l(r) on attention matrices whose answer is known by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/runtime/rng.h"
#include "experiments/analysis/grad_stats.h"
#include "experiments/analysis/locality.h"

using namespace tn;

namespace {

/// A tap of one sequence (batch 1) with random q, k (positive where a kernel map would make them
/// so), v, and out = the quadratic form's output, whose "gradient" is the weight vector w of
/// L = Σ w · out.
struct Case {
  int64_t seq = 7, heads = 2, w = 3;
  std::vector<float> q, k, v, wts;
  ScoreTap tap;
};

/// The output of `form` from explicit scores S (per head), row-major [seq, heads * w].
std::vector<double> explicit_out(const Case& c, const std::vector<double>& S, ScoreTap::Form form, bool relu) {
  std::vector<double> out(c.seq * c.heads * c.w, 0.0);
  for (int64_t h = 0; h < c.heads; ++h)
    for (int64_t i = 0; i < c.seq; ++i) {
      const int64_t lo = c.tap.block > 0 ? i / c.tap.block * c.tap.block : 0;
      const int64_t hi = c.tap.causal ? i : c.tap.block > 0 ? std::min(c.seq, (i / c.tap.block + 1) * c.tap.block) - 1 : c.seq - 1;
      double z = 0, mx = -1e300;
      for (int64_t j = lo; j <= hi; ++j) mx = std::max(mx, S[(h * c.seq + i) * c.seq + j]);
      std::vector<double> a(c.seq, 0.0);
      for (int64_t j = lo; j <= hi; ++j) {
        const double s = S[(h * c.seq + i) * c.seq + j];
        a[j] = form == ScoreTap::Form::Softmax ? std::exp(s - mx) : (relu ? std::max(s, 0.0) : s);
        z += a[j];
      }
      for (int64_t j = lo; j <= hi; ++j) {
        const double zz = form == ScoreTap::Form::Ratio ? std::max(z, static_cast<double>(c.tap.eps)) : z;
        const double p = form == ScoreTap::Form::Direct ? a[j] : a[j] / zz;
        for (int64_t d = 0; d < c.w; ++d) out[i * c.heads * c.w + h * c.w + d] += p * c.v[j * c.heads * c.w + h * c.w + d];
      }
    }
  return out;
}

double loss_of(const Case& c, const std::vector<double>& S, ScoreTap::Form form, bool relu) {
  const std::vector<double> o = explicit_out(c, S, form, relu);
  double l = 0;
  for (size_t i = 0; i < o.size(); ++i) l += c.wts[i] * o[i];
  return l;
}

Case make_case(ScoreTap::Form form, bool relu, bool causal, int64_t block) {
  Case c;
  Rng rng(7);
  const int64_t n = c.seq * c.heads * c.w;
  for (int64_t i = 0; i < n; ++i) {
    c.q.push_back(form == ScoreTap::Form::Ratio ? 0.2f + rng.uniform() : rng.uniform() * 2 - 1);
    c.k.push_back(form == ScoreTap::Form::Ratio ? 0.2f + rng.uniform() : rng.uniform() * 2 - 1);
    c.v.push_back(rng.uniform() * 2 - 1);
    c.wts.push_back(rng.uniform() * 2 - 1);
  }
  c.tap.form = form;
  c.tap.relu = relu;
  c.tap.causal = causal;
  c.tap.block = block;
  c.tap.n_heads = c.heads;
  const Shape shape{1, c.seq, c.heads * c.w};
  c.tap.q = make_var(Tensor::from(shape, c.q));
  c.tap.k = make_var(Tensor::from(shape, c.k));
  c.tap.v = make_var(Tensor::from(shape, c.v));
  return c;
}

/// Mean |∂L/∂s_ij| over the visible pairs by central differences on the explicit form.
double numeric_mean_abs(Case& c) {
  std::vector<double> S(c.heads * c.seq * c.seq, 0.0);
  for (int64_t h = 0; h < c.heads; ++h)
    for (int64_t i = 0; i < c.seq; ++i)
      for (int64_t j = 0; j < c.seq; ++j) {
        double s = 0;
        for (int64_t d = 0; d < c.w; ++d)
          s += static_cast<double>(c.q[i * c.heads * c.w + h * c.w + d]) * c.k[j * c.heads * c.w + h * c.w + d];
        S[(h * c.seq + i) * c.seq + j] = s;
      }
  const std::vector<double> o = explicit_out(c, S, c.tap.form, c.tap.relu);
  std::vector<float> of(o.begin(), o.end());
  c.tap.out = make_var(Tensor::from({1, c.seq, c.heads * c.w}, of));
  c.tap.out->grad() = Tensor::from({1, c.seq, c.heads * c.w}, c.wts);
  double total = 0;
  int64_t count = 0;
  const double eps = 1e-6;
  for (int64_t h = 0; h < c.heads; ++h)
    for (int64_t i = 0; i < c.seq; ++i)
      for (int64_t j = 0; j < c.seq; ++j) {
        if (c.tap.causal && j > i) continue;
        if (c.tap.block > 0 && i / c.tap.block != j / c.tap.block) continue;
        std::vector<double> plus = S, minus = S;
        plus[(h * c.seq + i) * c.seq + j] += eps;
        minus[(h * c.seq + i) * c.seq + j] -= eps;
        total += std::fabs((loss_of(c, plus, c.tap.form, c.tap.relu) - loss_of(c, minus, c.tap.form, c.tap.relu)) / (2 * eps));
        ++count;
      }
  return total / static_cast<double>(count);
}

}  // namespace

TEST_CASE("grad stats: the closed-form |dL/ds_ij| of each form equals central differences of the quadratic form") {
  struct Variant {
    const char* name;
    ScoreTap::Form form;
    bool relu, causal;
    int64_t block;
    float eps = 0;
  };
  for (const Variant& v : {Variant{"ratio causal (linear, performer, cosformer)", ScoreTap::Form::Ratio, false, true, 0},
                           Variant{"ratio bidirectional", ScoreTap::Form::Ratio, false, false, 0},
                           Variant{"ratio, denominators clamped at eps", ScoreTap::Form::Ratio, false, true, 0, 5.0f},
                           Variant{"direct (norm_attention before its norm)", ScoreTap::Form::Direct, false, true, 0},
                           Variant{"direct relu in blocks (diag T1)", ScoreTap::Form::Direct, true, true, 3},
                           Variant{"softmax causal", ScoreTap::Form::Softmax, false, true, 0},
                           Variant{"softmax in blocks (diag T2)", ScoreTap::Form::Softmax, false, false, 4}}) {
    const std::string name = v.name;
    CAPTURE(name);
    Case c = make_case(v.form, v.relu, v.causal, v.block);
    c.tap.eps = v.eps;
    const double numeric = numeric_mean_abs(c);
    CHECK(numeric > 1e-3);
    CHECK(mean_abs_score_grad(c.tap) == doctest::Approx(numeric).epsilon(1e-6));
  }
}

TEST_CASE("grad stats: per-layer series, RSD = std/mean with the sample std, and state round trip") {
  GradStats stats({"diag", "norm_attention"});
  Case a = make_case(ScoreTap::Form::Direct, false, true, 0);
  numeric_mean_abs(a);  // fills out and its gradient
  const double g = mean_abs_score_grad(a.tap);
  for (double scale : {1.0, 2.0, 3.0}) {
    ScoreTap t0 = a.tap, t1 = a.tap;
    t0.out = make_var(a.tap.out->value);
    t0.out->grad() = Tensor::from({1, a.seq, a.heads * a.w}, a.wts);
    std::vector<float> w2 = a.wts;
    for (float& x : w2) x *= static_cast<float>(scale);
    t1.out = make_var(a.tap.out->value);
    t1.out->grad() = Tensor::from({1, a.seq, a.heads * a.w}, w2);
    stats.begin_layer(0);
    stats.record(t0);
    stats.begin_layer(1);
    stats.record(t1);
    const std::vector<double> step = stats.end_step();
    REQUIRE(step.size() == 2);
    CHECK(step[0] == doctest::Approx(g));
    CHECK(step[1] == doctest::Approx(scale * g));
  }
  const nlohmann::json s = stats.summary();
  CHECK(s["layers"][0]["rsd"].get<double>() == doctest::Approx(0.0).epsilon(1e-9));
  // Layer 1: g, 2g, 3g: mean 2g, sample std g, RSD 0.5.
  CHECK(s["layers"][1]["rsd"].get<double>() == doctest::Approx(0.5));
  CHECK(s["layers"][1]["n"] == 3);
  CHECK(s["layers"][1]["mixer"] == "norm_attention");
  CHECK(s["rsd_mean"].get<double>() == doctest::Approx(0.25));
  GradStats back({"diag", "norm_attention"});
  back.restore(stats.state());
  CHECK(back.summary() == s);

  // Two taps of one layer (diag_norm_parallel's branches) are averaged: g and 3g give 2g.
  GradStats parallel({"diag_norm_parallel"});
  ScoreTap low = a.tap, high = a.tap;
  low.out = make_var(a.tap.out->value);
  low.out->grad() = Tensor::from({1, a.seq, a.heads * a.w}, a.wts);
  std::vector<float> w3 = a.wts;
  for (float& x : w3) x *= 3.0f;
  high.out = make_var(a.tap.out->value);
  high.out->grad() = Tensor::from({1, a.seq, a.heads * a.w}, w3);
  parallel.begin_layer(0);
  parallel.record(low);
  parallel.record(high);
  const std::vector<double> both = parallel.end_step();
  REQUIRE(both.size() == 1);
  CHECK(both[0] == doctest::Approx(2 * g));
}

TEST_CASE("locality: uniform attention gives l(r) = (floor(rN) + 1) / N, about r") {
  const int64_t n = 100;
  const std::vector<double> P(n * n, 1.0 / n);
  const std::vector<double> r = locality_grid(0.05);
  REQUIRE(r.size() == 21);
  CHECK(r.back() == 1.0);
  std::vector<double> sum(r.size(), 0.0);
  int64_t rows = 0;
  accumulate_locality(P, n, false, r, sum, rows);
  CHECK(rows == n);
  for (size_t k = 0; k < r.size(); ++k) {
    const double l = sum[k] / static_cast<double>(rows);
    CHECK(l == doctest::Approx(std::min(1.0, (std::floor(r[k] * n + 1e-9) + 1) / n)));
    CHECK(std::fabs(l - r[k]) <= 0.0101);
  }
  CHECK_THROWS(locality_grid(0));
  CHECK_THROWS(locality_grid(1.5));
}

TEST_CASE("locality: causal block-diagonal attention reaches l = 1 once the window covers the block") {
  const int64_t n = 64, b = 16;
  std::vector<double> P(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i / b * b; j <= i; ++j) P[i * n + j] = 1.0 / static_cast<double>(i - i / b * b + 1);
  const std::vector<double> r = locality_grid(1.0 / 64);
  std::vector<double> sum(r.size(), 0.0);
  int64_t rows = 0;
  accumulate_locality(P, n, true, r, sum, rows);
  double harmonic = 0;  // r = 0: the mean over a block's rows of 1 / (position in block + 1)
  for (int64_t p = 1; p <= b; ++p) harmonic += 1.0 / static_cast<double>(p);
  CHECK(sum[0] / rows == doctest::Approx(harmonic / b));
  for (size_t k = 0; k < r.size(); ++k) {
    const int64_t m = static_cast<int64_t>(std::floor(r[k] * n + 1e-9)) + 1;
    if (m >= b) CHECK(sum[k] / rows == doctest::Approx(1.0));
    else CHECK(sum[k] / rows < 1.0);
  }
}

TEST_CASE("locality: attention matrices from taps: softmax of equal scores is uniform, kernels are row-normalised |s|") {
  Case c = make_case(ScoreTap::Form::Softmax, false, true, 0);
  std::fill(c.q.begin(), c.q.end(), 0.0f);
  c.tap.q = make_var(Tensor::from({1, c.seq, c.heads * c.w}, c.q));
  const auto P = attention_matrices(c.tap);
  REQUIRE(P.size() == 2);
  for (int64_t i = 0; i < c.seq; ++i)
    for (int64_t j = 0; j < c.seq; ++j) CHECK(P[1][i * c.seq + j] == doctest::Approx(j <= i ? 1.0 / (i + 1) : 0.0));
  // A kernel tap: row 2 of head 0 is |s_2j| / Σ_j |s_2j| over j <= 2.
  Case r = make_case(ScoreTap::Form::Ratio, false, true, 0);
  const auto K = attention_matrices(r.tap);
  double s[3], z = 0;
  for (int64_t j = 0; j < 3; ++j) {
    s[j] = 0;
    for (int64_t d = 0; d < r.w; ++d) s[j] += static_cast<double>(r.q[2 * r.heads * r.w + d]) * r.k[j * r.heads * r.w + d];
    z += std::fabs(s[j]);
  }
  for (int64_t j = 0; j < 3; ++j) CHECK(K[0][2 * r.seq + j] == doctest::Approx(std::fabs(s[j]) / z));
  CHECK(K[0][2 * r.seq + 3] == 0.0);
}

namespace {
/// Keeps every tap of a forward with its layer.
class KeepTaps : public ScoreProbe {
 public:
  std::vector<ScoreTap> taps;

 protected:
  void take(ScoreTap tap) override { taps.push_back(std::move(tap)); }
};
}  // namespace

TEST_CASE("locality and taps: a diag_norm_parallel layer reports both branches, and its curve is their mean") {
  ModelConfig c;
  c.vocab_size = 40;
  c.d_model = 16;
  c.n_heads = 2;
  c.n_layers = 2;
  c.channel_mixer.d_ff = 32;
  c.attention.diag.block_size = 4;
  c.layers = {MixerKind::Diag, MixerKind::DiagNormParallel};
  TransNormerModel model(c, 3);
  const int64_t n = 16;
  std::vector<int32_t> tokens(n);
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((7 * i + 3) % c.vocab_size);

  // The taps of one forward: layer 0 (diag) once, layer 1 twice (its diag and norm branches).
  Tape tape;
  tape.set_enabled(false);
  Rng rng(0);
  KeepTaps probe;
  ForwardContext ctx{tape, false, rng, nullptr, &probe};
  model.forward(ctx, tokens, 1, n);
  REQUIRE(probe.taps.size() == 3);
  CHECK(probe.taps[0].layer == 0);
  CHECK(probe.taps[1].layer == 1);
  CHECK(probe.taps[2].layer == 1);
  CHECK(probe.taps[1].block == 4);  // the diag branch first
  CHECK(probe.taps[2].block == 0);  // then NormAttention

  // Each branch's curve by hand from its tap; the analysis gives layer 1 their mean.
  const std::vector<double> r = locality_grid(0.25);
  std::vector<std::vector<double>> branch(2, std::vector<double>(r.size(), 0.0));
  for (int b = 0; b < 2; ++b) {
    int64_t rows = 0;
    for (const std::vector<double>& P : attention_matrices(probe.taps[1 + b]))
      accumulate_locality(P, n, true, r, branch[b], rows);
    for (double& v : branch[b]) v /= static_cast<double>(rows);
  }
  const LocalityCurves curves = analyze_locality(model, tokens, n, 1, 0.25);
  REQUIRE(curves.layers.size() == 2);
  CHECK(curves.layers[1].mixer == "diag_norm_parallel");
  CHECK(branch[0][1] == doctest::Approx(1.0));  // the diag branch: a window of 5 covers a block of 4
  CHECK(branch[1][1] < 0.99);                     // NormAttention sees the whole causal row
  for (size_t k = 0; k < r.size(); ++k) {
    INFO(r[k]);
    CHECK(curves.layers[1].l[k] == doctest::Approx((branch[0][k] + branch[1][k]) / 2));
  }
}
