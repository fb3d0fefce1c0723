#pragma once
// Tensor: fp32, contiguous, row-major, shared storage. Views (reshape) share the buffer.
// Buffers come from a size-keyed pool (core/runtime/memory_pool.h), so a training step that allocates the
// same shapes every step reuses the same memory instead of calling malloc.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace tn {

using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for a scalar shape {}). Throws ShapeError, naming the shape,
/// when the product overflows 64 bits (a size read from a config or file that is out of range).
int64_t numel_of(const Shape& shape);
/// "[2, 3, 4]" for messages.
std::string shape_str(const Shape& shape);

struct Storage;  // pooled buffer, see memory_pool.h

class Tensor {
 public:
  Tensor() = default;
  /// Uninitialised tensor of `shape` (contents are whatever the pool hands back). Throws
  /// ShapeError for a negative size or more than 2^60 elements (checked without overflow, so the
  /// byte count and the pool's size class always fit), std::bad_alloc when the system has no memory.
  static Tensor empty(const Shape& shape);
  /// Zero-filled tensor.
  static Tensor zeros(const Shape& shape);
  /// Tensor filled with `value`.
  static Tensor full(const Shape& shape, float value);
  /// Copy of `values`; throws ShapeError when values.size() != numel(shape).
  static Tensor from(const Shape& shape, const std::vector<float>& values);

  bool defined() const { return static_cast<bool>(storage_); }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  /// Size of axis i; negative i counts from the end.
  int64_t dim(int i) const;
  int64_t numel() const { return numel_; }

  float* data();
  const float* data() const;

  /// View with a new shape of the same numel (one axis may be -1).
  Tensor reshape(const Shape& shape) const;
  /// Deep copy into a fresh buffer.
  Tensor clone() const;
  /// Copies `other`'s values into this tensor (same numel).
  void copy_from(const Tensor& other);
  void fill(float value);
  void zero() { fill(0.0f); }
  std::vector<float> to_vector() const;

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape shape_;
  int64_t numel_ = 0;
};

}  // namespace tn
