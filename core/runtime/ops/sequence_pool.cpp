#include "core/runtime/ops/sequence_pool.h"

#include "core/error.h"

namespace tn {

Var sequence_pool(Tape& tape, const Var& x, PoolKind kind, const std::vector<uint8_t>* key_valid) {
  const int64_t batch = x->value.dim(0), seq_len = x->value.dim(1), d = x->value.dim(2);
  if (key_valid && static_cast<int64_t>(key_valid->size()) != batch * seq_len)
    throw ShapeError("[sequence_pool] key_valid has " + std::to_string(key_valid->size()) +
                     " entries for " + shape_str(x->value.shape()));
  auto valid = [&](int64_t b, int64_t t) { return !key_valid || (*key_valid)[b * seq_len + t]; };
  // weights[b, t]: the pooling coefficient of position t in row b.
  std::vector<float> weights(batch * seq_len, 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t count = 0, last = -1;
    for (int64_t t = 0; t < seq_len; ++t)
      if (valid(b, t)) {
        ++count;
        last = t;
      }
    if (count == 0) throw ShapeError("[sequence_pool] row " + std::to_string(b) + " has no real position");
    if (kind == PoolKind::Mean) {
      for (int64_t t = 0; t < seq_len; ++t)
        if (valid(b, t)) weights[b * seq_len + t] = 1.0f / static_cast<float>(count);
    } else {
      weights[b * seq_len + (kind == PoolKind::First ? 0 : last)] = 1.0f;
    }
  }
  Tensor y = Tensor::zeros({batch, d});
  const float* xp = x->value.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < seq_len; ++t) {
      const float w = weights[b * seq_len + t];
      if (w == 0.0f) continue;
      for (int64_t j = 0; j < d; ++j) y.data()[b * d + j] += w * xp[(b * seq_len + t) * d + j];
    }
  Var result = make_var(std::move(y));
  if (!tape.needs_grad({&x})) return result;
  result->requires_grad = true;
  tape.record([dx_ref = GradRef(x), result, weights, batch, seq_len, d]() {  // reads no value
    if (!result->has_grad()) return;
    float* dx = dx_ref.grad_buf().data();
    const float* dy = result->grad().data();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < seq_len; ++t) {
        const float w = weights[b * seq_len + t];
        if (w == 0.0f) continue;
        for (int64_t j = 0; j < d; ++j) dx[(b * seq_len + t) * d + j] += w * dy[b * d + j];
      }
  });
  return result;
}

}  // namespace tn
