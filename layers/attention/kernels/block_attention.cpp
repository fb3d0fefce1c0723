// Block-diagonal attention engine, parallel over (batch, head, block); blocks are independent.
// Legend: B batch, T seq_len, H n_heads, D d_head, W block_size; rows of one (b, h) are H·D apart.
#include "layers/attention/kernels/block_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/runtime/math/isa_clones.h"
#include "layers/attention/kernels/attention_dropout.h"
#include "layers/attention/kernels/kernel_utils.h"

namespace tn::kernel_detail {
namespace {

/// One (b, h, block): pointers at the block's first row; probs at row 0 of the block ([n][W]).
struct BlockPtrs {
  const float* q;
  const float* k;
  const float* v;
  const uint8_t* valid;  // key_valid for the block's keys, or null
  int64_t stride;        // H·D
  int64_t n;             // rows in this block (W, or fewer for the last one)
  int64_t width;         // W: row length of probs
};

constexpr int64_t kTileRows = 64;  // query rows whose d_logit rows are kept at once in backward

/// The probabilities of query row i of a block (row_dots, then relu or softmax over the allowed
/// keys; zeros after them) into prow, and with dropout the row's weights into mrow.
template <class V>
void probs_row(const BlockPtrs& p, const float* qi, const float* kb, int64_t D, int64_t i,
               DiagInnerKind inner, bool causal, const BlockDropout& drop, float* __restrict prow,
               float* __restrict mrow) {
  const int64_t n = p.n, W = p.width;
  const int64_t jmax = causal ? i + 1 : n;
  fill_zero(prow + jmax, W - jmax);
  // Logits of every key up to jmax; masked ones are overwritten below, so their content cannot
  // leak.
  row_dots<V>(qi, kb, D, jmax, D, prow);
  if (inner == DiagInnerKind::Relu) {
    for (int64_t j = 0; j < jmax; ++j) prow[j] = std::max(prow[j], 0.f);
    if (p.valid)
      for (int64_t j = 0; j < jmax; ++j) prow[j] = p.valid[j] ? prow[j] : 0.f;
  } else {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    if (p.valid)
      for (int64_t j = 0; j < jmax; ++j) prow[j] = p.valid[j] ? prow[j] : neg_inf;
    float row_max = neg_inf;
    for (int64_t j = 0; j < jmax; ++j) row_max = std::max(row_max, prow[j]);
    if (row_max == neg_inf) {  // no unmasked key: A = 0
      fill_zero(prow, jmax);
    } else {
      // Separate branch-free loops so the exp vectorises; masked entries are exp(-inf) = 0.
      for (int64_t j = 0; j < jmax; ++j) prow[j] = exp_nonpositive(prow[j] - row_max);
      float sum = 0.f;  // plain in-order sum: the same bits whether or not the compiler vectorises it
      for (int64_t j = 0; j < jmax; ++j) sum += prow[j];
      const float inv = 1.f / sum;  // sum >= 1: the max entry contributes exp(0)
      for (int64_t j = 0; j < jmax; ++j) prow[j] *= inv;
    }
  }
  if (drop.on) drop.row(i, jmax, mrow);
}

/// One block of block_attention_forward, with V the vector type of the instruction set it is
/// compiled for (run through run_at_width). Output rows are accumulated kBlockRows at a time
/// (RowsAcc: each row's bits are those of one row at a time).
template <int kD, class V>
void forward_block(const BlockPtrs& p, int64_t d_head, DiagInnerKind inner, bool causal,
                   const BlockDropout& drop, float* __restrict out, float* __restrict probs,
                   float* __restrict scratch) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride, n = p.n, W = p.width;
  float* __restrict kb = scratch;  // [n][D] the block's keys and values, gathered (see gather_rows)
  float* __restrict vb = kb + n * D;
  float* __restrict acc_row = vb + n * D;  // [D] for a runtime width
  float* __restrict mrows = acc_row + D;   // [4][n] dropout weights of a block of rows
  gather_rows(p.k, st, n, D, kb);
  gather_rows(p.v, st, n, D, vb);
  auto valid_key = [&](int64_t j) { return !p.valid || p.valid[j]; };
  for_row_blocks<kBlockRows<kD, V>>(n, [&]<int R>(int64_t i0) {
    for (int r = 0; r < R; ++r)
      probs_row<V>(p, p.q + (i0 + r) * st, kb, D, i0 + r, inner, causal, drop,
                   probs + (i0 + r) * W, mrows + r * n);
    // Branch-free over allowed keys (0·v_j is exact for finite v, as in the reference's A V);
    // masked keys are skipped by mask, not by value, so a padded key's v (even NaN) never enters.
    // With dropout, out_i = Σ_j A_ij·m_ij v_j while probs keeps the pre-dropout A.
    auto coef = [&](int r, int64_t j) {
      const float a = probs[(i0 + r) * W + j];
      return drop.on ? a * mrows[r * n + j] : a;
    };
    RowsAcc<kD, V, R> acc(acc_row, D);
    acc.zero();
    const int64_t common = causal ? i0 + 1 : n;  // keys every row of the block sees
    add_lower_rows<R>(acc, i0, common, coef, valid_key, vb, D);
    for (int r = 0; r < R; ++r) acc.store(r, out + (i0 + r) * st);
  });
}

// Per tile of query rows: d_logit rows (dA = g_i·v_j where A_ij != 0; softmax: A ⊙ (dA − Σ A dA)),
// dq rows, then dk, dv with the rows in registers (kBlockRows keys at a time), accumulated over
// query rows in ascending order. With dropout (weights m_ij recomputed from the key), dA_ij =
// m_ij·(g_i·v_j) and dv_j = Σ_i A_ij·m_ij g_i; the softmax/relu step uses the saved pre-dropout A.
// Masked keys are skipped by mask (their gradients are 0); other zero terms are added (exact for
// finite inputs) rather than tested, since a value test is an unpredictable branch for relu.
template <int kD, class V>
void backward_block(const BlockPtrs& p, int64_t d_head, DiagInnerKind inner, bool causal,
                    const BlockDropout& drop, const float* __restrict probs,
                    const float* __restrict d_out,
                    float* __restrict dq, float* __restrict dk, float* __restrict dv,
                    float* __restrict scratch) {
  const int64_t D = kD > 0 ? kD : d_head;
  const int64_t st = p.stride, n = p.n, W = p.width;
  const int64_t tile = std::min(n, kTileRows);
  constexpr int kR = kBlockRows<kD, V>;
  float* __restrict kb = scratch;  // [n][D] the block's keys and values, gathered
  float* __restrict vb = kb + n * D;
  float* __restrict qt = vb + n * D;  // [tile][D] the tile's queries and upstream gradients
  float* __restrict gt = qt + tile * D;
  float* __restrict d_logit = gt + tile * D;  // [tile][W]
  float* __restrict acc_row = d_logit + tile * W;  // [D] for a runtime width
  float* __restrict mrow = acc_row + D;             // [n] dropout weights of one row
  float* __restrict pd = mrow + n;                  // [tile][W] A ⊙ m of the tile (dropout only)
  gather_rows(p.k, st, n, D, kb);
  gather_rows(p.v, st, n, D, vb);
  auto valid_key = [&](int64_t j) { return !p.valid || p.valid[j]; };
  for (int64_t i0 = 0; i0 < n; i0 += tile) {
    const int64_t i1 = std::min(n, i0 + tile);
    gather_rows(p.q + i0 * st, st, i1 - i0, D, qt);
    gather_rows(d_out + i0 * st, st, i1 - i0, D, gt);
    for (int64_t i = i0; i < i1; ++i) {
      const float* gi = gt + (i - i0) * D;
      const float* prow = probs + i * W;
      float* __restrict drow = d_logit + (i - i0) * W;
      const int64_t jmax = causal ? i + 1 : n;
      row_dots<V>(gi, vb, D, jmax, D, drow);
      for (int64_t j = 0; j < jmax; ++j)
        drow[j] = prow[j] != 0.f ? drow[j] : 0.f;  // masked, relu zeros
      if (drop.on) {
        drop.row(i, jmax, mrow);
        float* __restrict pdrow = pd + (i - i0) * W;
        for (int64_t j = 0; j < jmax; ++j) {
          drow[j] *= mrow[j];
          pdrow[j] = prow[j] * mrow[j];
        }
      }
      if (inner == DiagInnerKind::Softmax) {
        // Through dot(): a plain `c += p*dA` loop is vectorised as an in-order reduction without
        // FMA while its scalar version uses FMA, so the bits would depend on jmax (breaks padding
        // invariance).
        const float c = dot<V>(prow, drow, jmax);
        for (int64_t j = 0; j < jmax; ++j) drow[j] = prow[j] * (drow[j] - c);
      }
    }
    // dq_i = Σ_j dA'_ij k_j over the allowed keys, kR rows of the tile at a time.
    for_row_blocks<kR>(i1 - i0, [&]<int R>(int64_t t0) {
      const int64_t i = i0 + t0;
      RowsAcc<kD, V, R> acc(acc_row, D);
      acc.zero();
      const int64_t common = causal ? i + 1 : n;
      add_lower_rows<R>(acc, i, common,
                        [&](int r, int64_t j) { return d_logit[(t0 + r) * W + j]; }, valid_key,
                        kb, D);
      for (int r = 0; r < R; ++r) acc.store(r, dq + (i + r) * st);
    });
    // dv weights A' = A ⊙ m (row i at a_tile + (i − i0)·W); without dropout the saved A itself.
    const float* a_tile = drop.on ? pd : probs + i0 * W;
    // y_j (+)= Σ_{i of the tile that see key j} M_ij x_i for keys j0..j0+R-1 (M = dA', x = q: dk;
    // M = A', x = g: dv), each key's terms in order of i.
    auto key_rows = [&]<int R>(int64_t j0, const float* M, const float* x, float* y) {
      RowsAcc<kD, V, R> acc(acc_row, D);
      for (int r = 0; r < R; ++r)
        if (i0 == 0)
          acc.zero();
        else
          acc.load(r, y + (j0 + r) * st);
      const int64_t first = causal ? std::max(i0, j0) : i0;  // rows that see key j0
      const int64_t all = causal ? std::max(i0, j0 + R - 1) : i0;  // rows that see every key
      add_upper_rows<R>(acc, j0, first, all, i1,
                        [&](int64_t i, int r) { return M[(i - i0) * W + j0 + r]; },
                        [&](int64_t i) { return x + (i - i0) * D; });
      for (int r = 0; r < R; ++r) acc.store(r, y + (j0 + r) * st);
    };
    auto keys = [&]<int R>(int64_t j0) {
      key_rows.template operator()<R>(j0, d_logit, qt, dk);
      key_rows.template operator()<R>(j0, a_tile, gt, dv);
    };
    for_row_blocks<kR>(n, [&]<int R>(int64_t j0) {
      bool all_valid = true;
      for (int r = 0; r < R; ++r) all_valid = all_valid && (!p.valid || p.valid[j0 + r]);
      if (all_valid) {
        keys.template operator()<R>(j0);
        return;
      }
      for (int64_t j = j0; j < j0 + R; ++j) {
        if (p.valid && !p.valid[j]) {  // masked key: no gradient
          fill_zero(dk + j * st, D);
          fill_zero(dv + j * st, D);
          continue;
        }
        keys.template operator()<1>(j);
      }
    });
  }
}

template <int kD>
struct ForwardBlock {
  template <class V, class... Args>
  static void run(Args&&... args) {
    forward_block<kD, V>(std::forward<Args>(args)...);
  }
};

template <int kD>
struct BackwardBlock {
  template <class V, class... Args>
  static void run(Args&&... args) {
    backward_block<kD, V>(std::forward<Args>(args)...);
  }
};

}  // namespace

void block_attention_forward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                             bool causal, const uint8_t* key_valid, const float* q, const float* k,
                             const float* v, float* out, float* probs, float dropout_p,
                             uint64_t dropout_key) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, W = block_size;
  if (B * T * H == 0) return;
  const int64_t n_blocks = (T + W - 1) / W;
  dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t blk = 0; blk < n_blocks; ++blk) {
          const int64_t s0 = blk * W;
          const int64_t off = ((b * T + s0) * H + h) * D;
          BlockPtrs p{q + off, k + off,
                      v + off, key_valid ? key_valid + b * T + s0 : nullptr,
                      H * D,   std::min(W, T - s0),
                      W};
          const int64_t n = std::min(W, T);
          run_at_width<ForwardBlock<kD>>(p, D, inner, causal,
                            block_dropout(dropout_p, dropout_key, T, H, b, h, s0), out + off,
                            probs + ((b * H + h) * T + s0) * W,
                            thread_scratch(size_t((2 * n + 1) * D + 4 * n)));  // k, v; acc; weights
        }
  });
}

void block_attention_backward(const AttentionDims& dims, int64_t block_size, DiagInnerKind inner,
                              bool causal, const uint8_t* key_valid, const float* q, const float* k,
                              const float* v, const float* probs, const float* d_out, float* dq,
                              float* dk, float* dv, float dropout_p, uint64_t dropout_key) {
  const int64_t B = dims.batch, T = dims.seq_len, H = dims.n_heads, D = dims.d_head, W = block_size;
  if (B * T * H == 0) return;
  const int64_t n_blocks = (T + W - 1) / W;
  dispatch_d_head(D, [&]<int kD>() {
#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t blk = 0; blk < n_blocks; ++blk) {
          const int64_t s0 = blk * W;
          const int64_t off = ((b * T + s0) * H + h) * D;
          BlockPtrs p{q + off, k + off,
                      v + off, key_valid ? key_valid + b * T + s0 : nullptr,
                      H * D,   std::min(W, T - s0),
                      W};
          const int64_t n = std::min(W, T), tile = std::min(n, kTileRows);
          // k, v rows; q, d_out tile rows; d_logit tile; acc row; dropout weights row; A' tile
          float* scratch =
              thread_scratch(size_t((2 * n + 2 * tile + 1) * D + 2 * tile * W + n));
          run_at_width<BackwardBlock<kD>>(p, D, inner, causal,
                             block_dropout(dropout_p, dropout_key, T, H, b, h, s0),
                             probs + ((b * H + h) * T + s0) * W, d_out + off, dq + off, dk + off,
                             dv + off, scratch);
        }
  });
}

}  // namespace tn::kernel_detail
