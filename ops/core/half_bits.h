#pragma once
// The bf16 / f16 <-> f32 conversions, once for every backend (SS_HD): the
// CPU's (ops/core/tensor.cpp's bf16_to_float etc. call these) and the CUDA
// kernels', so a half rounds to the same bits on either device (round to
// nearest, ties to even; NaN kept quiet with its sign).

#include <cstdint>

#include "ops/core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

namespace ss::ops::halves {

SS_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<uint32_t>(f);
#endif
}

SS_HD float bits_float(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(x);
#else
  return std::bit_cast<float>(x);
#endif
}

SS_HD float bf16_to_float(uint16_t v) {
  return bits_float(static_cast<uint32_t>(v) << 16);
}

SS_HD uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: keep sign, force quiet bit
    return static_cast<uint16_t>((x >> 16) | 0x0040u);
  // Round to nearest, ties to even (overflow carries into inf correctly).
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

SS_HD float f16_to_float(uint16_t v) {
  uint32_t sign = static_cast<uint32_t>(v & 0x8000u) << 16;
  uint32_t e = (v >> 10) & 0x1Fu, m = v & 0x3FFu;
  if (e == 0) {  // zero or subnormal: m * 2^-24 (exact: m < 2^10)
    float f = static_cast<float>(m) * 0x1p-24f;
    return bits_float(float_bits(f) | sign);
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));
  return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

SS_HD uint16_t float_to_f16(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (x > 0x7F800000u)  // NaN: keep the top payload bits, force quiet
    return sign | 0x7E00u | static_cast<uint16_t>((x >> 13) & 0x1FFu);
  if (x >= 0x47800000u) return sign | 0x7C00u;  // >= 2^16 (and inf): inf
  uint32_t e = x >> 23;
  if (e < 113) {               // below 2^-14: a half subnormal (or zero)
    if (e < 102) return sign;  // below 2^-25: rounds to zero
    uint32_t m = (x & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - e;  // value / 2^-24 = m >> shift
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return sign | static_cast<uint16_t>(r);
  }
  uint32_t mant = x & 0x7FFFFFu;
  uint32_t h = ((e - 112) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry to inf
  if (h > 0x7C00u) h = 0x7C00u;
  return sign | static_cast<uint16_t>(h);
}

}  // namespace ss::ops::halves
