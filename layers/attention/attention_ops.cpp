#include "layers/attention/attention_ops.h"

#include <algorithm>
#include <cstring>

#include "core/runtime/autograd/grad_accum.h"
#include "core/error.h"
#include "core/runtime/parallel.h"
#include "layers/attention/kernels/cosformer_features.h"
#include "layers/attention/kernels/linear_attention.h"
#include "layers/attention/kernels/performer_features.h"
#include "layers/attention/kernels/relative_position.h"
#include "layers/attention/kernels/softmax_attention.h"

namespace tn {
namespace {

AttentionDims dims_of(const Var& x, int64_t n_heads) {
  const Tensor& t = x->value;
  if (t.ndim() != 3 || t.dim(2) % n_heads)
    throw ShapeError("[attention] expected [batch, seq_len, d_model] divisible by " +
                     std::to_string(n_heads) + " heads, got " + shape_str(t.shape()));
  return {t.dim(0), t.dim(1), n_heads, t.dim(2) / n_heads};
}

void check_same(const Var& a, const Var& b) {
  if (a->value.shape() != b->value.shape())
    throw ShapeError("[attention] q/k/v shapes differ: " + shape_str(a->value.shape()) + " vs " +
                     shape_str(b->value.shape()));
}

const uint8_t* mask_ptr(const std::vector<uint8_t>* key_valid, const AttentionDims& d) {
  if (!key_valid) return nullptr;
  if (static_cast<int64_t>(key_valid->size()) != d.batch * d.seq_len)
    throw ShapeError("[attention] key_valid has " + std::to_string(key_valid->size()) +
                     " entries, expected batch*seq_len = " + std::to_string(d.batch * d.seq_len));
  return key_valid->data();
}

/// Adds (or moves) a freshly computed gradient g into v's gradient.
void deliver(const Var& v, Tensor& g) {
  if (!v->requires_grad) return;
  if (!v->has_grad())
    v->grad() = g;
  else
    add_inplace(v->grad().data(), g.data(), g.numel());
}

/// Runs the three-gradient kernel backward into q, k, v.
template <typename F>
void deliver_qkv(const Var& q, const Var& k, const Var& v, F&& kernel_backward) {
  Tensor dq = Tensor::empty(q->value.shape()), dk = Tensor::empty(k->value.shape()),
         dv = Tensor::empty(v->value.shape());
  kernel_backward(dq.data(), dk.data(), dv.data());
  deliver(q, dq);
  deliver(k, dk);
  deliver(v, dv);
}

}  // namespace

LinearAttentionOut linear_attention(Tape& tape, const Var& q, const Var& k, const Var& v,
                                    int64_t n_heads, bool causal, int64_t chunk, bool with_den) {
  check_same(q, k);
  AttentionDims d = dims_of(v, n_heads);
  if (q->value.ndim() != 3 || q->value.dim(0) != d.batch || q->value.dim(1) != d.seq_len ||
      q->value.dim(2) % n_heads)
    throw ShapeError("[linear_attention] q " + shape_str(q->value.shape()) + " does not fit v " +
                     shape_str(v->value.shape()));
  d.d_key = q->value.dim(2) / n_heads;
  Tensor num = Tensor::empty(v->value.shape());
  Tensor den;
  if (with_den) den = Tensor::empty({d.batch, d.seq_len, d.n_heads});
  linear_attention_forward(d, causal, chunk, q->value.data(), k->value.data(), v->value.data(),
                           num.data(), with_den ? den.data() : nullptr);
  LinearAttentionOut out{make_var(std::move(num)), with_den ? make_var(std::move(den)) : nullptr};
  if (!tape.needs_grad({&q, &k, &v})) return out;
  out.num->requires_grad = true;
  if (out.den) out.den->requires_grad = true;
  // The outputs' values are read by no backward here: their gradients only.
  tape.record([q, k, v, num_ref = GradRef(out.num), den_ref = GradRef(out.den), d, causal, chunk]() {
    const bool has_num = num_ref.has_grad();
    const bool has_den = den_ref && den_ref.has_grad();
    if (!has_num && !has_den) return;
    Tensor zero_num;
    if (!has_num) zero_num = Tensor::zeros(num_ref.shape());
    const float* d_num = has_num ? num_ref.grad().data() : zero_num.data();
    const float* d_den = has_den ? den_ref.grad().data() : nullptr;
    deliver_qkv(q, k, v, [&](float* dq, float* dk, float* dv) {
      linear_attention_backward(d, causal, chunk, q->value.data(), k->value.data(),
                                v->value.data(), d_num, d_den, dq, dk, dv);
    });
  });
  return out;
}

Var divide_by_denominator(Tape& tape, const Var& num, const Var& den, float eps) {
  const int64_t rows = den->value.numel();  // B*T*H
  const int64_t dh = num->value.numel() / rows;
  Tensor y = Tensor::empty(num->value.shape());
  const float* np = num->value.data();
  const float* dp = den->value.data();
  float* yp = y.data();
#pragma omp parallel for schedule(static) if (rows * dh > kParallelMinElements)
  for (int64_t r = 0; r < rows; ++r) {
    const float inv = 1.0f / std::max(dp[r], eps);
    for (int64_t j = 0; j < dh; ++j) yp[r * dh + j] = np[r * dh + j] * inv;
  }
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&num, &den})) return result;
  result->requires_grad = true;
  // The backward reads y = num / den, not num: num goes back to the pool after the forward.
  tape.record([dnum = GradRef(num), den, result, rows, dh, eps]() {
    if (!result->has_grad()) return;
    const float* dy = result->grad().data();
    const float* yp = result->value.data();
    const float* dp = den->value.data();
    if (dnum.requires_grad()) {
      GradSink dn(dnum);
      float* out = dn.data();
      for (int64_t r = 0; r < rows; ++r) {
        const float inv = 1.0f / std::max(dp[r], eps);
        for (int64_t j = 0; j < dh; ++j) out[r * dh + j] = dy[r * dh + j] * inv;
      }
    }
    if (den->requires_grad) {  // ∂y/∂den = −num/den² = −y/den where den ≥ eps
      GradSink dd(den);
      float* out = dd.data();
      for (int64_t r = 0; r < rows; ++r) {
        if (dp[r] < eps) {  // clamped: the max passes no gradient to den
          out[r] = 0.0f;
          continue;
        }
        float dot = 0.0f;
        for (int64_t j = 0; j < dh; ++j) dot += dy[r * dh + j] * yp[r * dh + j];
        out[r] = -dot / dp[r];
      }
    }
  });
  return result;
}

Var diag_attention(Tape& tape, const Var& q, const Var& k, const Var& v, int64_t n_heads,
                   int64_t block_size, DiagInnerKind inner, bool causal,
                   const std::vector<uint8_t>* key_valid, float dropout_p, uint64_t dropout_key) {
  check_same(q, k);
  check_same(q, v);
  const AttentionDims d = dims_of(q, n_heads);
  // A block at least as long as the sequence is the whole sequence, one block either way (the
  // dropout entries do not depend on the block width): its probabilities are kept [T, T], not
  // [T, block_size], so a config's block_size of 10^6, or 2^62, sizes nothing.
  if (block_size >= d.seq_len) block_size = std::max<int64_t>(d.seq_len, 1);
  const uint8_t* mask = mask_ptr(key_valid, d);
  Tensor out = Tensor::empty(q->value.shape());
  Tensor probs = Tensor::empty({d.batch, d.n_heads, d.seq_len, block_size});
  diag_attention_forward(d, block_size, inner, causal, mask, q->value.data(), k->value.data(),
                         v->value.data(), out.data(), probs.data(), dropout_p, dropout_key);
  Var result = make_var(std::move(out));
  if (!tape.needs_grad({&q, &k, &v})) return result;
  result->requires_grad = true;
  std::vector<uint8_t> mask_copy;
  if (key_valid) mask_copy = *key_valid;
  tape.record([q, k, v, dy_ref = GradRef(result), probs, d, block_size, inner, causal, mask_copy, dropout_p,
               dropout_key]() {
    if (!dy_ref.has_grad()) return;
    const uint8_t* mask = mask_copy.empty() ? nullptr : mask_copy.data();
    deliver_qkv(q, k, v, [&](float* dq, float* dk, float* dv) {
      diag_attention_backward(d, block_size, inner, causal, mask, q->value.data(), k->value.data(),
                              v->value.data(), probs.data(), dy_ref.grad().data(), dq, dk, dv,
                              dropout_p, dropout_key);
    });
  });
  return result;
}

Var softmax_attention(Tape& tape, const Var& q, const Var& k, const Var& v, int64_t n_heads,
                      bool causal, const std::vector<uint8_t>* key_valid, float dropout_p,
                      uint64_t dropout_key) {
  check_same(q, k);
  check_same(q, v);
  const AttentionDims d = dims_of(q, n_heads);
  const uint8_t* mask = mask_ptr(key_valid, d);
  Tensor out = Tensor::empty(q->value.shape());
  Tensor stats = Tensor::empty({d.batch, d.n_heads, d.seq_len, 2});  // no T×T matrix
  softmax_attention_forward(d, causal, mask, q->value.data(), k->value.data(), v->value.data(),
                            out.data(), stats.data(), dropout_p, dropout_key);
  Var result = make_var(std::move(out));
  if (!tape.needs_grad({&q, &k, &v})) return result;
  result->requires_grad = true;
  std::vector<uint8_t> mask_copy;
  if (key_valid) mask_copy = *key_valid;
  tape.record([q, k, v, dy_ref = GradRef(result), stats, d, causal, mask_copy, dropout_p, dropout_key]() {
    if (!dy_ref.has_grad()) return;
    const uint8_t* mask = mask_copy.empty() ? nullptr : mask_copy.data();
    deliver_qkv(q, k, v, [&](float* dq, float* dk, float* dv) {
      softmax_attention_backward(d, causal, mask, q->value.data(), k->value.data(),
                                 v->value.data(), stats.data(), dy_ref.grad().data(), dq, dk, dv,
                                 dropout_p, dropout_key);
    });
  });
  return result;
}

Var relative_position(Tape& tape, const Var& x, int64_t n_heads, const Var& theta,
                      const Var& householder, int64_t period, int64_t offset) {
  const AttentionDims d = dims_of(x, n_heads);
  if (theta->value.numel() != d.d_head / 2)
    throw ShapeError("[relative_position] theta has " + std::to_string(theta->value.numel()) +
                     " entries, expected d_head/2 = " + std::to_string(d.d_head / 2));
  Tensor y = Tensor::empty(x->value.shape());
  const float* hh = householder ? householder->value.data() : nullptr;
  relative_position_forward(d, theta->value.data(), hh, period, x->value.data(), y.data(),
                            offset);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x, &theta})) return result;
  result->requires_grad = true;
  tape.record([x, theta, householder, result, d, period, offset]() {
    if (!result->has_grad()) return;
    const float* hh = householder ? householder->value.data() : nullptr;
    float* d_theta = theta->requires_grad ? theta->grad_buf().data() : nullptr;
    Tensor dx = Tensor::empty(x->value.shape());
    relative_position_backward(d, theta->value.data(), hh, period, x->value.data(),
                               result->grad().data(), dx.data(), d_theta, offset);
    deliver(x, dx);
  });
  return result;
}

Var performer_features(Tape& tape, const Var& x, int64_t n_heads, const Var& features,
                       bool is_query, bool causal, double feature_eps,
                       const std::vector<uint8_t>* key_valid) {
  const AttentionDims d = dims_of(x, n_heads);
  const int64_t m = features->value.dim(1);
  Tensor phi = Tensor::empty({d.batch, d.seq_len, n_heads * m});
  Tensor stabiliser = Tensor::empty({d.batch, d.seq_len, n_heads});
  performer_features_forward(d, m, features->value.data(), is_query, causal, mask_ptr(key_valid, d),
                             feature_eps, x->value.data(), phi.data(), stabiliser.data());
  Var result = make_var(std::move(phi));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, features, result, d, m, feature_eps]() {
    if (!result->has_grad()) return;
    Tensor dx = Tensor::empty(x->value.shape());
    performer_features_backward(d, m, features->value.data(), x->value.data(),
                                result->value.data(), feature_eps, result->grad().data(), dx.data());
    deliver(x, dx);
  });
  return result;
}

Var cosformer_features(Tape& tape, const Var& x, int64_t n_heads,
                       const std::vector<uint8_t>* key_valid) {
  const AttentionDims d = dims_of(x, n_heads);
  std::vector<int64_t> lengths;
  if (const uint8_t* mask = mask_ptr(key_valid, d)) {
    for (int64_t b = 0; b < d.batch; ++b) {
      int64_t n = 0;
      for (int64_t t = 0; t < d.seq_len; ++t) n += mask[b * d.seq_len + t] != 0;
      lengths.push_back(n);
    }
  }
  Tensor y = Tensor::empty({d.batch, d.seq_len, 2 * x->value.dim(2)});
  cosformer_features_forward(d, lengths.empty() ? nullptr : lengths.data(), x->value.data(), y.data());
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([x, dy_ref = GradRef(result), d, lengths]() {
    if (!dy_ref.has_grad()) return;
    Tensor dx = Tensor::empty(x->value.shape());
    cosformer_features_backward(d, lengths.empty() ? nullptr : lengths.data(), x->value.data(),
                                dy_ref.grad().data(), dx.data());
    deliver(x, dx);
  });
  return result;
}

Var mask_rows(Tape& tape, const Var& x, const std::vector<uint8_t>* key_valid) {
  if (!key_valid) return x;
  const int64_t rows = x->value.dim(0) * x->value.dim(1), width = x->value.dim(2);
  if (static_cast<int64_t>(key_valid->size()) != rows)
    throw ShapeError("[mask_rows] key_valid size mismatch");
  // A batch without padding masks nothing: no copy, which would be held for the backward.
  if (std::all_of(key_valid->begin(), key_valid->end(), [](uint8_t valid) { return valid != 0; })) return x;
  Tensor y = x->value.clone();
  for (int64_t r = 0; r < rows; ++r)
    if (!(*key_valid)[r]) std::memset(y.data() + r * width, 0, sizeof(float) * width);
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  std::vector<uint8_t> mask = *key_valid;
  tape.record([dx_ref = GradRef(x), dy_ref = GradRef(result), mask, rows, width]() {
    if (!dy_ref.has_grad()) return;
    GradSink dx(dx_ref);
    std::memcpy(dx.data(), dy_ref.grad().data(), sizeof(float) * rows * width);
    for (int64_t r = 0; r < rows; ++r)
      if (!mask[r]) std::memset(dx.data() + r * width, 0, sizeof(float) * width);
  });
  return result;
}

}  // namespace tn
