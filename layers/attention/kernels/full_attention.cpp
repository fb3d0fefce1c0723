// Softmax attention in row tiles through oneDNN's sgemm, parallel over (batch, head); each product
// runs single-threaded inside the parallel region, so the bits do not depend on the thread count.
// No T×T matrix is stored: the forward keeps two statistics per row (the max logit and the
// reciprocal of the sum of exponentials), and the backward recomputes each tile of probabilities
// from them with the forward's own operations, so its probabilities are the forward's bit for bit.
// Legend: B batch, T seq_len, H n_heads, D d_head, n keys up to the last valid one; rows of one
// (b, h) are H·D apart in q, k, v, out and their gradients.
#include "layers/attention/kernels/full_attention.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <stdexcept>
#include <string>

#include <oneapi/dnnl/dnnl.h>

#include "core/runtime/math/fast_exp.h"
#include "core/runtime/math/isa_clones.h"
#include "core/runtime/math/row_max.h"
#include "layers/attention/kernels/attention_dropout.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn::kernel_detail {
namespace {

/// One (b, h): pointers at row 0; valid: key_valid of batch b or null.
struct Head {
  const float* q;
  const float* k;
  const float* v;
  const uint8_t* valid;
  int64_t T, D, ld, n;
};

/// Keys up to the last valid one: T without a mask, 0 when no key is valid.
int64_t key_count(const uint8_t* valid, int64_t T) {
  if (!valid) return T;
  int64_t n = T;
  while (n > 0 && !valid[n - 1]) --n;
  return n;
}

/// Row-major C = op(A)·op(B) + beta·C through dnnl_sgemm (ta/tb: 'N' or 'T'); a failure status is
/// kept in `failed` (no exception may leave an OpenMP region) and thrown after it.
void gemm(char ta, char tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
          std::atomic<int>& failed) {
  const dnnl_status_t status = dnnl_sgemm(ta, tb, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
  if (status != dnnl_success) failed.store(int(status));
}

void throw_if_failed(const char* op, const std::atomic<int>& failed) {
  if (failed.load() != 0)
    throw std::runtime_error(std::string("[") + op + "] oneDNN sgemm failed with status " +
                             std::to_string(failed.load()));
}

constexpr int64_t kTileFloats = 262144;  // logits per forward row tile: 1 MB (half a core's L2)

/// Calls f(r0, r1) for the query rows before the first padded key, [0, n), and after, [n, T):
/// the products of the first range have the same shapes however far the sequence is padded.
template <class F>
void for_row_ranges(int64_t n, int64_t T, F&& f) {
  f(int64_t{0}, n);
  if (T > n) f(n, T);
}

/// prow[0, jmax) logits → E = exp(logit − max) over the valid keys (masked ones 0; a row with
/// none is all 0), not yet divided by their sum: the caller scales the row of E·v instead (D
/// products, not jmax). prow[jmax, width) = 0. stats = {max logit, 1 / Σ E}, {−inf, 0} for a row
/// with no valid key. Max, exp and sum run as vectors in fixed lanes (dot64: the bits do not
/// depend on jmax beyond the values it covers).
TN_ISA_CLONES void softmax_row(float* __restrict prow, int64_t jmax, int64_t width,
                               const uint8_t* valid, float* __restrict stats) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  fill_zero(prow + jmax, width - jmax);
  if (valid)
    for (int64_t j = 0; j < jmax; ++j) prow[j] = valid[j] ? prow[j] : neg_inf;
  const float mx = row_max(prow, jmax);
  stats[0] = mx;
  stats[1] = 0.f;
  if (mx == neg_inf) {
    fill_zero(prow, jmax);
    return;
  }
  for (int64_t j = 0; j < jmax; ++j) prow[j] = exp_nonpositive(prow[j] - mx);
  stats[1] = 1.f / dot64(prow, nullptr, jmax);  // sum >= 1: the max entry contributes exp(0)
}

/// x[0, D) *= s.
TN_ISA_CLONES void scale_row(float* __restrict x, int64_t D, float s) {
  for (int64_t d = 0; d < D; ++d) x[d] *= s;
}

/// pd[j] = prow[j]·m[j] for j < jmax, 0 up to n: one row of the dropped probabilities.
TN_ISA_CLONES void dropped_row(const float* __restrict prow, const float* __restrict m,
                               int64_t jmax, int64_t n, float* __restrict pd) {
  for (int64_t j = 0; j < jmax; ++j) pd[j] = prow[j] * m[j];
  fill_zero(pd + jmax, n - jmax);
}

/// One row of the backward: prow[0, jmax) holds the logits again, drow[0, jmax) dA = g_i·v_j.
/// Writes the probabilities P = E·(1/sum), E = exp(logit − max) from the forward's stats (E by the
/// forward's operations, so its bits; masked keys 0), to prow and d_logit = P ⊙ (dA' − Σ P dA')
/// to drow, with dA' = dA ⊙ m and, with dropout (m not null), pd = P ⊙ m. Entries [jmax, n) of
/// all three are 0. A masked or underflowed entry (P = 0) gives d_logit 0 whatever dA is.
TN_ISA_CLONES void backward_row(float* __restrict prow, float* __restrict drow, int64_t jmax,
                                int64_t n, const uint8_t* valid, const float* stats,
                                const float* __restrict m, float* __restrict pd) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const float mx = stats[0], inv = stats[1];
  if (mx == neg_inf) jmax = 0;  // no valid key: all 0
  if (valid)  // a masked key's logit may exceed the max: it goes in as −inf, as in the forward
    for (int64_t j = 0; j < jmax; ++j) prow[j] = valid[j] ? prow[j] : neg_inf;
  for (int64_t j = 0; j < jmax; ++j) {
    const float p = exp_nonpositive(prow[j] - mx) * inv;
    prow[j] = p;
    drow[j] = p != 0.f ? drow[j] : 0.f;
  }
  if (m) {
    for (int64_t j = 0; j < jmax; ++j) drow[j] *= m[j];
    dropped_row(prow, m, jmax, n, pd);
  }
  const float c = dot64(prow, drow, jmax);
  for (int64_t j = 0; j < jmax; ++j) drow[j] = prow[j] * (drow[j] - c);
  fill_zero(prow + jmax, n - jmax);
  fill_zero(drow + jmax, n - jmax);
}

/// Query rows per tile: a tile's logits (rows × n) stay in the L2 cache up to n = 4,096 between the
/// product that writes them, the softmax and the product that reads them. Depends on n only, so a
/// sequence padded further keeps its tiles.
int64_t row_tile(int64_t n, int64_t tile_floats = kTileFloats) {
  // At least 64 rows: past n = 4,096 fewer rows starve the products (one layer at n = 16,384,
  // d_head 64: 8-row tiles took 45 s, 64-row ones 23), though the tile then outgrows L2.
  return std::clamp<int64_t>(tile_floats / std::max<int64_t>(n, 1) / 8 * 8, 64, 256);
}

/// The backward's query rows per tile: half the forward's, as it holds two tiles (the
/// probabilities and d_logit).
int64_t backward_row_tile(int64_t n) { return row_tile(n, kTileFloats / 2); }

/// Calls f(t0, t1) for the row tiles of `tile` rows of [0, n) and then of [n, T)
/// (for_row_ranges, tiled).
template <class F>
void for_row_tiles(int64_t n, int64_t T, int64_t tile, F&& f) {
  for_row_ranges(n, T, [&](int64_t r0, int64_t r1) {
    for (int64_t t0 = r0; t0 < r1; t0 += tile) f(t0, std::min(r1, t0 + tile));
  });
}

/// One (b, h) of the forward. stats: [T][2] of this (b, h). scratch: k and v rows gathered ([n][D]
/// each), one tile of probabilities ([tile][n]), then (dropout only) one tile of dropped
/// probabilities ([tile][n]) and [n] weights.
void forward_head(const Head& hd, bool causal, const BlockDropout& drop, float* out, float* stats,
                  float* scratch, std::atomic<int>& failed) {
  const int64_t T = hd.T, D = hd.D, ld = hd.ld, n = hd.n;
  if (n == 0) {  // no valid key: A = 0, out = 0
    for (int64_t i = 0; i < T; ++i) {
      fill_zero(out + i * ld, D);
      stats[2 * i] = -std::numeric_limits<float>::infinity();
      stats[2 * i + 1] = 0.f;
    }
    return;
  }
  const int64_t tile = row_tile(n);
  float* kb = scratch;
  float* vb = kb + n * D;
  float* p = vb + n * D;
  float* pd = p + tile * n;
  float* m = pd + tile * n;
  gather_rows(hd.k, ld, n, D, kb);
  gather_rows(hd.v, ld, n, D, vb);
  for_row_tiles(n, T, tile, [&](int64_t t0, int64_t t1) {
    const int64_t nk = causal ? std::min(t1, n) : n;  // causal: no key after the tile's last row
    gemm('N', 'T', t1 - t0, nk, D, hd.q + t0 * ld, ld, kb, D, 0.f, p, n, failed);  // logits
    for (int64_t i = t0; i < t1; ++i) {
      const int64_t jmax = causal ? std::min(i + 1, n) : n;
      float* prow = p + (i - t0) * n;
      softmax_row(prow, jmax, nk, hd.valid, stats + 2 * i);
      if (drop.on) {
        drop.row(i, jmax, m);
        dropped_row(prow, m, jmax, nk, pd + (i - t0) * n);
      }
    }
    // out = (E' v)/sum over the tile's rows (E' = E ⊙ m with dropout): A' v with A' = E'/sum
    gemm('N', 'N', t1 - t0, D, nk, drop.on ? pd : p, n, vb, D, 0.f, out + t0 * ld, ld, failed);
    for (int64_t i = t0; i < t1; ++i) scale_row(out + i * ld, D, stats[2 * i + 1]);
  });
}

/// One (b, h) of the backward. scratch: k and v rows gathered ([n][D] each), the dk and dv sums
/// transposed ([D][n] each), one tile each of recomputed probabilities and d_logit ([tile][n]),
/// then (dropout only) one tile of P ⊙ m and [n] weights.
void backward_head(const Head& hd, bool causal, const BlockDropout& drop, const float* stats,
                   const float* g, float* dq, float* dk, float* dv, float* scratch,
                   std::atomic<int>& failed) {
  const int64_t T = hd.T, D = hd.D, ld = hd.ld, n = hd.n;
  for (int64_t j = n; j < T; ++j) {  // keys after the last valid one: no gradient
    fill_zero(dk + j * ld, D);
    fill_zero(dv + j * ld, D);
  }
  if (n == 0) {
    for (int64_t i = 0; i < T; ++i) fill_zero(dq + i * ld, D);
    return;
  }
  const int64_t tile = backward_row_tile(n);
  float* kb = scratch;
  float* vb = kb + n * D;
  float* dkt = vb + n * D;
  float* dvt = dkt + n * D;
  float* p = dvt + n * D;
  float* ds = p + tile * n;
  float* pd = ds + tile * n;
  float* m = pd + tile * n;
  gather_rows(hd.k, ld, n, D, kb);
  gather_rows(hd.v, ld, n, D, vb);
  fill_zero(dkt, 2 * n * D);  // dkᵀ and dvᵀ: a causal tile adds to its first keys only
  for_row_tiles(n, T, tile, [&](int64_t t0, int64_t t1) {
    const int64_t rows = t1 - t0;
    const int64_t nk = causal ? std::min(t1, n) : n;  // causal: no key after the tile's last row
    gemm('N', 'T', rows, nk, D, hd.q + t0 * ld, ld, kb, D, 0.f, p, n, failed);  // logits again
    gemm('N', 'T', rows, nk, D, g + t0 * ld, ld, vb, D, 0.f, ds, n, failed);    // dA = g vᵀ
    for (int64_t i = t0; i < t1; ++i) {
      const int64_t jmax = causal ? std::min(i + 1, n) : n;
      if (drop.on) drop.row(i, jmax, m);
      backward_row(p + (i - t0) * n, ds + (i - t0) * n, jmax, nk, hd.valid, stats + 2 * i,
                   drop.on ? m : nullptr, pd + (i - t0) * n);
    }
    // dkᵀ, dvᵀ ([D][n]) sum over the tiles in order: a product of D rows runs about 1.3–2× the
    // speed of the transposed [n][D] one on these shapes (docs/performance.md, softmax).
    gemm('N', 'N', rows, D, nk, ds, n, kb, D, 0.f, dq + t0 * ld, ld, failed);
    gemm('T', 'N', D, nk, rows, hd.q + t0 * ld, ld, ds, n, 1.f, dkt, n, failed);
    gemm('T', 'N', D, nk, rows, g + t0 * ld, ld, drop.on ? pd : p, n, 1.f, dvt, n, failed);
  });
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < D; ++d) {
      dk[j * ld + d] = dkt[d * n + j];
      dv[j * ld + d] = dvt[d * n + j];
    }
}

Head head_at(const AttentionDims& dims, const uint8_t* key_valid, const float* q, const float* k,
             const float* v, int64_t b, int64_t h) {
  const int64_t T = dims.seq_len, H = dims.n_heads, D = dims.d_head;
  const int64_t off = (b * T * H + h) * D;
  const uint8_t* valid = key_valid ? key_valid + b * T : nullptr;
  return Head{q + off, k + off, v + off, valid, T, D, H * D, key_count(valid, T)};
}

}  // namespace

void full_attention_forward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                            const float* q, const float* k, const float* v, float* out,
                            float* stats, float dropout_p, uint64_t dropout_key) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads;
  if (B * T * H == 0) return;
  std::atomic<int> failed{0};
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const Head hd = head_at(dims, key_valid, q, k, v, b, h);
      const BlockDropout drop = block_dropout(dropout_p, dropout_key, T, H, b, h, 0);
      const int64_t tile_floats = row_tile(hd.n) * hd.n;
      const int64_t extra = drop.on ? tile_floats + hd.n : 0;
      float* scratch = thread_scratch(size_t(2 * hd.n * hd.D + tile_floats + extra) + 1);
      forward_head(hd, causal, drop, out + (hd.q - q), stats + (b * H + h) * T * kRowStats,
                   scratch, failed);
    }
  throw_if_failed("softmax_attention_forward", failed);
}

void full_attention_backward(const AttentionDims& dims, bool causal, const uint8_t* key_valid,
                             const float* q, const float* k, const float* v, const float* stats,
                             const float* d_out, float* dq, float* dk, float* dv, float dropout_p,
                             uint64_t dropout_key) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads;
  if (B * T * H == 0) return;
  std::atomic<int> failed{0};
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const Head hd = head_at(dims, key_valid, q, k, v, b, h);
      const BlockDropout drop = block_dropout(dropout_p, dropout_key, T, H, b, h, 0);
      const int64_t tile_floats = backward_row_tile(hd.n) * hd.n;
      const int64_t extra = drop.on ? tile_floats + hd.n : 0;
      float* scratch = thread_scratch(size_t(4 * hd.n * hd.D + 2 * tile_floats + extra) + 1);
      const int64_t off = hd.q - q;
      backward_head(hd, causal, drop, stats + (b * H + h) * T * kRowStats, d_out + off, dq + off,
                    dk + off, dv + off, scratch, failed);
    }
  throw_if_failed("softmax_attention_backward", failed);
}

}  // namespace tn::kernel_detail
