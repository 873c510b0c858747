// Note [Fused attention]
// softmax(scale * q k^T, masked) v in one kernel, forward and VJP, as
// FlashAttention computes it, in blocks of query rows: for each block of
// kRows (32) rows of one (batch, head) matrix it forms the block's scores
// against the keys it can see, takes each row's softmax there, and
// multiplies by v, so no n x t tensor is ever written to memory (the
// composite writes the scores, the masked scores, the probabilities and,
// backward, their gradients: eight passes over n x t values). Under the
// causal mask (key j visible to row i when j <= i, as torch.tril and
// causal(n, t)) a block of rows [i0, i1) sees keys [0, i1) only: the keys
// above the diagonal are never multiplied, about half the products of
// both passes when n = t. The VJP recomputes a block's probabilities from
// each row's log-sum-exp saved by the forward (FlashAttention's trade:
// products again instead of an n x t tensor kept for the backward pass).
//
// The products are gemms (cpu::gemm: oneDNN for f32, OpenBLAS for f64 and
// in deterministic mode, Note [f32 products on oneDNN]) on tiles of at
// most kTileMNK multiply-adds, the size below which OpenBLAS runs a gemm
// on the calling thread (interface/gemm.c: SMP_THRESHOLD_MIN x
// GEMM_MULTITHREAD_THRESHOLD) and below the 2^18 at which onednn_sgemm
// splits a product's rows over threads, so that the (batch, head) matrices
// can be split over this library's own threads (Note [Intra-op threads])
// without two pools competing. Each
// matrix is computed by one thread with the same tiles whatever the thread
// count or the number of matrices in the call, so results do not depend on
// either (deterministic mode runs heads and batch chunks apart and compares
// bits: Note [Heads one at a time] in interp/devices/lower/heads.cpp).
// dk and dv are sums over the row blocks, taken in block order.
// Measured (mid block's attention, 256 matrices of 128 x 128, Dh 32, one
// thread, forward and backward): 26 ms a step fused against 36 ms op by
// op; 32-row blocks and 64 take the same time there (32 skip more keys,
// 64 make larger products), 16 are slower.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_rows.h"
#include "ops/cpu/cpu_threads.h"

namespace ss::ops::cpu {

namespace {

constexpr int64_t kRows = 32;               // query rows per block
constexpr int64_t kTileMNK = 64 * 64 * 64;  // OpenBLAS's one-thread bound

/// Keys per tile: as many as keep a block's products under kTileMNK.
int64_t key_tile(int64_t d, int64_t e) {
  int64_t widest = std::max<int64_t>({d, e, 1});
  return std::clamp<int64_t>(kTileMNK / (kRows * widest), 8, 1024);
}

/// Calls f(j0, cols) for each tile of kc keys of [0, kend), in order.
template <class F>
void key_tiles(int64_t kend, int64_t kc, F f) {
  for (int64_t j0 = 0; j0 < kend; j0 += kc) f(j0, std::min(kc, kend - j0));
}

/// The shapes of one call (checked as the CUDA backend checks them).
using Dims = backend::AttentionDims;

/// The scores of rows [i0, i0 + rows) against keys [0, kend) into S
/// (ld kend): scale * q k^T, in tiles of kc keys.
template <class T>
void scores(const T* q,
            const T* k,
            T* S,
            int64_t rows,
            int64_t kend,
            int64_t d,
            int64_t kc,
            T scale) {
  // gemm's alpha = 0 reads neither q nor k (BLAS's convention), so a NaN
  // or an infinity in them would vanish where torch's (q k^T) * 0 is NaN
  // (the runtime fuzzer's scale=0.0): the product, then times 0.
  const bool zero = scale == T(0);
  key_tiles(kend, kc, [&](int64_t j0, int64_t cols) {
    gemm<T>(false,
            true,
            rows,
            cols,
            d,
            zero ? T(1) : scale,
            q,
            d,
            k + j0 * d,
            d,
            T(0),
            S + j0,
            kend);
    if (zero)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = j0; j < j0 + cols; ++j) S[r * kend + j] *= T(0);
  });
}

/// C [rows x width] (+)= P [rows x kend] @ X [kend x width], in tiles.
template <class T>
void times_keys(const T* P,
                const T* X,
                T* C,
                int64_t rows,
                int64_t kend,
                int64_t width,
                int64_t kc,
                T alpha) {
  key_tiles(kend, kc, [&](int64_t j0, int64_t cols) {
    gemm<T>(false,
            false,
            rows,
            width,
            cols,
            alpha,
            P + j0,
            kend,
            X + j0 * width,
            width,
            j0 == 0 ? T(0) : T(1),
            C,
            width);
  });
}

template <class T>
void forward(const Dims& m,
             const T* q,
             const T* k,
             const T* v,
             T* o,
             T* lse,
             T scale,
             bool causal) {
  const int64_t kc = key_tile(m.d, m.e);
  parallel_for(m.B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<T> S;
    for (int64_t b = b0; b < b1; ++b) {
      const T* qb = q + b * m.n * m.d;
      const T* kb = k + b * m.t * m.d;
      const T* vb = v + b * m.t * m.e;
      for (int64_t i0 = 0; i0 < m.n; i0 += kRows) {
        int64_t rows = std::min(kRows, m.n - i0);
        int64_t kend = m.visible(i0 + rows - 1, causal);
        T* ob = o + (b * m.n + i0) * m.e;
        if (kend == 0) {  // no keys: softmax of nothing, as torch's NaN
          std::fill(ob, ob + rows * m.e, std::numeric_limits<T>::quiet_NaN());
          std::fill(lse + b * m.n + i0,
                    lse + b * m.n + i0 + rows,
                    std::numeric_limits<T>::quiet_NaN());
          continue;
        }
        S.resize(size_t(rows * kend));
        scores(qb + i0 * m.d, kb, S.data(), rows, kend, m.d, kc, scale);
        for (int64_t r = 0; r < rows; ++r) {
          T* s = S.data() + r * kend;
          int64_t see = m.visible(i0 + r, causal);
          // softmax's own row (cpu_rows.h), its log-sum-exp kept.
          softmax_row(s, s, see, false, lse + b * m.n + i0 + r);
          std::fill(s + see, s + kend, T(0));
        }
        times_keys(S.data(), vb, ob, rows, kend, m.e, kc, T(1));
      }
    }
  });
}

template <class T>
void backward(const Dims& m,
              const T* go,
              const T* q,
              const T* k,
              const T* v,
              const T* o,
              const T* lse,
              T* dq,
              T* dk,
              T* dv,
              T scale,
              bool causal) {
  const int64_t kc = key_tile(m.d, m.e);
  parallel_for(m.B, 1, [&](int64_t b0, int64_t b1) {
    std::vector<T> P, dP, D;
    for (int64_t b = b0; b < b1; ++b) {
      const T* qb = q + b * m.n * m.d;
      const T* kb = k + b * m.t * m.d;
      const T* vb = v + b * m.t * m.e;
      const T* gb = go + b * m.n * m.e;
      const T* ob = o + b * m.n * m.e;
      T* dqb = dq + b * m.n * m.d;
      T* dkb = dk + b * m.t * m.d;
      T* dvb = dv + b * m.t * m.e;
      std::fill(dkb, dkb + m.t * m.d, T(0));
      std::fill(dvb, dvb + m.t * m.e, T(0));
      for (int64_t i0 = 0; i0 < m.n; i0 += kRows) {
        int64_t rows = std::min(kRows, m.n - i0);
        int64_t kend = m.visible(i0 + rows - 1, causal);
        if (kend == 0) {
          std::fill(dqb + i0 * m.d, dqb + (i0 + rows) * m.d, T(0));
          continue;
        }
        P.resize(size_t(rows * kend));
        dP.resize(size_t(rows * kend));
        D.resize(size_t(rows));
        // P = exp(scores - lse), the forward's probabilities again.
        scores(qb + i0 * m.d, kb, P.data(), rows, kend, m.d, kc, scale);
        for (int64_t r = 0; r < rows; ++r) {
          T* p = P.data() + r * kend;
          int64_t see = m.visible(i0 + r, causal);
          T l = lse[b * m.n + i0 + r];
          for (int64_t j = 0; j < see; ++j) p[j] -= l;
          vec_fn(vmath::Fn::Exp, p, p, see);
          std::fill(p + see, p + kend, T(0));
          // D = rowsum(dO * O): softmax's VJP's sum(g * y), through v.
          D[size_t(r)] = row_dot(gb + (i0 + r) * m.e, ob + (i0 + r) * m.e, m.e);
        }
        // dv += P^T dO (keys' tiles: rows of dv).
        key_tiles(kend, kc, [&](int64_t j0, int64_t cols) {
          gemm<T>(true,
                  false,
                  cols,
                  m.e,
                  rows,
                  T(1),
                  P.data() + j0,
                  kend,
                  gb + i0 * m.e,
                  m.e,
                  T(1),
                  dvb + j0 * m.e,
                  m.e);
        });
        // dP = dO v^T; dS = P * (dP - D), in dP.
        key_tiles(kend, kc, [&](int64_t j0, int64_t cols) {
          gemm<T>(false,
                  true,
                  rows,
                  cols,
                  m.e,
                  T(1),
                  gb + i0 * m.e,
                  m.e,
                  vb + j0 * m.e,
                  m.e,
                  T(0),
                  dP.data() + j0,
                  kend);
        });
        for (int64_t r = 0; r < rows; ++r) {
          T* ds = dP.data() + r * kend;
          const T* p = P.data() + r * kend;
          T dr = D[size_t(r)];
          int64_t see = m.visible(i0 + r, causal);
          for (int64_t j = 0; j < see; ++j) ds[j] = p[j] * (ds[j] - dr);
          std::fill(ds + see, ds + kend, T(0));
        }
        // dq = scale dS k; dk += scale dS^T q.
        times_keys(dP.data(), kb, dqb + i0 * m.d, rows, kend, m.d, kc, scale);
        key_tiles(kend, kc, [&](int64_t j0, int64_t cols) {
          gemm<T>(true,
                  false,
                  cols,
                  m.d,
                  rows,
                  scale,
                  dP.data() + j0,
                  kend,
                  qb + i0 * m.d,
                  m.d,
                  T(1),
                  dkb + j0 * m.d,
                  m.d);
        });
      }
    }
  });
}

}  // namespace

std::array<Tensor, 2> attention(const Tensor& q,
                                const Tensor& k,
                                const Tensor& v,
                                double scale,
                                bool causal) {
  Dims m = backend::attention_dims(q, k, v, kBackend);
  const backend::AttentionShapes shapes = backend::attention_shapes(q, m);
  Tensor o = Tensor::empty(shapes.out, q.dtype());
  Tensor lse = Tensor::empty(shapes.lse, q.dtype());
  if (o.numel() == 0) return {o, lse};
  visit_float(q.dtype(), "attention", [&](auto t) {
    using T = decltype(t);
    forward<T>(m,
               q.data<T>(),
               k.data<T>(),
               v.data<T>(),
               o.data<T>(),
               lse.data<T>(),
               T(scale),
               causal);
  });
  return {o, lse};
}

std::array<Tensor, 3> attention_backward(const Tensor& go,
                                         const Tensor& q,
                                         const Tensor& k,
                                         const Tensor& v,
                                         const Tensor& o,
                                         const Tensor& lse,
                                         double scale,
                                         bool causal) {
  Dims m = backend::attention_dims(q, k, v, kBackend);
  backend::check_attention_cotangent(go, o, q, kBackend);
  Tensor dq = Tensor::empty(q.shape(), q.dtype());
  Tensor dk = Tensor::empty(k.shape(), k.dtype());
  Tensor dv = Tensor::empty(v.shape(), v.dtype());
  if (m.B == 0) return {dq, dk, dv};
  if (m.n == 0 || m.t == 0) {
    return {Tensor::zeros(q.shape(), q.dtype()),
            Tensor::zeros(k.shape(), k.dtype()),
            Tensor::zeros(v.shape(), v.dtype())};
  }
  visit_float(q.dtype(), "attention", [&](auto t) {
    using T = decltype(t);
    backward<T>(m,
                go.data<T>(),
                q.data<T>(),
                k.data<T>(),
                v.data<T>(),
                o.data<T>(),
                lse.data<T>(),
                dq.data<T>(),
                dk.data<T>(),
                dv.data<T>(),
                T(scale),
                causal);
  });
  return {dq, dk, dv};
}

}  // namespace ss::ops::cpu
