#pragma once
// Reverse-mode autograd: a tape of backward closures recorded by ops during the forward pass.
// Ops are coarse (a linear layer, a whole attention, a fused norm) and carry hand-written
// backwards; each backward *adds* into its inputs' gradients, so tied weights and gradient
// accumulation work without special cases (llm.c's habit).
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/runtime/dnnl/bf16.h"
#include "core/runtime/tensor.h"

namespace tn {

/// A value in the graph: its tensor, and its gradient (allocated and zeroed on first use). The
/// gradient lives in a slot of its own, shared with the backward closures that hold a GradRef: a
/// closure that adds to or reads the gradient but never reads the value holds only the slot, so
/// the value goes back to the pool as soon as the forward and the closures that read it are done
/// with it (PyTorch's split of saved tensors from graph edges).
struct Variable {
  Tensor value;
  bool requires_grad = false;

  /// precision bf16: a parameter's values rounded to bf16, made by its first bf16 product in
  /// training (weight_operand, core/runtime/ops/operand.h) and then rewritten by every optimizer step in
  /// the same pass that updates the values, so no step converts the weights again. Used only
  /// while bf16_current; whatever else writes `value` (a checkpoint load, a broadcast) must call
  /// values_changed().
  std::shared_ptr<Bf16Buffer> bf16_copy;
  bool bf16_current = false;

  /// The gradient slot: undefined until a backward first writes it.
  std::shared_ptr<Tensor> grad_slot = std::make_shared<Tensor>();

  /// The gradient (undefined before the first write); assignable.
  Tensor& grad() const { return *grad_slot; }
  /// The gradient buffer, zero-filled on first access; same shape as value.
  Tensor& grad_buf() {
    if (!grad_slot->defined()) *grad_slot = Tensor::zeros(value.shape());
    return *grad_slot;
  }
  bool has_grad() const { return grad_slot->defined(); }
  /// Marks bf16_copy out of date after `value` was written outside the optimizer.
  void values_changed() { bf16_current = false; }
};

using Var = std::shared_ptr<Variable>;

/// Wraps a tensor as a graph value.
Var make_var(Tensor value, bool requires_grad = false);

/// A Variable's gradient without its value: what a backward closure captures for a value whose
/// gradient it adds to or reads but whose value it does not read (the output of a linear layer, the
/// inputs of a sum). Converts implicitly from a Var, taking its shape and requires_grad then; the
/// GradRef of a null Var (an absent bias, a sum without a base) is empty: false, and no gradient
/// required.
class GradRef {
 public:
  GradRef() = default;
  GradRef(const Var& v)  // NOLINT: implicit, so every Var-taking gradient helper takes a GradRef
      : slot_(v ? v->grad_slot : nullptr), shape_(v ? v->value.shape() : Shape{}), requires_grad_(v && v->requires_grad) {}
  /// False for an empty GradRef; has_grad, grad and grad_buf need a non-empty one.
  explicit operator bool() const { return slot_ != nullptr; }
  bool requires_grad() const { return requires_grad_; }
  bool has_grad() const { return slot_->defined(); }
  /// The gradient (undefined before the first write); assignable.
  Tensor& grad() const { return *slot_; }
  /// The gradient buffer, zero-filled on first access.
  Tensor& grad_buf() const {
    if (!slot_->defined()) *slot_ = Tensor::zeros(shape_);
    return *slot_;
  }
  /// The value's shape, which is the gradient's.
  const Shape& shape() const { return shape_; }
  /// How many holders share the slot (the Variable, if alive, and every GradRef).
  long holders() const { return slot_.use_count(); }

 private:
  std::shared_ptr<Tensor> slot_;
  Shape shape_;
  bool requires_grad_ = false;
};

class Tape {
 public:
  /// Whether ops should record backward closures (false in evaluation: no saved activations).
  bool enabled() const { return enabled_; }
  void set_enabled(bool enabled) { enabled_ = enabled; }

  /// Whether dense products (linear layers, the LM head) round their operands to bfloat16
  /// (f32 accumulation, f32 master weights): the `precision: bf16` setting.
  bool bf16() const { return bf16_; }
  void set_bf16(bool bf16) { bf16_ = bf16; }

  /// The bf16 copy of an activation's value, for bf16 products: converted on the first request and
  /// shared while anyone holds it (backward closures capture it), so an input feeding several
  /// products (q, k and v; the two GLU branches; a linear's forward and its weight gradient) is
  /// converted once. The tape also holds the most recent copy, so consecutive products share it
  /// without a backward too. The value must not change while the tape lives: use it for
  /// activations, not for parameters (the optimizer changes them between forwards). The cache
  /// is emptied by backward() and clear().
  std::shared_ptr<const Bf16Buffer> bf16_of(const Var& v);

  /// Gives the tape a bf16 copy of v's value that the op producing v wrote alongside it (it must
  /// hold to_bf16_bits of every value), so that bf16_of(v) returns it instead of converting. Held
  /// as the most recent copy, like one bf16_of made.
  void offer_bf16(const Var& v, std::shared_ptr<const Bf16Buffer> copy);

  /// True when an op with these inputs must record a backward.
  bool needs_grad(std::initializer_list<const Var*> inputs) const;

  /// Appends a backward closure; it runs once, in reverse order, inside backward().
  void record(std::function<void()> backward_fn) { nodes_.push_back(std::move(backward_fn)); }

  /// Seeds d(loss)/d(loss) = 1 (loss must be a scalar) and runs the tape in reverse, then clears
  /// it, releasing every saved activation. Parameter gradients stay (zero them in the optimizer).
  /// `seed` scales the seed gradient (e.g. a micro-batch's share of an accumulated update).
  void backward(const Var& loss, float seed = 1.0f);

  /// Drops the recorded closures and their saved tensors without running them.
  void clear() {
    nodes_.clear();
    bf16_cache_.clear();
    bf16_recent_.reset();
  }
  size_t size() const { return nodes_.size(); }

 private:
  bool enabled_ = true;
  bool bf16_ = false;
  std::vector<std::function<void()>> nodes_;
  struct Bf16Entry {
    std::weak_ptr<Variable> var;  // keeps the key's address from being reused while listed
    std::weak_ptr<const Bf16Buffer> copy;
  };
  std::unordered_map<const Variable*, Bf16Entry> bf16_cache_;
  /// Lists copy as v's, after dropping the entries whose value or copy is gone once there are many.
  void list_bf16(const Var& v, const std::shared_ptr<const Bf16Buffer>& copy);
  std::shared_ptr<const Bf16Buffer> bf16_recent_;
};

}  // namespace tn
