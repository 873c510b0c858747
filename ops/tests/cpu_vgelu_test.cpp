// The AVX-512 gelu and its VJP (ops/cpu/cpu_vgelu512.cpp) give the AVX2
// ones' bits (cpu_vrows.cpp): one source (cpu_vgelu.h), xsimd's same erf,
// tanh and exp, each lane on its own. Inputs: every 4099th f32 bit pattern
// (1M values over the whole range, NaNs and infinities included) and a
// dense grid over [-12, 12]; both forms (erf and tanh). Their accuracy
// against ref's loops is fused_test's.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_vrows.h"

TEST_CASE("gelu: the AVX-512 loops give the AVX2 loops' bits", "[api]") {
  using namespace ss::ops::cpu;
  if (!has_avx2_fma() || !has_avx512())
    return;  // nothing to compare on this CPU
  std::vector<float> x, g;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
  }
  for (double v = -12; v <= 12; v += 1.0 / 1024) x.push_back(float(v));
  for (size_t i = 0; i < x.size(); ++i) g.push_back(float(int(i % 17) - 8) / 3);
  const int64_t n = static_cast<int64_t>(x.size());
  auto same = [&](const std::vector<float>& a, const std::vector<float>& b) {
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0 &&
          !(std::isnan(a[i]) && std::isnan(b[i])))
        ++differ;
    return differ;
  };
  for (bool tanh : {false, true}) {
    INFO((tanh ? "tanh" : "erf"));
    std::vector<float> a(n), b(n);
    vrows::gelu(x.data(), a.data(), n, tanh);
    vrows::gelu512(x.data(), b.data(), n, tanh);
    CHECK(same(a, b) == 0);
    vrows::gelu_backward(g.data(), x.data(), a.data(), n, tanh);
    vrows::gelu_backward512(g.data(), x.data(), b.data(), n, tanh);
    CHECK(same(a, b) == 0);
  }
}
