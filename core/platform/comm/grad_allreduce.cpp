#include "core/platform/comm/grad_allreduce.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace tn {

GradAllreduce::GradAllreduce(std::vector<std::pair<std::string, Var>> params, Communicator& comm)
    : params_(std::move(params)), comm_(comm), has_grad_(params_.size()) {
  int64_t total = 0;
  for (const auto& [name, var] : params_) total += var->value.numel();
  bucket_.resize(static_cast<size_t>(std::min(total, Communicator::kMaxSumFloats)));
  members_.reserve(params_.size());
}

void GradAllreduce::flush(int64_t filled) {
  comm_.sum(bucket_.data(), filled);
  int64_t at = 0;
  for (Var* var : members_) {
    const int64_t n = (*var)->grad().numel();
    std::memcpy((*var)->grad().data(), bucket_.data() + at, static_cast<size_t>(n) * sizeof(float));
    at += n;
  }
  members_.clear();
}

double GradAllreduce::run() {
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < params_.size(); ++i) has_grad_[i] = params_[i].second->has_grad() ? 1 : 0;
  comm_.sum(has_grad_.data(), static_cast<int64_t>(has_grad_.size()));
  const auto capacity = static_cast<int64_t>(bucket_.size());
  int64_t filled = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (has_grad_[i] == 0) continue;
    Var& var = params_[i].second;
    Tensor& grad = var->grad_buf();
    const int64_t n = grad.numel();
    if (n > capacity) {  // larger than a bucket: summed where it is, a bucket's size at a time
      for (int64_t at = 0; at < n; at += capacity) comm_.sum(grad.data() + at, std::min(capacity, n - at));
      continue;
    }
    if (filled + n > capacity) {
      flush(filled);
      filled = 0;
    }
    std::memcpy(bucket_.data() + filled, grad.data(), static_cast<size_t>(n) * sizeof(float));
    members_.push_back(&var);
    filled += n;
  }
  if (filled > 0) flush(filled);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tn
