// The vector AdamW loops (Note [Vector AdamW] in ops/cpu/cpu_voptim.cpp,
// and its AVX-512 build in cpu_voptim512.cpp) give the portable loop's
// bits: the same loop without FMA contraction, sqrt and divide exact. The
// portable loop is this TU's own copy of cpu_optim_loops.h, built for
// baseline x86-64. A length that is no multiple of 16 or 8 takes the
// tails too; values span signs and magnitudes, with zero gradients.

#include "ops/cpu/cpu_voptim.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "ops/cpu/cpu_features.h"
#include "ops/cpu/cpu_optim_loops.h"

namespace {

struct State {
  std::vector<float> p, g, m, v;
};

State make(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0, 1);
  State s;
  for (int64_t i = 0; i < n; ++i) {
    const float scale = std::ldexp(1.0f, int(i % 21) - 10);
    s.p.push_back(d(rng) * scale);
    s.g.push_back(i % 13 == 0 ? 0.0f : d(rng) * scale);
    s.m.push_back(d(rng) * 0.1f * scale);
    s.v.push_back(std::fabs(d(rng)) * 0.01f * scale * scale);
  }
  return s;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("vector adamw: AVX2 and AVX-512 give the portable loop's bits",
          "[optim]") {
  using namespace ss::ops::cpu;
  const int64_t n = 1000003;
  voptim::AdamwF32* portable = [](float* p,
                                  const float* g,
                                  float* m,
                                  float* v,
                                  int64_t n,
                                  const AdamwStep& h) {
    adamw_loop(p, g, m, v, n, h);
  };

  auto run = [&](voptim::AdamwF32* loop, int64_t step) {
    State s = make(n);
    loop(s.p.data(),
         s.g.data(),
         s.m.data(),
         s.v.data(),
         n,
         AdamwStep{1e-3, 0.9, 0.999, 1e-8, 0.01, step});
    return s;
  };
  const bool avx2 = has_avx2_fma(), avx512 = has_avx512();
  for (int64_t step : {1, 2, 57}) {
    INFO("step " << step);
    const State want = run(portable, step);
    for (int width : {8, 16}) {
      INFO(width << " lanes");
      if ((width == 8 && !avx2) || (width == 16 && !avx512)) continue;
      const State got =
          run(width == 8 ? voptim::adamw_f32 : voptim::adamw_f32_512, step);
      CHECK(same_bits(got.p, want.p));
      CHECK(same_bits(got.m, want.m));
      CHECK(same_bits(got.v, want.v));
    }
  }
}
