#include "core/ops/lm_head_loss.h"

#include <cstring>
#include <vector>
#include <map>
#include <mutex>

#include "core/autograd/grad_accum.h"
#include "core/dnnl/engine.h"
#include "core/dnnl/matmul.h"
#include "core/error.h"

namespace tn {
namespace {

using dnnl::memory;

struct SoftmaxPrims {
  memory::desc md;
  dnnl::logsoftmax_forward logsoftmax;
  dnnl::eltwise_forward exp;
};

const SoftmaxPrims& softmax_prims(int64_t rows, int64_t vocab) {
  static std::mutex mutex;
  static std::map<std::pair<int64_t, int64_t>, SoftmaxPrims> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(rows, vocab);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto& eng = cpu_engine();
  memory::desc md({rows, vocab}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::logsoftmax_forward::primitive_desc lpd(
      dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng);
  dnnl::eltwise_forward::primitive_desc epd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                  dnnl::algorithm::eltwise_exp, md, 0.0f, 0.0f),
      eng);
  return cache
      .emplace(key, SoftmaxPrims{md, dnnl::logsoftmax_forward(lpd), dnnl::eltwise_forward(epd)})
      .first->second;
}

}  // namespace

LmLoss lm_head_cross_entropy(Tape& tape, const Var& hidden, const Var& weight,
                             const std::vector<int32_t>& targets, int64_t chunk_rows,
                             const Var& bias) {
  const int64_t d = hidden->value.dim(-1);
  const int64_t rows = hidden->value.numel() / d;
  const int64_t vocab = weight->value.dim(0);
  if (weight->value.dim(1) != d)
    throw ShapeError("[lm_head_cross_entropy] hidden width " + std::to_string(d) +
                     " vs weight " + shape_str(weight->value.shape()));
  if (static_cast<int64_t>(targets.size()) != rows)
    throw ShapeError("[lm_head_cross_entropy] " + std::to_string(targets.size()) +
                     " targets for " + std::to_string(rows) + " rows");
  for (int64_t i = 0; i < rows; ++i)
    if (targets[i] != kIgnoreIndex && (targets[i] < 0 || targets[i] >= vocab))
      throw ShapeError("[lm_head_cross_entropy] target " + std::to_string(targets[i]) +
                       " outside the vocabulary [0, " + std::to_string(vocab) + ")");

  if (bias && bias->value.numel() != vocab)
    throw ShapeError("[lm_head_cross_entropy] bias has " + std::to_string(bias->value.numel()) +
                     " entries for a vocabulary of " + std::to_string(vocab));
  const bool record = tape.needs_grad({&hidden, &weight, &bias});
  Tensor d_hidden, d_weight, d_bias;
  if (record) {
    d_hidden = Tensor::empty({rows, d});
    d_weight = Tensor::zeros({vocab, d});
    if (bias) d_bias = Tensor::zeros({vocab});
  }
  // bf16: the weight is the B operand of every chunk's logits and d-hidden products; convert it
  // once here instead of once per product.
  const bool bf16 = tape.bf16();
  thread_local std::vector<uint16_t> weight16;
  if (bf16) {
    if (static_cast<int64_t>(weight16.size()) < vocab * d) weight16.resize(vocab * d);
    to_bf16_flat(weight->value.data(), weight16.data(), vocab * d);
  }
  const uint16_t* w16 = bf16 ? weight16.data() : nullptr;
  const int64_t chunk = std::min(chunk_rows, rows);
  Tensor logits = Tensor::empty({chunk, vocab});
  const float* hp = hidden->value.data();
  const float* wp = weight->value.data();
  double sum_nll = 0.0;
  int64_t n_targets = 0;
  auto& eng = cpu_engine();
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t rc = std::min(chunk, rows - r0);
    float* lp = logits.data();
    matmul({1, rc, vocab, d, false, true, false, bias != nullptr, bf16}, hp + r0 * d, wp, lp,
           bias ? bias->value.data() : nullptr, w16);
    const SoftmaxPrims& prims = softmax_prims(rc, vocab);
    memory mem(prims.md, eng, lp);
    prims.logsoftmax.execute(cpu_stream(), {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}});
    cpu_stream().wait();
    for (int64_t i = 0; i < rc; ++i) {
      const int32_t t = targets[r0 + i];
      if (t == kIgnoreIndex) continue;
      sum_nll -= lp[i * vocab + t];
      ++n_targets;
    }
    if (!record) continue;
    prims.exp.execute(cpu_stream(), {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}});
    cpu_stream().wait();
    for (int64_t i = 0; i < rc; ++i) {
      const int32_t t = targets[r0 + i];
      if (t == kIgnoreIndex)
        std::memset(lp + i * vocab, 0, sizeof(float) * vocab);
      else
        lp[i * vocab + t] -= 1.0f;
    }
    if (bias) {  // d bias += Σ_rows g
      float* db = d_bias.data();
      for (int64_t i = 0; i < rc; ++i)
#pragma omp simd
        for (int64_t j = 0; j < vocab; ++j) db[j] += lp[i * vocab + j];
    }
    // d hidden_c = g W ; d W += gᵀ hidden_c  (g = softmax − onehot, unscaled)
    matmul({1, rc, d, vocab, false, false, false, false, bf16}, lp, wp, d_hidden.data() + r0 * d,
           nullptr, w16);
    matmul({1, vocab, d, rc, true, false, true, false, bf16}, lp, hp + r0 * d, d_weight.data());
  }
  LmLoss out;
  out.sum_nll = sum_nll;
  out.n_targets = n_targets;
  const double mean = n_targets ? sum_nll / static_cast<double>(n_targets) : 0.0;
  out.loss = make_var(Tensor::full({}, static_cast<float>(mean)));
  if (!record) return out;
  out.loss->requires_grad = true;
  Var loss = out.loss;
  tape.record([hidden, weight, bias, loss, d_hidden, d_weight, d_bias, n_targets]() {
    if (!loss->has_grad() || n_targets == 0) return;
    const float s = loss->grad.data()[0] / static_cast<float>(n_targets);
    auto deliver = [s](const Var& v, const Tensor& g) {
      if (!v->requires_grad) return;
      float* dst = v->grad_buf().data();
      const float* src = g.data();
      const int64_t n = g.numel();
#pragma omp parallel for simd schedule(static) if (n > 32768)
      for (int64_t i = 0; i < n; ++i) dst[i] += s * src[i];
    };
    deliver(hidden, d_hidden);
    deliver(weight, d_weight);
    if (bias) deliver(bias, d_bias);
  });
  return out;
}

Tensor lm_logits(const Tensor& hidden, const Tensor& weight, const std::vector<int64_t>& rows,
                 const Tensor* bias) {
  const int64_t d = hidden.dim(-1), vocab = weight.dim(0);
  Tensor picked = Tensor::empty({static_cast<int64_t>(rows.size()), d});
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(picked.data() + i * d, hidden.data() + rows[i] * d, sizeof(float) * d);
  Tensor out = Tensor::empty({static_cast<int64_t>(rows.size()), vocab});
  matmul({1, static_cast<int64_t>(rows.size()), vocab, d, false, true, false, bias != nullptr},
         picked.data(), weight.data(), out.data(), bias ? bias->data() : nullptr);
  return out;
}

}  // namespace tn
