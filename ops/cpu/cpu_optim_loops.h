#pragma once
// Internal to cpu_optim.cpp and cpu_voptim.cpp: the AdamW update loop, one
// source for the portable build and the AVX2 one (Note [Vector AdamW] in
// cpu_voptim.cpp). The loop is in an unnamed namespace on purpose: each of
// the two TUs, built with different instruction sets, gets its own copy,
// so the linker cannot pick the AVX2 one for the portable caller.

#include <cmath>
#include <cstdint>

#include "ops/cpu/cpu_adamw_step.h"

namespace ss::ops::cpu {
namespace {

/// One torch.optim.AdamW step on [n] elements in place (p, m, v).
template <class T>
void adamw_loop(T* __restrict p,
                const T* __restrict g,
                T* __restrict m,
                T* __restrict v,
                int64_t n,
                const AdamwStep& s) {
  const auto [lr, b1, b2, eps, wd, step] = s;
  const double bc1 = 1.0 - std::pow(b1, double(step));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, double(step)));
  const T decay = T(1.0 - lr * wd), tb1 = T(b1), tb2 = T(b2);
  const T ob1 = T(1.0 - b1), ob2 = T(1.0 - b2), step_size = T(lr / bc1);
  const T inv_bc2 = T(1.0 / bc2_sqrt), teps = T(eps);
  for (int64_t i = 0; i < n; ++i) {
    T pi = p[i] * decay;
    T mi = tb1 * m[i] + ob1 * g[i];
    T vi = tb2 * v[i] + ob2 * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - step_size * mi / (std::sqrt(vi) * inv_bc2 + teps);
  }
}

}  // namespace
}  // namespace ss::ops::cpu
