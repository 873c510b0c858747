#pragma once
// The row helpers of the fused kernels (Note [Fused kernels] in
// ops/api_fused.cpp), shared by cpu_fused.cpp and cpu_attention.cpp (Note
// [Fused attention]): one softmax row, one sum, one dot product, so that
// attention's probabilities are softmax's, bit for bit, on either path.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_vmath.h"
#include "ops/cpu/cpu_vrows.h"

namespace ss::ops::cpu {

// out[i] = fn(in[i]) for the vector function [fn] (in place allowed).
template <class T>
void vec_fn(vmath::Fn fn, const T* in, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (has_avx2_fma()) return vmath::apply_f32(fn, in, out, n);
  for (int64_t i = 0; i < n; ++i)
    out[i] = fn == vmath::Fn::Exp    ? std::exp(in[i])
             : fn == vmath::Fn::Erf  ? std::erf(in[i])
             : fn == vmath::Fn::Tanh ? std::tanh(in[i])
                                     : std::log(in[i]);
}

/// backend::visit_float with this backend's errors: f(T{}) for f32, f64.
template <class F>
decltype(auto) visit_float(DType d, const char* op, F&& f) {
  return backend::visit_float(d, kBackend, op, std::forward<F>(f));
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

/// One row of [n]: y = softmax(x), or with [log] log_softmax(x) (y may be
/// x); where [lse] is not null, the row's log-sum-exp there (attention's
/// VJP recomputes the row from it). f32 on an AVX2 CPU runs the vector
/// row (Note [Vector row kernels] in cpu_vrows.cpp).
template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, T* lse = nullptr) {
  if constexpr (std::is_same_v<T, float>)
    if (has_avx2_fma()) return vrows::softmax(x, y, n, log, lse);
  T m = row_shift(x, n);
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] - m;
  vec_fn(vmath::Fn::Exp, y, y, n);
  T s = row_sum(y, n);
  if (lse) *lse = m + std::log(s);
  if (log) {  // (x - m) - log(s): m + log(s) first would round at 1000
    T ls = std::log(s);
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) - ls;
  } else {
    T inv = T(1) / s;
    for (int64_t j = 0; j < n; ++j) y[j] *= inv;
  }
}

}  // namespace ss::ops::cpu
