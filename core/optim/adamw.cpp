#include "core/optim/adamw.h"

#include <cmath>

namespace tn {

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
  const float b1 = static_cast<float>(options_.beta1), b2 = static_cast<float>(options_.beta2);
  const float eps = static_cast<float>(options_.eps);
  for (size_t k = 0; k < params_.size(); ++k) {
    Var& var = params_[k].second;
    float* p = var->value.data();
    const int64_t n = var->value.numel();
    if (!var->has_grad()) var->grad_buf();
    const float* g = var->grad.data();
    float* m = exp_avg_[k].data();
    float* v = exp_avg_sq_[k].data();
#pragma omp parallel for simd schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) {
      p[i] *= decay;
      m[i] = b1 * m[i] + (1.0f - b1) * g[i];
      v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_bc2 + eps);
    }
  }
}

double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm) {
  double total = 0.0;
  for (const auto& [name, var] : params) {
    if (!var->has_grad()) continue;
    const float* g = var->grad.data();
    const int64_t n = var->grad.numel();
    double acc = 0.0;
#pragma omp parallel for reduction(+ : acc) schedule(static) if (n > 16384)
    for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(g[i]) * g[i];
    total += acc;
  }
  const double norm = std::sqrt(total);
  if (max_norm > 0 && norm > max_norm) {
    const float coef = static_cast<float>(max_norm / (norm + 1e-6));
    for (const auto& [name, var] : params) {
      if (!var->has_grad()) continue;
      float* g = var->grad.data();
      for (int64_t i = 0; i < var->grad.numel(); ++i) g[i] *= coef;
    }
  }
  return norm;
}

}  // namespace tn
