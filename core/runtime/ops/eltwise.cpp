#include "core/runtime/ops/eltwise.h"

#include <memory>

#include "core/runtime/autograd/grad_accum.h"
#include "core/error.h"
#include "core/runtime/parallel.h"
#include "core/runtime/dnnl/engine.h"
#include "core/runtime/dnnl/primitive_cache.h"
#include "core/runtime/math/vec.h"

namespace tn {
namespace {

using dnnl::algorithm;
using dnnl::memory;

algorithm algorithm_of(Eltwise kind) {
  switch (kind) {
    case Eltwise::Elu:
    case Eltwise::OnePlusElu: return algorithm::eltwise_elu;
    case Eltwise::Relu: return algorithm::eltwise_relu;
    case Eltwise::Silu: return algorithm::eltwise_swish;
    case Eltwise::Gelu: return algorithm::eltwise_gelu_erf;
    case Eltwise::Tanh: return algorithm::eltwise_tanh;
    case Eltwise::Identity: return algorithm::eltwise_linear;
  }
  return algorithm::eltwise_linear;
}

float alpha_of(Eltwise kind) {
  switch (kind) {
    case Eltwise::Elu:
    case Eltwise::OnePlusElu:
    case Eltwise::Silu:
    case Eltwise::Identity: return 1.0f;
    default: return 0.0f;
  }
}

struct Prims {
  memory::desc md;
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward bwd;
};

struct PrimsKey {
  Eltwise kind;
  int64_t n;
  bool operator==(const PrimsKey&) const = default;
};

struct PrimsKeyHash {
  size_t operator()(const PrimsKey& k) const {
    return hash_mix(std::hash<int>()(static_cast<int>(k.kind)), std::hash<int64_t>()(k.n));
  }
};

std::shared_ptr<const Prims> prims_for(Eltwise kind, int64_t n) {
  static PrimitiveCache<PrimsKey, Prims, PrimsKeyHash> cache;
  return cache.get({kind, n}, [kind, n] {
    auto& eng = cpu_engine();
    memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
    const algorithm alg = algorithm_of(kind);
    const float alpha = alpha_of(kind);
    dnnl::eltwise_forward::desc fd(dnnl::prop_kind::forward_training, alg, md, alpha, 0.0f);
    dnnl::eltwise_forward::primitive_desc fpd(fd, eng);
    dnnl::eltwise_backward::desc bd(alg, md, md, alpha, 0.0f);
    dnnl::eltwise_backward::primitive_desc bpd(bd, eng, fpd);
    return Prims{md, dnnl::eltwise_forward(fpd), dnnl::eltwise_backward(bpd)};
  });
}

}  // namespace

void eltwise_forward(Eltwise kind, const float* x, float* y, int64_t n) {
  if (n == 0) return;
  const std::shared_ptr<const Prims> prims = prims_for(kind, n);
  const Prims& p = *prims;
  auto& eng = cpu_engine();
  memory src(p.md, eng, const_cast<float*>(x)), dst(p.md, eng, y);
  p.fwd.execute(cpu_stream(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  cpu_stream().wait();
  if (kind == Eltwise::OnePlusElu) vec_add_scalar(y, 1.0f, n);
}

void eltwise_backward(Eltwise kind, const float* x, const float* dy, float* dx, int64_t n) {
  if (n == 0) return;
  const std::shared_ptr<const Prims> prims = prims_for(kind, n);
  const Prims& p = *prims;
  auto& eng = cpu_engine();
  memory src(p.md, eng, const_cast<float*>(x)), ddst(p.md, eng, const_cast<float*>(dy)),
      dsrc(p.md, eng, dx);
  p.bwd.execute(cpu_stream(),
                {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_DIFF_SRC, dsrc}});
  cpu_stream().wait();
}

bool derivative_from_output(Eltwise kind) {
  return kind == Eltwise::Relu || kind == Eltwise::Elu || kind == Eltwise::OnePlusElu;
}

void eltwise_backward_from_output(Eltwise kind, const float* y, const float* dy, float* dx, int64_t n) {
  if (!derivative_from_output(kind))
    throw ShapeError("[eltwise_backward_from_output] the derivative of this function needs its input");
  // ReLU: y > 0 ⇔ x > 0. ELU (α = 1): y > 0 ⇔ x > 0, else f'(x) = eˣ = y + 1. 1 + ELU: y > 1 ⇔
  // x > 0, else f'(x) = eˣ = y. At x = 0 both sides of ELU's derivative are 1.
  const float threshold = kind == Eltwise::OnePlusElu ? 1.0f : 0.0f;
  const float offset = kind == Eltwise::Elu ? 1.0f : 0.0f;
  const bool relu = kind == Eltwise::Relu;
  parallel_spans(n, kParallelMinElements, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      const float below = relu ? 0.0f : y[i] + offset;
      dx[i] = dy[i] * (y[i] > threshold ? 1.0f : below);
    }
  });
}

Var eltwise(Tape& tape, const Var& x, Eltwise kind) {
  Tensor y = Tensor::empty(x->value.shape());
  eltwise_forward(kind, x->value.data(), y.data(), y.numel());
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  if (derivative_from_output(kind)) {  // hold the output, not the input (often a linear's output)
    tape.record([dx_ref = GradRef(x), result, kind]() {
      if (!result->has_grad()) return;
      GradSink dx(dx_ref);
      eltwise_backward_from_output(kind, result->value.data(), result->grad().data(), dx.data(),
                                   result->value.numel());
    });
    return result;
  }
  tape.record([x, dy_ref = GradRef(result), kind]() {
    if (!dy_ref.has_grad()) return;
    GradSink dx(x);
    eltwise_backward(kind, x->value.data(), dy_ref.grad().data(), dx.data(), x->value.numel());
  });
  return result;
}

}  // namespace tn
