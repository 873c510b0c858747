#pragma once
// Internal to cpu_optim.cpp and cpu_voptim.cpp: the AdamW update loop, one
// source for the portable build and the AVX2 one (Note [Vector AdamW] in
// cpu_voptim.cpp). The loop is in an unnamed namespace on purpose: each of
// the two TUs, built with different instruction sets, gets its own copy,
// so the linker cannot pick the AVX2 one for the portable caller.

#include <cstdint>

#include "ops/core/optim_step.h"
#include "ops/cpu/cpu_adamw_step.h"

namespace ss::ops::cpu {
namespace {

/// One torch.optim.AdamW step on [n] elements in place (p, m, v): the
/// element step the CUDA kernel runs too (ops/core/optim_step.h).
template <class T>
void adamw_loop(T* __restrict p,
                const T* __restrict g,
                T* __restrict m,
                T* __restrict v,
                int64_t n,
                const AdamwStep& s) {
  const auto c = optim::adamw_consts<T>(s.lr, s.b1, s.b2, s.eps, s.wd, s.step);
  for (int64_t i = 0; i < n; ++i) {
    T pi = p[i], mi = m[i], vi = v[i];
    optim::adamw_element(pi, g[i], mi, vi, c);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

}  // namespace
}  // namespace ss::ops::cpu
