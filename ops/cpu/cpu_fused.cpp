// Fused kernels (Note [Fused kernels] in ops/api_fused.cpp): softmax and
// log_softmax and layer_norm's normalisation along the last axis, gelu,
// and their VJPs, each one pass
// over a row or a block that stays in cache, instead of the composites'
// five to fifteen elementwise passes and temporaries. f32 rows take the
// vector exp and erf (Note [Vector transcendentals]); f64 takes libm's.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_vmath.h"

namespace ss::ops::cpu {

namespace {

// out[i] = fn(in[i]) for the vector function [fn] (in place allowed).
template <class T>
void vec_fn(vmath::Fn fn, const T* in, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (vmath::apply_f32(fn, in, out, n)) return;
  for (int64_t i = 0; i < n; ++i)
    out[i] = fn == vmath::Fn::Exp    ? std::exp(in[i])
             : fn == vmath::Fn::Erf  ? std::erf(in[i])
             : fn == vmath::Fn::Tanh ? std::tanh(in[i])
                                     : std::log(in[i]);
}

template <class F>
decltype(auto) visit_float(DType d, const char* op, F&& f) {
  if (d == DType::F32) return f(float{});
  if (d == DType::F64) return f(double{});
  fail(op, std::string("needs f32 or f64, not ") + types::dtype_name(d));
}

/// The row's max, NaN if it holds one (as reduce's Max), or 0 where that
/// is not finite (stable_shift in ops/defs: a row of -inf is shifted by 0).
template <class T>
T row_shift(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j)
    if (x[j] > m || x[j] != x[j]) m = x[j];
  return std::isfinite(m) ? m : T(0);
}

template <class T>
T row_sum(const T* x, int64_t n) {
  T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    a0 += x[j], a1 += x[j + 1], a2 += x[j + 2], a3 += x[j + 3];
  for (; j < n; ++j) a0 += x[j];
  return (a0 + a1) + (a2 + a3);
}

template <class T>
T row_dot(const T* x, const T* y, int64_t n) {
  T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    a0 += x[j] * y[j], a1 += x[j + 1] * y[j + 1], a2 += x[j + 2] * y[j + 2],
        a3 += x[j + 3] * y[j + 3];
  for (; j < n; ++j) a0 += x[j] * y[j];
  return (a0 + a1) + (a2 + a3);
}

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
    T m = row_shift(xr, n);
    for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - m;
    vec_fn(vmath::Fn::Exp, yr, yr, n);
    T s = row_sum(yr, n);
    if (log) {  // (x - m) - log(s): m + log(s) first would round at 1000
      T ls = std::log(s);
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] - m) - ls;
    } else {
      T inv = T(1) / s;
      for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
    }
  });
}

Tensor softmax_last_backward(const Tensor& g, const Tensor& y, bool log) {
  return by_rows(y, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* gr = g.data<T>() + at;
    const T* yr = y.data<T>() + at;
    T* o = out.data<T>() + at;
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

std::array<Tensor, 3> layer_norm_last(const Tensor& x, double eps) {
  Shape rs(x.shape().begin(), x.shape().end() - (x.rank() ? 1 : 0));
  Tensor mean = Tensor::empty(rs, x.dtype()),
         rstd = Tensor::empty(rs, x.dtype());
  Tensor y = by_rows(x, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* xr = x.data<T>() + at;
    T* yr = out.data<T>() + at;
    // Two passes over the cached row, as the composite's mean and
    // variance: mean, then the mean of squared deviations.
    T mu = row_sum(xr, n) / T(n);
    for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - mu;
    T var = row_dot(yr, yr, n) / T(n);
    T r = T(1) / std::sqrt(var + T(eps));
    for (int64_t j = 0; j < n; ++j) yr[j] *= r;
    mean.data<T>()[at / n] = mu;
    rstd.data<T>()[at / n] = r;
  });
  return {y, mean, rstd};
}

Tensor layer_norm_last_backward(const Tensor& g,
                                const Tensor& x,
                                const Tensor& mean,
                                const Tensor& rstd) {
  return by_rows(x, [&](auto t, int64_t at, int64_t n, Tensor& out) {
    using T = decltype(t);
    const T* xr = x.data<T>() + at;
    const T* gr = g.data<T>() + at;
    T* o = out.data<T>() + at;
    T mu = mean.data<T>()[at / n], r = rstd.data<T>()[at / n];
    for (int64_t j = 0; j < n; ++j) o[j] = (xr[j] - mu) * r;  // xhat
    T mg = row_sum(gr, n) / T(n), mgx = row_dot(gr, o, n) / T(n);
    for (int64_t j = 0; j < n; ++j) o[j] = r * (gr[j] - mg - o[j] * mgx);
  });
}

// Exact: 0.5 x (1 + erf(x / sqrt 2)); tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x
// + 0.044715 x^3))), as torch's gelu and the composite in ops/defs.
Tensor gelu(const Tensor& x, bool tanh) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  visit_float(x.dtype(), "gelu", [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    T* po = out.data<T>();
    blocks(x.numel(), [&](int64_t i, int64_t len) {
      const T* xb = px + i;
      T* ob = po + i;
      if (tanh) {
        for (int64_t j = 0; j < len; ++j)
          ob[j] = T(kTanhK0) * (xb[j] + T(kTanhK1) * xb[j] * xb[j] * xb[j]);
        vec_fn(vmath::Fn::Tanh, ob, ob, len);
      } else {
        for (int64_t j = 0; j < len; ++j) ob[j] = xb[j] * T(kSqrtHalf);
        vec_fn(vmath::Fn::Erf, ob, ob, len);
      }
      for (int64_t j = 0; j < len; ++j) ob[j] = T(0.5) * xb[j] * (T(1) + ob[j]);
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
      std::array<T, 1024> a, b;  // per block: blocks run on several threads
      const T* xb = px + i;
      const T* gb = pg + i;
      T* ob = po + i;
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
