#pragma once
// How a matrix product is cut into tiles of C, each computed by one single-threaded oneDNN
// primitive (core/runtime/dnnl/matmul.cpp). The cut is a function of the product's shape alone, never of
// the thread count: every element of C is computed by the same primitive, on the same operands, in
// the same order of its K sum whether one thread runs all the tiles or many threads share them, so
// a product gives the same bits on any thread count. K is never cut: no partial sums. The sizes
// were measured on one thread against the whole product (docs/performance.md, "Tiles").
#include <cstdint>

#include "core/runtime/dnnl/matmul.h"

namespace tn {

struct MatmulTiling {
  int64_t rows = 0, cols = 0;            // a tile's rows and columns of C (the last ones may be fewer)
  int64_t row_tiles = 1, col_tiles = 1;  // tiles down and across one matrix of C
  int64_t batch = 1;                     // matrices of C (each tiled alike)
  /// Every tile of the product: batch · row_tiles · col_tiles.
  int64_t count() const { return batch * row_tiles * col_tiles; }
};

/// The tiles of `shape` (m, n >= 1): rows of C or columns of C, whichever gives more tiles (rows
/// on a tie). A tile does at least 2^24 flops (below that the product is one tile), has at least
/// 256 rows (64 with a transposed A) or 256 columns unless C has fewer, and a multiple of 16 rows
/// or columns unless it spans C; at most 64 tiles per matrix. Depends on the shape only.
MatmulTiling matmul_tiling(const MatmulShape& shape);

}  // namespace tn
