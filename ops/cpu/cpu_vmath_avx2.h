#pragma once
// Internal to the AVX2 translation units (cpu_vmath.cpp, cpu_vrows.cpp),
// the only ones built with -mavx2 -mfma (ops/CMakeLists.txt): their shared
// vector functions. No other file may include this header: its inline
// functions hold AVX2 code, and the linker could pick one of them for a
// TU that runs on any CPU (Note [Vector transcendentals]).

#include <cmath>
#include <cstdint>
#include <xsimd/xsimd.hpp>

namespace ss::ops::cpu::vmath::avx2 {

using Batch = xsimd::batch<float, xsimd::avx2>;
using Mask = xsimd::batch_bool<float, xsimd::avx2>;
constexpr int64_t W = Batch::size;

constexpr float kHuge = 88.0f, kTiny = -87.0f;
constexpr float kInf = __builtin_inff();

// Lanes where [bad] holds get libm's [f] instead of the vector result [r].
template <class F>
Batch patch(Batch x, Batch r, Mask bad, F f) {
  if (!xsimd::any(bad)) return r;
  alignas(32) float xs[W], rs[W], bs[W];
  x.store_aligned(xs);
  r.store_aligned(rs);
  xsimd::select(bad, Batch(1.0f), Batch(0.0f)).store_aligned(bs);
  for (int64_t i = 0; i < W; ++i)
    if (bs[i] != 0) rs[i] = f(xs[i]);
  return Batch::load_aligned(rs);
}

// xsimd's exp gives inf from x > 88.376 (exp(88.72) is still finite) and
// 0 before the results turn subnormal (x < -87.34): those lanes, rare
// outside tests, are libm's. -inf (a masked score) stays in the vector
// path, which gives 0 exactly.
inline Batch exp(Batch x) {
  Batch r = xsimd::exp(x);
  return patch(x,
               r,
               (x > Batch(kHuge)) | ((x < Batch(kTiny)) & (x != Batch(-kInf))),
               [](float v) { return std::exp(v); });
}

/// The [k] < W floats at [p], the other lanes [pad].
inline Batch load_tail(const float* p, int64_t k, float pad) {
  alignas(32) float buf[W];
  for (int64_t j = 0; j < W; ++j) buf[j] = j < k ? p[j] : pad;
  return Batch::load_aligned(buf);
}

/// Stores the first [k] < W lanes of [v] at [p].
inline void store_tail(Batch v, float* p, int64_t k) {
  alignas(32) float buf[W];
  v.store_aligned(buf);
  for (int64_t j = 0; j < k; ++j) p[j] = buf[j];
}

}  // namespace ss::ops::cpu::vmath::avx2
