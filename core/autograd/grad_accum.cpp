#include "core/autograd/grad_accum.h"

#include "core/parallel.h"

namespace tn {

GradSink::GradSink(const Var& v) : var_(v) {
  if (!var_->has_grad()) {
    var_->grad = Tensor::empty(var_->value.shape());
    dst_ = var_->grad.data();
    committed_ = true;  // written in place
  } else {
    scratch_ = Tensor::empty(var_->value.shape());
    dst_ = scratch_.data();
  }
}

void GradSink::commit() {
  if (committed_) return;
  add_inplace(var_->grad.data(), scratch_.data(), scratch_.numel());
  committed_ = true;
}

GradSink::~GradSink() {
  if (!committed_) commit();
}

void add_inplace(float* y, const float* x, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n > kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float* grad_destination(const Var& v, bool& accumulate) {
  accumulate = v->has_grad();
  if (!accumulate) v->grad = Tensor::empty(v->value.shape());
  return v->grad.data();
}

}  // namespace tn
