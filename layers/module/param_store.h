#pragma once
// The model's parameters and buffers, by checkpoint name (docs/model.md §12).
// Modules register what they own here at construction and keep the returned Var; checkpoints,
// optimizers and gradient reports iterate the store in name order.
#include <map>
#include <string>
#include <vector>

#include "core/runtime/autograd/tape.h"

namespace tn {

class ParamStore {
 public:
  /// Registers a trainable parameter (requires_grad) of `shape`, zero-filled; the caller inits it.
  /// Throws ShapeError when the name is taken.
  Var add_parameter(const std::string& name, const Shape& shape);
  /// Registers a buffer: saved in checkpoints, never trained (URPE Householder vector, features).
  Var add_buffer(const std::string& name, const Shape& shape);

  /// Every entry (parameters and buffers) in name order.
  const std::map<std::string, Var>& entries() const { return entries_; }
  bool is_buffer(const std::string& name) const;
  /// Trainable parameters in name order.
  std::vector<std::pair<std::string, Var>> parameters() const;
  /// Number of trainable scalars.
  int64_t parameter_count() const;
  /// Zeroes every gradient by releasing it to the pool: the next backward's first contribution to
  /// a parameter then writes its gradient without a zero-fill (and the ones after accumulate);
  /// a parameter no backward reaches has no gradient, which reads as zero.
  void zero_grad();

 private:
  std::map<std::string, Var> entries_;
  std::map<std::string, bool> buffer_;
};

}  // namespace tn
