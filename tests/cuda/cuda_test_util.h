#pragma once
// Shared helpers of ss_cuda_tests (tests/cuda/*_test.cpp): every CUDA
// primitive is checked against the CPU backend (the oracle; ref/ and torch
// check the CPU backend in turn) on random inputs of odd shapes. Fresh
// device bytes are poisoned with NaN in this binary (SS_CUDA_POISON, set by
// its main), so an output element a kernel never writes fails the check.

#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/backend/backend.h"
#include "ops/core/tensor.h"

namespace cuda_test {

using namespace ss::ops;
namespace types = ss::types;

inline Backend& CPU() {
  return cpu_backend();
}
inline Backend& GPU() {
  return cuda_backend();
}
inline Device gpu0() {
  return Device{Device::Kind::Cuda, 0};
}
inline Tensor to_gpu(const Tensor& t) {
  return t.to(gpu0());
}
inline Tensor to_cpu(const Tensor& t) {
  return t.to(Device{});
}

/// Random values on the CPU: floats uniform in [lo, hi) (rounded to the
/// dtype), ints in [-5, 5], bools half true. Fresh for every seed.
inline Tensor rand(const Shape& shape,
                   DType dtype,
                   uint64_t seed,
                   double lo = -3.0,
                   double hi = 3.0) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_int_distribution<int> i(-5, 5);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (auto& x : v) {
    if (dtype == DType::Bool)
      x = (g() & 1) ? 1.0 : 0.0;
    else if (dtype == DType::I32 || dtype == DType::I64)
      x = i(g);
    else
      x = u(g);
  }
  return Tensor::from_doubles(shape, v, dtype);
}

/// [got] (either device) equals [want] (CPU) in shape, dtype and, within
/// |got - want| <= atol + rtol * |want|, in value; NaN where want has NaN
/// only, infinities equal. [what] names the case in the failure.
inline void require_close(const Tensor& want,
                          const Tensor& got,
                          double rtol,
                          double atol,
                          const std::string& what) {
  INFO(what);
  Tensor g = to_cpu(got);
  REQUIRE(g.shape() == want.shape());
  REQUIRE(types::dtype_name(g.dtype()) == types::dtype_name(want.dtype()));
  std::vector<double> a = want.to_doubles(), b = g.to_doubles();
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (std::isnan(a[i]))
      ok = std::isnan(b[i]);
    else if (std::isinf(a[i]))
      ok = a[i] == b[i];
    else
      ok = !std::isnan(b[i]) &&
           std::abs(a[i] - b[i]) <= atol + rtol * std::abs(a[i]);
    if (!ok && bad++ == 0) first = static_cast<int64_t>(i);
  }
  if (bad) {
    INFO("element " << first << ": want " << a[first] << ", got " << b[first]
                    << " (" << bad << " of " << a.size() << " differ)");
    REQUIRE(bad == 0);
  }
}

/// [got] has [want]'s bytes exactly (AdamW, SGD, Philox, moves, ints),
/// but for a NaN's bits: any NaN matches a NaN (a GPU writes the
/// canonical 0x7fff..., x86 the negative default NaN; neither torch nor
/// IEEE 754 promises a payload).
inline void require_same_bits(const Tensor& want,
                              const Tensor& got,
                              const std::string& what) {
  INFO(what);
  Tensor g = to_cpu(got);
  REQUIRE(g.shape() == want.shape());
  REQUIRE(types::dtype_name(g.dtype()) == types::dtype_name(want.dtype()));
  int64_t bad = 0, first = -1;
  const size_t item = types::dtype_size(want.dtype());
  const auto* a = static_cast<const unsigned char*>(want.raw());
  const auto* b = static_cast<const unsigned char*>(g.raw());
  const bool is_float = types::is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::memcmp(a + i * item, b + i * item, item) != 0 &&
        !(is_float && std::isnan(want.at(i)) && std::isnan(g.at(i))) &&
        bad++ == 0)
      first = i;
  if (bad) {
    INFO("element " << first << ": want " << want.at(first) << ", got "
                    << g.at(first) << " (" << bad << " of " << want.numel()
                    << " differ)");
    REQUIRE(bad == 0);
  }
}

/// Float dtypes' tolerances against the CPU backend: both sides round
/// once per op, but the GPU's exp/log/erf and its fold of a product's
/// terms differ in the last bits (f32 ~6e-8 per op; 1e-5 leaves room for
/// sums of a few thousand terms); halves are rounded once from f32 on both
/// sides, so one half ulp.
inline double rtol_of(DType d) {
  switch (d) {
    case DType::F64:
      return 1e-12;
    case DType::F32:
      return 1e-5;
    case DType::BF16:
      return 1e-2;
    case DType::F16:
      return 2e-3;
    default:
      return 0.0;
  }
}

// The allocator's counters, read from the module (ss_cuda_memory_stats).
inline std::pair<unsigned long long, unsigned long long> memory_stats() {
  using Fn = void (*)(unsigned long long*, unsigned long long*);
  static Fn fn = [] {
    void* h = dlopen(nullptr, RTLD_NOW);
    (void)h;
    // The module is already open (main opened it): dlopen by its path
    // again returns the same handle.
    std::string path =
        std::getenv("SS_CUDA_MODULE") ? std::getenv("SS_CUDA_MODULE") : "";
    if (path.empty()) {
      char exe[4096];
      ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
      std::string dir(exe, n > 0 ? static_cast<size_t>(n) : 0);
      path = dir.substr(0, dir.rfind('/') + 1) + "libss_cuda.so";
    }
    void* m = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(m != nullptr);
    return reinterpret_cast<Fn>(dlsym(m, "ss_cuda_memory_stats"));
  }();
  REQUIRE(fn != nullptr);
  unsigned long long a = 0, b = 0;
  fn(&a, &b);
  return {a, b};
}

}  // namespace cuda_test
