#include "core/autograd/tape.h"

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
  nodes_.clear();
}

}  // namespace tn
