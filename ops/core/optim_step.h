#pragma once
// The per-element steps of the fused optimizers (torch.optim's AdamW and
// SGD), once for both backends: the CPU's loops (ops/cpu/
// cpu_optim_loops.h, cpu_optim.cpp, the vector builds of Note [Vector
// AdamW]) and the CUDA kernels (ops/cuda/cuda_optim.cu) call these, so the
// two give the same bits (ops/tests/cuda_logic_optim_test.cpp).
//
// Note [Optimizer steps without contraction]
// Every operation rounds as written: no multiply and add fused into one
// FMA (Note [Vector AdamW] says why a last-bit change matters for AdamW).
// g++ does not contract under -std=c++20 (ISO: -ffp-contract=off), and the
// vector TUs say so explicitly; nvcc contracts by default (-fmad=true), so
// on the device each operation is its IEEE round-to-nearest intrinsic
// (__fmul_rn, ...), which nvcc never fuses. sqrt and divide are exact
// (correctly rounded) on both sides.
//
// The code is in an unnamed namespace on purpose, as cpu_optim_loops.h's:
// TUs built for different instruction sets (cpu_voptim*.cpp) each get
// their own copy, so the linker cannot hand the AVX-512 one to a portable
// caller.

#include <cmath>
#include <cstdint>

#include "ops/core/host_device.h"

namespace ss::ops::optim {
namespace {

// The rounded operations (Note [Optimizer steps without contraction]).
SS_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SS_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
SS_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
SS_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
SS_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
SS_HD double sub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
SS_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
SS_HD double div_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
SS_HD float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
SS_HD double sqrt_rn(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

/// One AdamW step's constants in the element type, computed on the host
/// in double once per step (bias corrections from [step], counted from 1).
template <class T>
struct AdamwConsts {
  T decay, b1, b2, ob1, ob2, step_size, inv_bc2, eps;
};

template <class T>
AdamwConsts<T> adamw_consts(
    double lr, double b1, double b2, double eps, double wd, int64_t step) {
  const double bc1 = 1.0 - std::pow(b1, double(step));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, double(step)));
  return {T(1.0 - lr * wd),
          T(b1),
          T(b2),
          T(1.0 - b1),
          T(1.0 - b2),
          T(lr / bc1),
          T(1.0 / bc2_sqrt),
          T(eps)};
}

/// One element of torch.optim.AdamW's step, in place on p, m, v.
template <class T>
SS_HD void adamw_element(T& p, T g, T& m, T& v, const AdamwConsts<T>& c) {
  T pi = mul_rn(p, c.decay);
  T mi = add_rn(mul_rn(c.b1, m), mul_rn(c.ob1, g));
  T vi = add_rn(mul_rn(c.b2, v), mul_rn(mul_rn(c.ob2, g), g));
  m = mi;
  v = vi;
  T denom = add_rn(mul_rn(sqrt_rn(vi), c.inv_bc2), c.eps);
  p = sub_rn(pi, div_rn(mul_rn(c.step_size, mi), denom));
}

/// One SGD step's settings in the element type.
template <class T>
struct SgdConsts {
  T lr, mu, wd;
  bool nesterov, first;
};

template <class T>
SgdConsts<T> sgd_consts(
    double lr, double momentum, double wd, bool nesterov, bool first) {
  return {T(lr), T(momentum), T(wd), nesterov, first};
}

/// One element of torch.optim.SGD's step, in place on p and, where [buf]
/// (this element's momentum buffer) is not null, on *buf ([first]: the
/// buffer starts as the gradient).
template <class T>
SS_HD void sgd_element(T& p, T g, T* buf, const SgdConsts<T>& c) {
  T gi = add_rn(g, mul_rn(c.wd, p));
  if (buf) {
    T b = c.first ? gi : add_rn(mul_rn(c.mu, *buf), gi);
    *buf = b;
    gi = c.nesterov ? add_rn(gi, mul_rn(c.mu, b)) : b;
  }
  p = sub_rn(p, mul_rn(c.lr, gi));
}

}  // namespace
}  // namespace ss::ops::optim
