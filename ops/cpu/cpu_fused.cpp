// Fused kernels (Note [Fused kernels] in ops/api_fused.cpp): softmax and
// log_softmax, layer_norm (with its affine part) and rms_norm along the
// last axis, gelu, and their VJPs, each one pass over a row or a block
// that stays in cache, instead of the composites' five to fifteen
// elementwise passes and temporaries. f32 rows on an AVX2 CPU run the
// vector row kernels (Note [Vector row kernels] in cpu_vrows.cpp) and the
// vector exp and erf (Note [Vector transcendentals]); f64 takes these
// portable loops and libm.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_rows.h"
#include "ops/cpu/cpu_vmath.h"
#include "ops/cpu/cpu_vrows.h"

namespace ss::ops::cpu {

namespace {

/// Calls f(offset, length) over [n] elements in cache-sized blocks, the
/// blocks split over threads (Note [Intra-op threads]).
template <class F>
void blocks(int64_t n, F f) {
  constexpr int64_t kBlock = 1024;
  int64_t count = (n + kBlock - 1) / kBlock;
  parallel_for(count, kElementGrain / kBlock, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k)
      f(k * kBlock, std::min(kBlock, n - k * kBlock));
  });
}

constexpr double kSqrtHalf = 0.7071067811865476;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)
constexpr double kTanhK0 = 0.7978845608028654;      // sqrt(2 / pi)
constexpr double kTanhK1 = 0.044715;

/// A tensor like [like], filled row by row (its last axis) by
/// f(T{}, row's offset, n, out): the row walk of the row kernels.
template <class F>
Tensor by_rows(const Tensor& like, F f) {
  Tensor out = Tensor::empty(like.shape(), like.dtype());
  if (like.numel() == 0) return out;
  int64_t n = like.rank() == 0 ? 1 : like.shape().back();
  visit_float(like.dtype(), "softmax", [&](auto t) {
    parallel_for(like.numel() / n,
                 std::max<int64_t>(1, kElementGrain / n),
                 [&](int64_t b, int64_t e) {
                   for (int64_t r = b; r < e; ++r) f(t, r * n, n, out);
                 });
  });
  return out;
}

}  // namespace

Tensor softmax_last(const Tensor& x, bool log) {
  return by_rows(x, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* xr = x.data<T>() + at;
    T* yr = out.data<T>() + at;
    softmax_row(xr, yr, n, log);
  });
}

Tensor softmax_last_backward(const Tensor& g, const Tensor& y, bool log) {
  return by_rows(y, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* gr = g.data<T>() + at;
    const T* yr = y.data<T>() + at;
    T* o = out.data<T>() + at;
    if constexpr (std::is_same_v<T, float>)
      if (has_avx2_fma()) return vrows::softmax_backward(gr, yr, o, n, log);
    if (log) {  // g - softmax * sum(g), softmax = exp(log_softmax)
      T s = row_sum(gr, n);
      vec_fn(vmath::Fn::Exp, yr, o, n);
      for (int64_t j = 0; j < n; ++j) o[j] = gr[j] - o[j] * s;
    } else {  // y * (g - sum(g * y))
      T s = row_dot(gr, yr, n);
      for (int64_t j = 0; j < n; ++j) o[j] = yr[j] * (gr[j] - s);
    }
  });
}

namespace {

/// The scalar row of vrows::norm (f64, or a CPU without AVX2).
template <class T>
void norm_row(const T* x,
              T* y,
              int64_t n,
              T eps,
              bool centered,
              const T* gamma,
              const T* beta,
              T* mean,
              T* rstd) {
  // Two walks for the statistics, as the composite's mean and variance:
  // the mean, then the mean of squared deviations.
  T mu = centered ? row_sum(x, n) / T(n) : T(0);
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] - mu;
  T r = T(1) / std::sqrt(row_dot(y, y, n) / T(n) + eps);
  for (int64_t j = 0; j < n; ++j) {
    y[j] *= r;
    if (gamma) y[j] = y[j] * gamma[j] + (beta ? beta[j] : T(0));
  }
  *mean = mu;
  *rstd = r;
}

/// The scalar row of vrows::norm_backward; [xhat] is scratch of [n].
template <class T>
void norm_backward_row(const T* g,
                       const T* x,
                       T mu,
                       T r,
                       bool centered,
                       const T* gamma,
                       T* dx,
                       T* dgamma,
                       T* dbeta,
                       int64_t n) {
  T sd = 0, sdx = 0;
  for (int64_t j = 0; j < n; ++j) {
    T xh = (x[j] - mu) * r, d = gamma ? g[j] * gamma[j] : g[j];
    sd += d, sdx += d * xh;
    if (dgamma) dgamma[j] += g[j] * xh;
    if (dbeta) dbeta[j] += g[j];
  }
  T md = centered ? sd / T(n) : T(0), mdx = sdx / T(n);
  for (int64_t j = 0; j < n; ++j) {
    T xh = (x[j] - mu) * r, d = gamma ? g[j] * gamma[j] : g[j];
    dx[j] = r * (d - md - xh * mdx);
  }
}

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Note [Norm gradients by fixed chunks]
// gamma's and beta's gradients sum over every row. The rows are cut into
// chunks of kNormChunk rows, whatever the thread count; each chunk sums
// its rows in order into its own partial row, and the partials are then
// added in chunk order: the same sums in the same order on 1 thread or
// many, so the result does not depend on the thread count. The chunk
// (backend::kNormChunk) is the CUDA backend's too, for the same bits.
using backend::kNormChunk;

}  // namespace

std::array<Tensor, 3> norm_last(const Tensor& x,
                                double eps,
                                bool centered,
                                const Tensor& gamma,
                                const Tensor& beta) {
  Shape rs(x.shape().begin(), x.shape().end() - (x.rank() ? 1 : 0));
  Tensor mean = Tensor::empty(rs, x.dtype()),
         rstd = Tensor::empty(rs, x.dtype());
  Tensor y = by_rows(x, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* xr = x.data<T>() + at;
    T* yr = out.data<T>() + at;
    const T* gm = data_or_null<T>(gamma);
    const T* bt = data_or_null<T>(beta);
    T* mu = mean.data<T>() + at / n;
    T* r = rstd.data<T>() + at / n;
    if constexpr (std::is_same_v<T, float>)
      if (has_avx2_fma())
        return vrows::norm(xr, yr, n, float(eps), centered, gm, bt, mu, r);
    norm_row<T>(xr, yr, n, T(eps), centered, gm, bt, mu, r);
  });
  return {y, mean, rstd};
}

std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& mean,
                                         const Tensor& rstd,
                                         bool centered,
                                         const Tensor& gamma) {
  Tensor dx = Tensor::empty(x.shape(), x.dtype());
  const backend::NormChunks nc = backend::norm_chunks(x);
  const int64_t n = nc.n, rows = nc.rows, chunks = nc.chunks;
  bool affine = gamma.defined();
  Shape ps = {chunks, n}, gs = {n};
  // Note [Norm gradients by fixed chunks]
  Tensor part_g = affine ? Tensor::zeros(ps, x.dtype()) : Tensor();
  Tensor part_b = affine ? Tensor::zeros(ps, x.dtype()) : Tensor();
  Tensor dgamma = affine ? Tensor::zeros(gs, x.dtype()) : Tensor();
  Tensor dbeta = affine ? Tensor::zeros(gs, x.dtype()) : Tensor();
  if (rows == 0) return {dx, dgamma, dbeta};
  visit_float(x.dtype(), "layer_norm", [&](auto t) {
    using T = decltype(t);
    const T* gm = data_or_null<T>(gamma);
    parallel_for(chunks,
                 std::max<int64_t>(1, kElementGrain / (kNormChunk * n)),
                 [&](int64_t cb, int64_t ce) {
                   for (int64_t c = cb; c < ce; ++c) {
                     T* pg = affine ? part_g.data<T>() + c * n : nullptr;
                     T* pb = affine ? part_b.data<T>() + c * n : nullptr;
                     int64_t end = std::min(rows, (c + 1) * kNormChunk);
                     for (int64_t r = c * kNormChunk; r < end; ++r) {
                       const T* gr = g.data<T>() + r * n;
                       const T* xr = x.data<T>() + r * n;
                       T mu = mean.data<T>()[r], rs = rstd.data<T>()[r];
                       T* o = dx.data<T>() + r * n;
                       if constexpr (std::is_same_v<T, float>)
                         if (has_avx2_fma()) {
                           vrows::norm_backward(
                               gr, xr, mu, rs, centered, gm, o, pg, pb, n);
                           continue;
                         }
                       norm_backward_row<T>(
                           gr, xr, mu, rs, centered, gm, o, pg, pb, n);
                     }
                   }
                 });
    if (!affine) return;
    T* dg = dgamma.data<T>();
    T* db = dbeta.data<T>();
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t j = 0; j < n; ++j) {
        dg[j] += part_g.data<T>()[c * n + j];
        db[j] += part_b.data<T>()[c * n + j];
      }
  });
  return {dx, dgamma, dbeta};
}

// Exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x
// + 0.044715 x^3))), as torch's gelu and the composite in ops/defs.
template <class T>
void gelu_run(const T* xb, T* ob, int64_t len, bool tanh) {
  if constexpr (std::is_same_v<T, float>) {
    if (has_avx512()) return vrows::gelu512(xb, ob, len, tanh);
    if (has_avx2_fma()) return vrows::gelu(xb, ob, len, tanh);
  }
  if (tanh) {
    for (int64_t j = 0; j < len; ++j)
      ob[j] = T(kTanhK0) * (xb[j] + T(kTanhK1) * xb[j] * xb[j] * xb[j]);
    vec_fn(vmath::Fn::Tanh, ob, ob, len);
  } else {
    for (int64_t j = 0; j < len; ++j) ob[j] = xb[j] * T(kSqrtHalf);
    vec_fn(vmath::Fn::Erf, ob, ob, len);
  }
  for (int64_t j = 0; j < len; ++j) ob[j] = T(0.5) * xb[j] * (T(1) + ob[j]);
}
template void gelu_run<float>(const float*, float*, int64_t, bool);
template void gelu_run<double>(const double*, double*, int64_t, bool);

Tensor gelu(const Tensor& x, bool tanh) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "gelu", [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    T* po = out.data<T>();
    blocks(x.numel(), [&](int64_t i, int64_t len) {
      gelu_run(px + i, po + i, len, tanh);
    });
  });
  return out;
}

// Exact: Phi(x) + x phi(x) = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) /
// sqrt(2 pi); tanh: 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 *
// 0.044715 x^2), t the forward's tanh.
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "gelu", [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    const T* pg = g.data<T>();
    T* po = out.data<T>();
    blocks(x.numel(), [&](int64_t i, int64_t len) {
      const T* xb = px + i;
      const T* gb = pg + i;
      T* ob = po + i;
      if constexpr (std::is_same_v<T, float>) {
        if (has_avx512()) return vrows::gelu_backward512(gb, xb, ob, len, tanh);
        if (has_avx2_fma()) return vrows::gelu_backward(gb, xb, ob, len, tanh);
      }
      std::array<T, 1024> a, b;  // per block: blocks run on several threads
      if (tanh) {
        for (int64_t j = 0; j < len; ++j)
          a[j] = T(kTanhK0) * (xb[j] + T(kTanhK1) * xb[j] * xb[j] * xb[j]);
        vec_fn(vmath::Fn::Tanh, a.data(), a.data(), len);
        for (int64_t j = 0; j < len; ++j) {
          T th = a[j], x2 = xb[j] * xb[j];
          T d = T(0.5) * (T(1) + th) + T(0.5) * xb[j] * (T(1) - th * th) *
                                           T(kTanhK0) *
                                           (T(1) + T(3 * kTanhK1) * x2);
          ob[j] = gb[j] * d;
        }
        return;
      }
      for (int64_t j = 0; j < len; ++j) {
        a[j] = xb[j] * T(kSqrtHalf);
        b[j] = T(-0.5) * xb[j] * xb[j];
      }
      vec_fn(vmath::Fn::Erf, a.data(), a.data(), len);
      vec_fn(vmath::Fn::Exp, b.data(), b.data(), len);
      for (int64_t j = 0; j < len; ++j)
        ob[j] =
            gb[j] * (T(0.5) * (T(1) + a[j]) + xb[j] * T(kInvSqrt2Pi) * b[j]);
    });
  });
  return out;
}

}  // namespace ss::ops::cpu
