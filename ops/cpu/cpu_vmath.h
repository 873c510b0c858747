#pragma once
// Vectorised f32 transcendentals (Note [Vector transcendentals] in
// cpu_vmath.cpp). This header includes nothing of the project: its one TU
// is compiled for AVX2 + FMA, and must not share inline code with the rest.

#include <cstdint>

namespace ss::ops::cpu::vmath {

/// The functions with a vector kernel.
enum class Fn : uint8_t { Exp, Log, Log1p, Expm1, Tanh, Erf, Sigmoid };

/// y[i] = fn(x[i]) for i < n with xsimd's AVX2 functions. The caller
/// checks the CPU first (has_avx2_fma, cpu_features.h) and runs its libm
/// loop where it lacks AVX2 or FMA.
void apply_f32(Fn fn, const float* x, float* y, int64_t n);

}  // namespace ss::ops::cpu::vmath
