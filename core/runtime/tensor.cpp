#include "core/runtime/tensor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "core/runtime/memory_pool.h"

namespace tn {

namespace {

/// The most elements a tensor may hold: 2^60 floats (4 EiB). Its bytes, rounded up by the pool's
/// size classes (at most 12.5 %) and doubled by its best-fit search, then stay below 2^63.
constexpr int64_t kMaxTensorElements = int64_t{1} << 60;

[[noreturn]] void too_large(const Shape& shape) {
  throw ShapeError("[tensor] shape " + shape_str(shape) + " holds more than 2^60 values (4 EiB of floats), more than any "
                   "machine holds: a size in the config, checkpoint or input that made this shape is out of range");
}

}  // namespace

int64_t numel_of(const Shape& shape) {
  if (std::find(shape.begin(), shape.end(), int64_t{0}) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n)) too_large(shape);
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

Tensor Tensor::empty(const Shape& shape) {
  for (int64_t s : shape)
    if (s < 0) throw ShapeError("[tensor] negative size in shape " + shape_str(shape));
  const int64_t numel = numel_of(shape);
  if (numel > kMaxTensorElements) too_large(shape);
  Tensor t;
  t.shape_ = shape;
  t.numel_ = numel;
  t.storage_ = std::make_shared<Storage>(t.numel_);
  return t;
}

Tensor Tensor::zeros(const Shape& shape) { return full(shape, 0.0f); }

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  t.fill(value);
  return t;
}

Tensor Tensor::from(const Shape& shape, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != numel_of(shape))
    throw ShapeError("[tensor] " + std::to_string(values.size()) + " values for shape " +
                     shape_str(shape));
  Tensor t = empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

int64_t Tensor::dim(int i) const {
  const int n = ndim();
  const int axis = i < 0 ? i + n : i;
  if (axis < 0 || axis >= n)
    throw ShapeError("[tensor] axis " + std::to_string(i) + " out of range for shape " +
                     shape_str(shape_));
  return shape_[axis];
}

float* Tensor::data() { return storage_ ? storage_->ptr + offset_ : nullptr; }
const float* Tensor::data() const { return storage_ ? storage_->ptr + offset_ : nullptr; }

Tensor Tensor::reshape(const Shape& shape) const {
  Shape resolved = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < resolved.size(); ++i) {
    if (resolved[i] == -1) {
      if (infer >= 0) throw ShapeError("[reshape] more than one -1 in " + shape_str(shape));
      infer = static_cast<int>(i);
    } else if (__builtin_mul_overflow(known, resolved[i], &known)) {
      throw ShapeError("[reshape] cannot view " + shape_str(shape_) + " as " + shape_str(shape));
    }
  }
  if (infer >= 0) resolved[infer] = known ? numel_ / known : 0;
  if (numel_of(resolved) != numel_)
    throw ShapeError("[reshape] cannot view " + shape_str(shape_) + " as " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = resolved;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_);
  if (numel_) std::memcpy(t.data(), data(), sizeof(float) * numel_);
  return t;
}

void Tensor::copy_from(const Tensor& other) {
  if (other.numel() != numel_)
    throw ShapeError("[copy_from] " + shape_str(other.shape()) + " into " + shape_str(shape_));
  if (numel_) std::memcpy(data(), other.data(), sizeof(float) * numel_);
}

void Tensor::fill(float value) { std::fill(data(), data() + numel_, value); }

std::vector<float> Tensor::to_vector() const { return std::vector<float>(data(), data() + numel_); }

}  // namespace tn
