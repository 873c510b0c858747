#pragma once
// Internal to the vector TUs (cpu_vmath.cpp, cpu_vrows.cpp, built for
// AVX2 + FMA; cpu_vgelu512.cpp, for AVX-512): the vector helpers they
// share, written once for any xsimd arch. Everything here is in an
// unnamed namespace, as cpu_optim_loops.h is: each TU, built for its own
// instruction set, gets its own copy, so the linker cannot hand one built
// for AVX-512 to a caller on another CPU. No other file may include it.

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace ss::ops::cpu::varch {
namespace {

template <class A>
using Batch = xsimd::batch<float, A>;
template <class A>
constexpr int64_t kW = Batch<A>::size;

constexpr float kHuge = 88.0f, kTiny = -87.0f;

/// Lanes where [bad] holds get libm's [f] instead of the vector result [r].
template <class A, class F>
Batch<A> patch(Batch<A> x, Batch<A> r, xsimd::batch_bool<float, A> bad, F f) {
  if (!xsimd::any(bad)) return r;
  alignas(64) float xs[kW<A>], rs[kW<A>], bs[kW<A>];
  x.store_aligned(xs);
  r.store_aligned(rs);
  xsimd::select(bad, Batch<A>(1.0f), Batch<A>(0.0f)).store_aligned(bs);
  for (int64_t i = 0; i < kW<A>; ++i)
    if (bs[i] != 0) rs[i] = f(xs[i]);
  return Batch<A>::load_aligned(rs);
}

/// xsimd's exp gives inf from x > 88.376 (exp(88.72) is still finite) and
/// 0 before the results turn subnormal (x < -87.34): those lanes, rare
/// outside tests, are libm's. -inf (a masked score) stays in the vector
/// path, which gives 0 exactly.
template <class A>
Batch<A> exp(Batch<A> x) {
  using B = Batch<A>;
  return patch<A>(
      x,
      xsimd::exp(x),
      (x > B(kHuge)) | ((x < B(kTiny)) & (x != B(-__builtin_inff()))),
      [](float v) { return std::exp(v); });
}

/// The [k] < W floats at [p], the other lanes [pad].
template <class A>
Batch<A> load_tail(const float* p, int64_t k, float pad) {
  alignas(64) float buf[kW<A>];
  for (int64_t j = 0; j < kW<A>; ++j) buf[j] = j < k ? p[j] : pad;
  return Batch<A>::load_aligned(buf);
}

/// Stores the first [k] < W lanes of [v] at [p].
template <class A>
void store_tail(Batch<A> v, float* p, int64_t k) {
  alignas(64) float buf[kW<A>];
  v.store_aligned(buf);
  for (int64_t j = 0; j < k; ++j) p[j] = buf[j];
}

}  // namespace
}  // namespace ss::ops::cpu::varch
