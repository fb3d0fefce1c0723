#include "core/runtime/dnnl/matmul_tiling.h"

#include <algorithm>

namespace tn {
namespace {

constexpr double kTileFlops = 1 << 24;  // a tile's least work: its call costs a few µs beside ~100 µs
constexpr int64_t kMaxTiles = 64;       // per matrix of C
// A tile's least rows, unless C has fewer: a plain A's row tiles run on oneDNN's `brg` kernel,
// which loses 10-20 % below 256 rows at large K (512×512·512×50000 at 128 rows: 223 vs 186 ms
// whole, one thread); a transposed A's are strided and run on `gemm:jit`, as fast at 64 rows.
constexpr int64_t kMinRowsPlain = 256, kMinRowsTransposedA = 64;
// A column tile's least columns (strided C: `gemm:jit`; 64 columns lose 20 % at large K). Cutting
// columns beats cutting few rows: 512×128·128×17488 (the quickstart's head) takes 12.8 ms as
// 512×288 tiles, 14.4 ms as 256×560, 13.2 ms whole.
constexpr int64_t kMinTileCols = 256;

/// `parts` pieces of `extent` as (piece size, piece count): sizes a multiple of 16 unless one
/// piece is the whole extent.
void cut(int64_t extent, int64_t parts, int64_t& size, int64_t& count) {
  if (parts <= 1) {
    size = extent;
    count = 1;
    return;
  }
  size = ((extent + parts - 1) / parts + 15) / 16 * 16;
  count = (extent + size - 1) / size;
}

}  // namespace

MatmulTiling matmul_tiling(const MatmulShape& s) {
  MatmulTiling t;
  t.batch = s.batch;
  const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  const int64_t allowed = static_cast<int64_t>(std::clamp(flops / kTileFlops, 1.0, double(kMaxTiles)));
  const int64_t min_rows = s.trans_a ? kMinRowsTransposedA : kMinRowsPlain;
  const int64_t row_parts = std::min(allowed, s.m / min_rows);
  const int64_t col_parts = std::min(allowed, s.n / kMinTileCols);
  const bool by_rows = row_parts >= col_parts;
  cut(s.m, by_rows ? row_parts : 1, t.rows, t.row_tiles);
  cut(s.n, by_rows ? 1 : col_parts, t.cols, t.col_tiles);
  return t;
}

}  // namespace tn
