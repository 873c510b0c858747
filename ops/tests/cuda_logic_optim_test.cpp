// The CUDA optimizer and random kernels' per-element logic, run on the
// host: ops/core/optim_step.h's AdamW and SGD element steps and
// ops/core/philox.h's draws are SS_HD, the very code the kernels of
// ops/cuda/cuda_optim.cu and cuda_random.cu run, so these tests prove
// here (no GPU) that they give cpu_backend()'s bits; only the launches are
// left for ss_cuda_tests. The CPU side takes its vector loops where the
// CPU has them (Note [Vector AdamW]): the same bits again.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/backend/backend.h"
#include "ops/core/optim_step.h"
#include "ops/core/philox.h"

namespace {

using namespace ss::ops;

/// Values over signs and magnitudes (2^-10 .. 2^10), zeros every 13th
/// where [zeros]; [positive] for AdamW's second moments.
Tensor values(int64_t n, DType d, uint64_t seed, bool zeros, bool positive) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double x = nd(rng) * std::ldexp(1.0, int(i % 21) - 10);
    if (zeros && i % 13 == 0) x = 0;
    v[i] = positive ? std::fabs(x) * 0.01 : x;
  }
  return Tensor::from_doubles({n}, v, d);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.numel() == b.numel() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

template <class T>
void adamw_case(DType d, double wd) {
  const int64_t n = 1037;  // no multiple of the vector loops' lanes
  Tensor p = values(n, d, 1, false, false), m = Tensor::zeros({n}, d),
         v = Tensor::zeros({n}, d);
  Tensor hp = p.clone(), hm = m.clone(), hv = v.clone();
  for (int64_t step = 1; step <= 4; ++step) {
    Tensor g = values(n, d, 10 + step, true, false);
    cpu_backend().adamw_update(p, g, m, v, 1e-3, 0.9, 0.999, 1e-8, wd, step);
    const auto c = optim::adamw_consts<T>(1e-3, 0.9, 0.999, 1e-8, wd, step);
    for (int64_t i = 0; i < n; ++i)
      optim::adamw_element(
          hp.data<T>()[i], g.data<T>()[i], hm.data<T>()[i], hv.data<T>()[i], c);
    INFO("step " << step << ", weight decay " << wd);
    REQUIRE(same_bits(p, hp));
    REQUIRE(same_bits(m, hm));
    REQUIRE(same_bits(v, hv));
  }
}

template <class T>
void sgd_case(DType d, double momentum, double wd, bool nesterov) {
  const int64_t n = 1037;
  Tensor p = values(n, d, 2, false, false);
  Tensor buf = Tensor::zeros({n}, d);
  Tensor hp = p.clone(), hb = buf.clone();
  for (int step = 0; step < 4; ++step) {
    const bool first = step == 0;
    Tensor g = values(n, d, 20 + step, true, false);
    const bool mom = momentum != 0;
    cpu_backend().sgd_update(
        p, g, mom ? &buf : nullptr, 0.05, momentum, wd, nesterov, first);
    const auto c = optim::sgd_consts<T>(0.05, momentum, wd, nesterov, first);
    for (int64_t i = 0; i < n; ++i)
      optim::sgd_element(
          hp.data<T>()[i], g.data<T>()[i], mom ? hb.data<T>() + i : nullptr, c);
    INFO("step " << step << ", momentum " << momentum << ", wd " << wd
                 << ", nesterov " << nesterov);
    REQUIRE(same_bits(p, hp));
    REQUIRE(same_bits(buf, hb));
  }
}

}  // namespace

TEST_CASE("cuda logic: adamw's element step gives the CPU's bits",
          "[cuda-logic]") {
  for (double wd : {0.0, 0.01, 0.1}) {
    adamw_case<float>(DType::F32, wd);
    adamw_case<double>(DType::F64, wd);
  }
}

TEST_CASE("cuda logic: sgd's element step gives the CPU's bits",
          "[cuda-logic]") {
  for (double momentum : {0.0, 0.9})
    for (double wd : {0.0, 1e-4})
      for (bool nesterov : {false, true}) {
        if (nesterov && momentum == 0) continue;
        sgd_case<float>(DType::F32, momentum, wd, nesterov);
        sgd_case<double>(DType::F64, momentum, wd, nesterov);
      }
}

TEST_CASE("cuda logic: philox draws give the CPU's random", "[cuda-logic]") {
  // Random123's first known-answer vector: Block still compares by value.
  CHECK(philox::draw(0, 0, 0) ==
        philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  const uint64_t key = philox::key_for(3, "cuda logic");
  for (bool normal : {false, true})
    for (DType d : {DType::F32, DType::F64}) {
      // An offset past 2^32 carries into the counter's second word.
      for (uint64_t offset :
           {uint64_t{0}, uint64_t{17}, (uint64_t{1} << 32) - 5}) {
        Tensor want = cpu_backend().random({3, 337}, d, key, 9, offset, normal);
        Tensor got = Tensor::empty({3, 337}, d);
        for (int64_t i = 0; i < got.numel(); ++i) {
          philox::Block b = philox::draw(key, offset + uint64_t(i), 9);
          double x = normal ? philox::to_normal(b) : philox::to_uniform(b[0]);
          if (d == DType::F32)
            got.data<float>()[i] = static_cast<float>(x);
          else
            got.data<double>()[i] = x;
        }
        INFO("normal " << normal << ", offset " << offset);
        REQUIRE(same_bits(want, got));
      }
    }
}
