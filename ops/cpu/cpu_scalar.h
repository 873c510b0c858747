#pragma once
// Internal to ops/cpu: the scalar functions that ops/core/elementwise.def's
// SS_CPU and SS_CPU_INT columns name, for the ops whose scalar op is more
// than an expression. Each takes and gives the operand's own C++ type and
// inlines into the kernel's loop (cpu_elementwise.cpp).

#include <cmath>
#include <type_traits>

#include "ops/core/op_error.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

template <class T>
using Unsigned = std::make_unsigned_t<T>;

// Ints wrap on overflow, like torch: computed unsigned, where wrapping is
// defined (the most negative value negates to itself).
template <class T>
T wrapping_neg(T v) {
  return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(v));
}
template <class T>
T wrapping_add(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) + Unsigned<T>(b));
}
template <class T>
T wrapping_sub(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) - Unsigned<T>(b));
}
template <class T>
T wrapping_mul(T a, T b) {
  return static_cast<T>(Unsigned<T>(a) * Unsigned<T>(b));
}

/// 1 / (1 + e^-v), never taking exp of a large positive number.
template <class T>
T stable_sigmoid(T v) {
  if (v >= 0) return T(1) / (T(1) + std::exp(-v));
  T e = std::exp(v);
  return e / (T(1) + e);
}

/// Python's floored division and modulo for floats (as CPython and torch).
template <class T>
T float_floordiv(T a, T b) {
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
T float_mod(T a, T b) {
  T r = std::fmod(a, b);
  if (r != 0) {
    if ((r < 0) != (b < 0)) r += b;
  } else {
    r = std::copysign(T(0), b);
  }
  return r;
}

// An integer divisor of 0 is the user's value, not a broken precondition:
// a ValueError at the `.ss` line (torch raises ZeroDivisionError).
[[noreturn]] inline void zero_divisor(const char* op, const char* what) {
  throw OpError(
      OpError::Kind::Value, std::string("integer ") + what + " by zero", op);
}

template <class T>
T int_floordiv(T a, T b) {
  if (b == 0) zero_divisor("floordiv", "division");
  if (b == -1) return wrapping_neg(a);
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
template <class T>
T int_mod(T a, T b) {
  if (b == 0) zero_divisor("mod", "modulo");
  if (b == -1) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <class T>
T int_pow(T base, T e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    fail("binary", "integers to negative integer powers are not allowed");
  }
  Unsigned<T> result = 1, b = static_cast<Unsigned<T>>(base);
  for (Unsigned<T> k = static_cast<Unsigned<T>>(e); k; k >>= 1) {
    if (k & 1) result *= b;  // wraps like torch
    b *= b;
  }
  return static_cast<T>(result);
}

}  // namespace ss::ops::cpu
