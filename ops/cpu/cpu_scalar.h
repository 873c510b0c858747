#pragma once
// Internal to ops/cpu: the scalar functions that ops/core/elementwise.def's
// SS_CPU and SS_CPU_INT columns name, for the ops whose scalar op is more
// than an expression: ops/core/elementwise_scalar.h's, shared with the CUDA
// kernels, and here the integer ones that throw. Each takes and gives the
// operand's own C++ type and inlines into the kernel's loop
// (cpu_elementwise.cpp).

#include <cmath>
#include <type_traits>

#include "ops/core/elementwise_scalar.h"
#include "ops/core/op_error.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

// The shared scalar functions (Note [Errors of the scalar ops] in
// ops/core/elementwise_scalar.h): the errors are checked here.
using scalar::float_floordiv;
using scalar::float_mod;
using scalar::stable_sigmoid;
using scalar::wrapping_add;
using scalar::wrapping_mul;
using scalar::wrapping_neg;
using scalar::wrapping_sub;

// An integer divisor of 0 is the user's value, not a broken precondition:
// a ValueError at the `.ss` line (torch raises ZeroDivisionError).
[[noreturn]] inline void zero_divisor(const char* op, const char* what) {
  throw OpError(
      OpError::Kind::Value, std::string("integer ") + what + " by zero", op);
}

template <class T>
T int_floordiv(T a, T b) {
  if (b == 0) zero_divisor("floordiv", "division");
  return scalar::int_floordiv_nonzero(a, b);
}
template <class T>
T int_mod(T a, T b) {
  if (b == 0) zero_divisor("mod", "modulo");
  return scalar::int_mod_nonzero(a, b);
}
template <class T>
T int_pow(T base, T e) {
  // The user's values too, as a divisor of 0 is (it escaped as an
  // internal error: issue 32's runtime fuzzer, `pow(c, to(x, i64))`);
  // torch raises a RuntimeError alike.
  if (!scalar::int_pow_defined(base, e))
    throw OpError(OpError::Kind::Value,
                  "integers to negative integer powers are not allowed",
                  "pow");
  return scalar::int_pow_defined_wrapping(base, e);
}

}  // namespace ss::ops::cpu
