// The core's f32 multiply-add peak, measured: the ceiling no product can
// pass, whichever library runs it. bench/compare_pytorch.py divides the
// step's product FLOPs by it to print the step's floor at peak, which says
// whether a goal stated as a ratio to torch can be met on this machine at
// all (issue 29: at batch 64 the README MLP's products at the core's peak
// already take more than 0.3x torch's step on a Zen 4).
//
//   fma_peak [--threads N]   prints "GFLOPS <total over N threads>"
//
// Twelve independent accumulators hide the FMA latency (4 cycles, 2 units:
// 8 in flight suffice); the best of five rounds of 2e8 FMAs per thread.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kRounds = 200'000'000 / 12;

// One function per width: a lambda inside would not inherit the target.
__attribute__((target("avx512f"))) float run512() {
  const __m512 one = _mm512_set1_ps(0.999999f), tiny = _mm512_set1_ps(1e-7f);
  __m512 a[12];
  for (auto& v : a) v = one;
  for (long k = 0; k < kRounds; ++k)
#pragma GCC unroll 12
    for (auto& v : a) v = _mm512_fmadd_ps(v, one, tiny);
  float sink = 0;
  for (auto& v : a) sink += _mm512_reduce_add_ps(v);
  return sink;
}

__attribute__((target("avx2,fma"))) float run256() {
  const __m256 one = _mm256_set1_ps(0.999999f), tiny = _mm256_set1_ps(1e-7f);
  __m256 a[12];
  for (auto& v : a) v = one;
  for (long k = 0; k < kRounds; ++k)
#pragma GCC unroll 12
    for (auto& v : a) v = _mm256_fmadd_ps(v, one, tiny);
  float sink = 0;
  for (auto& v : a) sink += _mm256_cvtss_f32(v);
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = std::stoi(argv[i + 1]);
  const bool wide = __builtin_cpu_supports("avx512f");
  const double lanes = wide ? 16 : 8;
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::thread> pool;
    std::vector<float> sinks(threads);
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sinks[t] = wide ? run512() : run256(); });
    for (auto& th : pool) th.join();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    double gflops = threads * double(kRounds) * 12 * lanes * 2 / s / 1e9;
    if (gflops > best) best = gflops;
  }
  std::printf("GFLOPS %.1f (%s, %d thread(s))\n",
              best,
              wide ? "avx512" : "avx2",
              threads);
}
