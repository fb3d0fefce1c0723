// Tensor sizes that overflow (hostile-input campaign, class 1): a shape whose element or byte count
// does not fit in 64 bits is refused with a ShapeError naming it, never wrapped into a small
// buffer that later writes run past (a [2^62, 16] weight wrapped to 0 elements and segfaulted; a
// d_ff of 2^59 + 12345 made malloc's size invalid).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/runtime/tensor.h"

using namespace tn;

namespace {
constexpr int64_t k2to62 = int64_t{1} << 62;
}  // namespace

TEST_CASE("tensor sizes: a shape whose element count overflows 64 bits is refused, naming the shape") {
  CHECK_THROWS_WITH_AS(numel_of({k2to62, 16}), doctest::Contains("[4611686018427387904, 16]"), ShapeError);
  CHECK_THROWS_AS(numel_of({int64_t{1} << 32, int64_t{1} << 32}), ShapeError);
  CHECK_THROWS_AS(Tensor::empty({k2to62, 16}), ShapeError);
  CHECK_THROWS_AS(Tensor::zeros({16, k2to62}), ShapeError);
  CHECK_THROWS_AS(Tensor::full({3, int64_t{1} << 21, int64_t{1} << 21, int64_t{1} << 21}, 0.0f), ShapeError);
  // 2^59 + 12345 rows of 16: 2^63 + 197,520 elements, past int64 (wrapped, it was malloc(): invalid size).
  CHECK_THROWS_AS(Tensor::empty({(int64_t{1} << 59) + 12345, 16}), ShapeError);
}

TEST_CASE("tensor sizes: elements that fit in 64 bits but whose bytes do not are refused before allocating") {
  // 2^61 floats: the element count fits, its 2^63 bytes do not.
  try {
    (void)Tensor::empty({int64_t{1} << 61});
    FAIL("a tensor of 2^61 floats was allocated");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("more than 2^60 values") != std::string::npos);
    CHECK(std::string(e.what()).find("[2305843009213693952]") != std::string::npos);
  }
  CHECK_THROWS_AS(Tensor::empty({(int64_t{1} << 60) + 1}), ShapeError);
}

TEST_CASE("tensor sizes: a zero in the shape is zero elements, whatever the other sizes") {
  CHECK(numel_of({0, k2to62}) == 0);
  CHECK(Tensor::empty({0, 16}).numel() == 0);
  CHECK(numel_of({}) == 1);
}

TEST_CASE("tensor sizes: reshape refuses a target shape whose product overflows") {
  const Tensor t = Tensor::zeros({4, 4});
  CHECK_THROWS_AS(t.reshape({k2to62, 4, -1}), ShapeError);
  CHECK_THROWS_AS(t.reshape({k2to62, 8}), ShapeError);
  CHECK(t.reshape({2, -1}).shape() == Shape{2, 8});
}
