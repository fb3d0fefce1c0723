#include "core/runtime/optim/adamw.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/parallel.h"

namespace tn {

namespace {

/// The per-step constants of AdamW's update (Loshchilov & Hutter 2019, Algorithm 2, with
/// PyTorch's bias corrections).
struct AdamWConsts {
  float decay, b1, b2, step_size, inv_sqrt_bc2, eps;
};

/// Entry i of one parameter's update: decoupled decay, the two moments, the step.
/// Always inlined, so each instruction-set clone of the spans below vectorises it at its width.
[[gnu::always_inline]] inline void adamw_entry(const AdamWConsts& c, int64_t i, float* __restrict p,
                                               float* __restrict m, float* __restrict v,
                                               const float* __restrict g) {
  p[i] *= c.decay;
  m[i] = c.b1 * m[i] + (1.0f - c.b1) * g[i];
  v[i] = c.b2 * v[i] + (1.0f - c.b2) * g[i] * g[i];
  p[i] -= c.step_size * m[i] / (std::sqrt(v[i]) * c.inv_sqrt_bc2 + c.eps);
}

/// Entries [begin, end) of one parameter's update (adamw_entry). Compiled per instruction set (core/runtime/math/isa_clones.h): the default build's baseline code runs
/// four floats at a time where the CPU has sixteen.
TN_ISA_CLONES void adamw_span(const AdamWConsts& c, int64_t begin, int64_t end, float* __restrict p,
                              float* __restrict m, float* __restrict v, const float* __restrict g) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    adamw_entry(c, i, p, m, v, g);
  }
}

/// adamw_span, and b = the updated values rounded to bf16 (round_to_bf16: the bits of oneDNN's
/// reorder) chunk by chunk while the chunk is in cache: the parameter's bf16 copy for the next
/// step's products.
TN_ISA_CLONES void adamw_bf16_span(const AdamWConsts& c, int64_t begin, int64_t end, float* __restrict p,
                                   float* __restrict m, float* __restrict v, const float* __restrict g,
                                   uint16_t* __restrict b) {
  constexpr int64_t kChunk = 1024;
  for (int64_t c0 = begin; c0 < end; c0 += kChunk) {
    const int64_t c1 = std::min(end, c0 + kChunk);
#pragma omp simd
    for (int64_t i = c0; i < c1; ++i) adamw_entry(c, i, p, m, v, g);
    round_to_bf16(p + c0, b + c0, c1 - c0);
  }
}

/// Σ g² over [begin, end), accumulated in double (compiled per instruction set).
TN_ISA_CLONES double sum_squares_span(const float* __restrict g, int64_t begin, int64_t end) {
  double acc = 0.0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = begin; i < end; ++i) acc += static_cast<double>(g[i]) * g[i];
  return acc;
}

/// g[begin, end) *= coef (compiled per instruction set).
TN_ISA_CLONES void scale_span(float* __restrict g, float coef, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) g[i] *= coef;
}

}  // namespace

AdamW::AdamW(std::vector<std::pair<std::string, Var>> params, AdamWOptions options)
    : params_(std::move(params)), options_(options) {
  for (auto& [name, var] : params_) {
    exp_avg_.push_back(Tensor::zeros(var->value.shape()));
    exp_avg_sq_.push_back(Tensor::zeros(var->value.shape()));
  }
}

void AdamW::step(double lr) {
  ++step_;
  const double bc1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_));
  const double bc2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_));
  const float step_size = static_cast<float>(lr / bc1);
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2));
  const float decay = static_cast<float>(1.0 - lr * options_.weight_decay);
  const AdamWConsts c{decay,
                      static_cast<float>(options_.beta1),
                      static_cast<float>(options_.beta2),
                      step_size,
                      inv_sqrt_bc2,
                      static_cast<float>(options_.eps)};
  for (size_t k = 0; k < params_.size(); ++k) {
    Var& var = params_[k].second;
    float* p = var->value.data();
    const int64_t n = var->value.numel();
    if (!var->has_grad()) var->grad_buf();
    const float* g = var->grad().data();
    float* m = exp_avg_[k].data();
    float* v = exp_avg_sq_[k].data();
    if (!var->bf16_copy) {
      parallel_spans(n, 16384, [&](int64_t begin, int64_t end) { adamw_span(c, begin, end, p, m, v, g); });
      continue;
    }
    // A parameter with a bf16 copy (precision bf16) gets it rewritten in the same pass; a copy
    // that someone still holds is left to them and replaced.
    if (var->bf16_copy.use_count() > 1 || var->bf16_copy->size() != n) var->bf16_copy = std::make_shared<Bf16Buffer>(n);
    uint16_t* b = var->bf16_copy->data();
    parallel_spans(n, 16384, [&](int64_t begin, int64_t end) { adamw_bf16_span(c, begin, end, p, m, v, g, b); });
    var->bf16_current = true;
  }
}

double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm) {
  double total = 0.0;
  for (const auto& [name, var] : params) {
    if (!var->has_grad()) continue;
    const float* g = var->grad().data();
    const int64_t n = var->grad().numel();
    total += parallel_sum(n, 16384, [&](int64_t begin, int64_t end) { return sum_squares_span(g, begin, end); });
  }
  const double norm = std::sqrt(total);
  if (max_norm > 0 && norm > max_norm) {
    const float coef = static_cast<float>(max_norm / (norm + 1e-6));
    for (const auto& [name, var] : params) {
      if (!var->has_grad()) continue;
      float* g = var->grad().data();
      parallel_spans(var->grad().numel(), kParallelMinElements,
                     [&](int64_t begin, int64_t end) { scale_span(g, coef, begin, end); });
    }
  }
  return norm;
}

}  // namespace tn
