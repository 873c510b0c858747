#pragma once
// The scalar functions that ops/core/elementwise.def's SS_CPU and
// SS_CPU_INT columns name, for the ops whose scalar op is more than an
// expression, once for every backend (SS_HD): the CPU kernels (through
// ops/cpu/cpu_scalar.h) and the CUDA ones (ops/cuda/cuda_elementwise.cu)
// expand the same columns over them, so both compute the same bits. Each
// takes and gives the operand's own C++ type.
//
// Note [Errors of the scalar ops]
// An integer division by zero and an integer to a negative power are
// errors of the user's values; the CPU throws them, a GPU thread cannot.
// So the functions here take their precondition as given (the _nonzero
// and _defined names say which) and each backend checks it its own way:
// cpu_scalar.h throws, cuda_elementwise.cu writes 0 and raises a bit of
// the device's error word.

#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/core/host_device.h"

namespace ss::ops::scalar {

template <class T>
using Unsigned = std::make_unsigned_t<T>;

// Ints wrap on overflow, like torch: computed unsigned, where wrapping is
// defined (the most negative value negates to itself).
template <class T>
SS_HD T wrapping_neg(T v) {
  return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(v));
}
template <class T>
SS_HD T wrapping_add(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) + Unsigned<T>(b));
}
template <class T>
SS_HD T wrapping_sub(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) - Unsigned<T>(b));
}
template <class T>
SS_HD T wrapping_mul(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) * Unsigned<T>(b));
}

/// 1 / (1 + e^-v), never taking exp of a large positive number.
template <class T>
SS_HD T stable_sigmoid(T v) {
  if (v >= 0) return T(1) / (T(1) + std::exp(-v));
  T e = std::exp(v);
  return e / (T(1) + e);
}

/// Python's floored division and modulo for floats (as CPython and torch).
template <class T>
SS_HD T float_floordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  if (div - fl > T(0.5)) fl += 1;
  return fl;
}
template <class T>
SS_HD T float_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0) {
    if ((r < 0) != (b < 0)) r += b;
  } else {
    r = std::copysign(T(0), b);
  }
  return r;
}

/// Floored integer division and modulo (Python's); [b] != 0 (Note [Errors
/// of the scalar ops]).
template <class T>
SS_HD T int_floordiv_nonzero(T a, T b) {
  if (b == -1) return wrapping_neg(a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <class T>
SS_HD T int_mod_nonzero(T a, T b) {
  if (b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Whether base^e is an integer: e >= 0, or a base of 1 or -1.
template <class T>
SS_HD bool int_pow_defined(T base, T e) {
  return e >= 0 || base == 1 || base == -1;
}
/// base^e, wrapping like torch; int_pow_defined(base, e) (Note [Errors of
/// the scalar ops]).
template <class T>
SS_HD T int_pow_defined_wrapping(T base, T e) {
  if (e < 0) return base == 1 ? T(1) : (e & 1) ? T(-1) : T(1);
  Unsigned<T> result = 1, b = static_cast<Unsigned<T>>(base);
  for (Unsigned<T> k = static_cast<Unsigned<T>>(e); k; k >>= 1) {
    if (k & 1) result *= b;  // wraps like torch
    b *= b;
  }
  return static_cast<T>(result);
}

/// double -> integer without undefined behaviour (casts, fills): NaN gives
/// 0, out-of-range values saturate.
template <class I>
SS_HD I saturate(double v) {
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

/// One element of a cast between the unhalved dtypes (S, D: float,
/// double, int32_t, int64_t, bool): nonzero is true; floats saturate to
/// ints; the rest are C++'s conversions (round to nearest).
template <class S, class D>
SS_HD D convert_value(S s) {
  if constexpr (std::is_same_v<D, bool>)
    return s != S(0);
  else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>)
    return saturate<D>(s);
  else
    return static_cast<D>(s);
}

}  // namespace ss::ops::scalar
