#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator. A draw is a pure function of a
// 64-bit key and a 128-bit counter, so draws never depend on evaluation
// order or on the number of devices (language.md, Randomness). The
// functions are SS_HD: the CUDA backend's random (ops/cuda/cuda_random.cu)
// runs these very lines, so its uniform draws are the CPU's bit for bit
// (ops/tests/cuda_logic_optim_test.cpp).

#include <cmath>
#include <cstdint>

#include "ops/core/host_device.h"

namespace ss::ops::philox {

/// Four 32-bit words (std::array is not usable in device code).
struct Block {
  uint32_t w[4];
  SS_HD uint32_t& operator[](int i) { return w[i]; }
  SS_HD const uint32_t& operator[](int i) const { return w[i]; }
  friend SS_HD bool operator==(const Block& a, const Block& b) {
    return a.w[0] == b.w[0] && a.w[1] == b.w[1] && a.w[2] == b.w[2] &&
           a.w[3] == b.w[3];
  }
};

/// The 4 words drawn for [counter] under [key].
SS_HD Block draw(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(key),
           k1 = static_cast<uint32_t>(key >> 32);
  Block c = {static_cast<uint32_t>(counter_lo),
             static_cast<uint32_t>(counter_lo >> 32),
             static_cast<uint32_t>(counter_hi),
             static_cast<uint32_t>(counter_hi >> 32)};
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    Block n = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0,
               static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
               static_cast<uint32_t>(p0)};
    c = n;
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

/// A uniform float in [0, 1) from one word (24 random bits).
SS_HD float to_uniform(uint32_t w) {
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}

/// A uniform double in (0, 1] from one word (never 0: safe for log).
SS_HD double to_open_uniform(uint32_t w) {
  return (static_cast<double>(w) + 1.0) / 4294967296.0;
}

/// A standard normal from a block's first two words (Box-Muller, cosine).
/// On a GPU, CUDA's double log and cos (within 1 and 2 ulp, not glibc's
/// correctly rounded ones): a normal draw may differ from the CPU's in its
/// last bits there, a uniform one never (Note [Philox on the GPU] in
/// ops/cuda/cuda_random.cu).
SS_HD double to_normal(const Block& b) {
  double u1 = to_open_uniform(b[0]);
  double u2 = static_cast<double>(b[1]) / 4294967296.0;
#if defined(__CUDA_ARCH__)
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
#else
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
#endif
}

/// A 64-bit key from a seed and a name (a field path, a call site): FNV-1a
/// of the name mixed with the seed, so every field draws its own stream.
inline uint64_t key_for(uint64_t seed, const char* name) {
  uint64_t h = 1469598103934665603ull;
  for (const char* p = name; *p; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 1099511628211ull;
  }
  // splitmix64 finaliser of (seed, h).
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + h;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace ss::ops::philox
