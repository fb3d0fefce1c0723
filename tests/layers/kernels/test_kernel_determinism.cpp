// Reproducibility of the attention kernels: every (batch, head[, block]) is computed by one thread
// with fixed-order arithmetic, so results are bit-identical for any thread count and across
// repeated calls; relative_position's d_theta sums fixed chunks of rows in order, so it is too.
#include <doctest/doctest.h>
#include <omp.h>

#include <functional>
#include <random>
#include <vector>

#include "layers/attention/kernels/cosformer_features.h"
#include "layers/attention/kernels/diag_attention.h"
#include "layers/attention/kernels/linear_attention.h"
#include "layers/attention/kernels/performer_features.h"
#include "layers/attention/kernels/relative_position.h"
#include "layers/attention/kernels/softmax_attention.h"
#include "tests/layers/kernels/kernel_test_utils.h"

using namespace tn;
using namespace tn::kernel_test;

namespace {

/// Runs f with 1, 2 and 3 threads (and twice with 2) and checks every run returns the same vector.
void check_thread_independent(const std::string& name,
                              const std::function<std::vector<float>()>& f) {
  const int saved = omp_get_max_threads();
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2, 3, 2}) {
    omp_set_num_threads(threads);
    runs.push_back(f());
  }
  omp_set_num_threads(saved);
  for (size_t r = 1; r < runs.size(); ++r)
    CHECK_MESSAGE(runs[r] == runs[0], name << ": run " << r << " differs");
}

template <class... V>
std::vector<float> concat(const V&... parts) {
  std::vector<float> all;
  all.reserve((parts.size() + ...));
  (all.insert(all.end(), parts.begin(), parts.end()), ...);
  return all;
}

}  // namespace

TEST_CASE("attention kernels: bit-identical results for any thread count") {
  std::mt19937 gen(51);
  const AttentionDims d{2, 37, 3, 16};
  const size_t n = size_t(attention_numel(d)), nd = size_t(d.batch * d.seq_len * d.n_heads);
  const std::vector<float> q = random_normal(n, gen), k = random_normal(n, gen),
                           v = random_normal(n, gen), g = random_normal(n, gen),
                           g_den = random_normal(nd, gen);
  std::vector<uint8_t> valid(size_t(d.batch * d.seq_len), 1);
  valid[5] = valid[40] = 0;

  for (bool causal : {true, false}) {
    CAPTURE(causal);
    check_thread_independent("linear_attention", [&] {
      std::vector<float> num(n), den(nd), dq(n), dk(n), dv(n);
      linear_attention_forward(d, causal, 8, q.data(), k.data(), v.data(), num.data(), den.data());
      linear_attention_backward(d, causal, 8, q.data(), k.data(), v.data(), g.data(), g_den.data(),
                                dq.data(), dk.data(), dv.data());
      return concat(num, den, dq, dk, dv);
    });
    for (DiagInnerKind inner : {DiagInnerKind::Relu, DiagInnerKind::Softmax})
      check_thread_independent("diag_attention", [&] {
        std::vector<float> out(n), probs(size_t(d.batch * d.n_heads * d.seq_len * 8)), dq(n), dk(n),
            dv(n);
        diag_attention_forward(d, 8, inner, causal, valid.data(), q.data(), k.data(), v.data(),
                               out.data(), probs.data());
        diag_attention_backward(d, 8, inner, causal, valid.data(), q.data(), k.data(), v.data(),
                                probs.data(), g.data(), dq.data(), dk.data(), dv.data());
        return concat(out, probs, dq, dk, dv);
      });
    check_thread_independent("softmax_attention", [&] {
      std::vector<float> out(n), probs(size_t(softmax_stats_floats(d))), dq(n),
          dk(n), dv(n);
      softmax_attention_forward(d, causal, valid.data(), q.data(), k.data(), v.data(), out.data(),
                                probs.data());
      softmax_attention_backward(d, causal, valid.data(), q.data(), k.data(), v.data(),
                                 probs.data(), g.data(), dq.data(), dk.data(), dv.data());
      return concat(out, probs, dq, dk, dv);
    });
  }
  const std::vector<float> theta = random_normal(size_t(d.d_head / 2), gen),
                           hv = random_normal(size_t(d.d_head), gen);
  check_thread_independent("relative_position (y, dx)", [&] {
    std::vector<float> y(n), dx(n);
    relative_position_forward(d, theta.data(), hv.data(), 8, q.data(), y.data());
    relative_position_backward(d, theta.data(), hv.data(), 8, q.data(), g.data(), dx.data(),
                               nullptr);
    return concat(y, dx);
  });
  const AttentionDims long_dims{3, 70, 3, 16};  // 210 rows: four chunks of d_theta's partial sums
  const size_t nl = size_t(attention_numel(long_dims));
  const std::vector<float> ql = random_normal(nl, gen), gl = random_normal(nl, gen);
  check_thread_independent("relative_position (d_theta)", [&] {
    std::vector<float> d_theta(theta.size(), 0.f), dx(nl);
    relative_position_backward(long_dims, theta.data(), hv.data(), 0, ql.data(), gl.data(),
                               dx.data(), d_theta.data());
    return concat(d_theta, dx);
  });
}

TEST_CASE(
    "attention kernels with d_key != d_head and the feature maps: bit-identical for any thread "
    "count") {
  std::mt19937 gen(52);
  const AttentionDims base{2, 37, 3, 16};
  const size_t n = size_t(attention_numel(base)), nd = size_t(base.batch * base.seq_len * 3);
  const std::vector<float> x = random_normal(n, gen), g = random_normal(n, gen),
                           g_den = random_normal(nd, gen);
  for (int64_t K : {32, 24}) {  // a compiled pair and a runtime width
    const AttentionDims d{2, 37, 3, 16, K};
    const size_t nk = size_t(attention_key_numel(d));
    const std::vector<float> q = random_normal(nk, gen), k = random_normal(nk, gen);
    for (bool causal : {true, false}) {
      CAPTURE(K);
      CAPTURE(causal);
      check_thread_independent("linear_attention (d_key)", [&] {
        std::vector<float> num(n), den(nd), dq(nk), dk(nk), dv(n);
        linear_attention_forward(d, causal, 8, q.data(), k.data(), x.data(), num.data(),
                                 den.data());
        linear_attention_backward(d, causal, 8, q.data(), k.data(), x.data(), g.data(),
                                  g_den.data(), dq.data(), dk.data(), dv.data());
        return concat(num, den, dq, dk, dv);
      });
    }
  }

  const int64_t m = 20;
  const std::vector<float> w = performer_orthogonal_features(base.n_heads, m, base.d_head, 3);
  const std::vector<float> g_phi = random_normal(size_t(m) * nd, gen);
  std::vector<uint8_t> valid(size_t(base.batch * base.seq_len), 1);
  valid[36] = valid[70] = 0;
  for (int mode = 0; mode < 3; ++mode) {  // query, encoder key, decoder key
    CAPTURE(mode);
    check_thread_independent("performer_features", [&] {
      std::vector<float> phi(size_t(m) * nd), stab(nd), dx(n);
      performer_features_forward(base, m, w.data(), mode == 0, mode == 2, valid.data(), 1e-4,
                                 x.data(), phi.data(), stab.data());
      performer_features_backward(base, m, w.data(), x.data(), phi.data(), 1e-4, g_phi.data(),
                                  dx.data());
      return concat(phi, stab, dx);
    });
  }
  const std::vector<int64_t> lengths = {37, 30};
  const std::vector<float> gy = random_normal(2 * n, gen);
  check_thread_independent("cosformer_features", [&] {
    std::vector<float> y(2 * n), dx(n);
    cosformer_features_forward(base, lengths.data(), x.data(), y.data());
    cosformer_features_backward(base, lengths.data(), x.data(), gy.data(), dx.data());
    return concat(y, dx);
  });
  CHECK(performer_orthogonal_features(3, m, 16, 3) == w);  // same seed, same features
}
