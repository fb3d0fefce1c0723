#include "core/runtime/autograd/tape.h"

#include "core/error.h"

namespace tn {

Var make_var(Tensor value, bool requires_grad) {
  auto v = std::make_shared<Variable>();
  v->value = std::move(value);
  v->requires_grad = requires_grad;
  return v;
}

bool Tape::needs_grad(std::initializer_list<const Var*> inputs) const {
  if (!enabled_) return false;
  for (const Var* v : inputs)
    if (v && *v && (*v)->requires_grad) return true;
  return false;
}

void Tape::backward(const Var& loss, float seed) {
  if (loss->value.numel() != 1)
    throw ShapeError("[backward] loss must be a scalar, got shape " +
                     shape_str(loss->value.shape()));
  loss->grad_buf().fill(seed);
  // Destroy each closure right after it ran: its saved activations and the gradients of the
  // values it alone referenced go back to the pool while the rest of the backward still runs,
  // so later gradient buffers reuse them and peak memory stays near the forward's.
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    (*it)();
    *it = nullptr;
  }
  clear();
}

std::shared_ptr<const Bf16Buffer> Tape::bf16_of(const Var& v) {
  auto it = bf16_cache_.find(v.get());
  if (it != bf16_cache_.end() && !it->second.var.expired())
    if (auto copy = it->second.copy.lock()) return bf16_recent_ = copy;
  auto copy = Bf16Buffer::copy_of(v->value.data(), v->value.numel());
  list_bf16(v, copy);
  return bf16_recent_ = copy;
}

void Tape::offer_bf16(const Var& v, std::shared_ptr<const Bf16Buffer> copy) {
  list_bf16(v, copy);
  bf16_recent_ = std::move(copy);
}

void Tape::list_bf16(const Var& v, const std::shared_ptr<const Bf16Buffer>& copy) {
  if (bf16_cache_.size() >= 256)  // drop entries whose value or copy is gone
    std::erase_if(bf16_cache_, [](const auto& kv) {
      return kv.second.var.expired() || kv.second.copy.expired();
    });
  bf16_cache_[v.get()] = Bf16Entry{v, copy};
}

}  // namespace tn
