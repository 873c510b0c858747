#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator. A draw is a pure function of a
// 64-bit key and a 128-bit counter, so draws never depend on evaluation
// order or on the number of devices (language.md, Randomness).

#include <array>
#include <cmath>
#include <cstdint>

namespace ss::ops::philox {

using Block = std::array<uint32_t, 4>;

/// The 4 words drawn for [counter] under [key].
inline Block draw(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
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
inline float to_uniform(uint32_t w) {
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}

/// A uniform double in (0, 1] from one word (never 0: safe for log).
inline double to_open_uniform(uint32_t w) {
  return (static_cast<double>(w) + 1.0) / 4294967296.0;
}

/// A standard normal from a block's first two words (Box-Muller, cosine).
inline double to_normal(const Block& b) {
  double u1 = to_open_uniform(b[0]);
  double u2 = static_cast<double>(b[1]) / 4294967296.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
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
