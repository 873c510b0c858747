#pragma once
// What this CPU runs, checked once: the choice between a portable loop and
// a vector one (Note [Vector AdamW], Note [Vector row kernels]). Only
// portable TUs may include this header: an inline function compiled in an
// AVX TU could be the copy the linker keeps, and run on a CPU without AVX.

namespace ss::ops::cpu {

/// AVX2 and FMA: cpu_vrows.cpp, cpu_vmath.cpp, cpu_voptim.cpp (whose
/// callers ask this before they call in; those TUs do not check).
inline bool has_avx2_fma() {
  static const bool ok =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}

/// AVX-512 F, VL and DQ: cpu_vgelu512.cpp, cpu_voptim512.cpp.
inline bool has_avx512() {
  static const bool ok = __builtin_cpu_supports("avx512f") &&
                         __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512dq");
  return ok;
}

}  // namespace ss::ops::cpu
