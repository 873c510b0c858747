#pragma once
// Shared helpers for the CPU backend tests (ops/tests/cpu_backend*_test.cpp):
// the backend, test tensors and values, and tolerances.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "ops/backend/backend.h"
#include "ops/core/philox.h"
#include "ops/core/tensor.h"

namespace cpu_test {

using namespace ss::ops;

inline Backend& B() {
  return cpu_backend();
}

inline Tensor T(const Shape& s,
                const std::vector<double>& v,
                DType d = DType::F64) {
  return Tensor::from_doubles(s, v, d);
}

/// Deterministic test values: multiples of 0.25 in [-3, 3] (exact in every
/// float dtype), or ints in [-5, 5]; [nonzero] avoids 0 (divisors).
inline std::vector<double> vals(int64_t n,
                                unsigned seed,
                                bool ints = false,
                                bool nonzero = false) {
  std::mt19937 g(seed);
  std::vector<double> v(n);
  for (auto& x : v) {
    do {
      x = ints ? static_cast<int>(g() % 11) - 5
               : (static_cast<int>(g() % 25) - 12) * 0.25;
    } while (nonzero && x == 0);
  }
  return v;
}

inline Tensor rnd(const Shape& s,
                  DType d,
                  unsigned seed,
                  bool nonzero = false) {
  bool ints = d == DType::I32 || d == DType::I64;
  return T(s, vals(numel_of(s), seed, ints, nonzero), d);
}

/// Index in a tensor of shape [in] read at flat index [flat] of the
/// broadcast shape [out].
inline int64_t bidx(const Shape& in, const Shape& out, int64_t flat) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = flat % out[d];
    flat /= out[d];
  }
  int64_t f = 0;
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    f = f * in[i] + (in[i] == 1 ? 0 : idx[lead + i]);
  return f;
}

inline bool same(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
}

inline void check_close(const Tensor& got,
                        const Shape& shape,
                        const std::vector<double>& want,
                        double tol) {
  REQUIRE(got.shape() == shape);
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(same(g[i], want[i], tol));
  }
}

inline double tol_of(DType d) {
  switch (d) {
    case DType::F32:
      return 1e-5;
    case DType::BF16:
      return 1e-2;
    case DType::F16:
      return 2e-3;
    default:
      return 1e-12;
  }
}

/// The same shape, dtype and bytes (deterministic results compared).
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(),
                     b.raw(),
                     a.numel() * ss::types::dtype_size(a.dtype())) == 0;
}

inline const std::vector<DType> kFloats = {DType::F32, DType::F64};
inline const std::vector<DType> kAllDTypes = {DType::F32,
                                              DType::F64,
                                              DType::BF16,
                                              DType::F16,
                                              DType::I32,
                                              DType::I64,
                                              DType::Bool};
inline const std::vector<DType> kAllFloats = {
    DType::F32, DType::F64, DType::BF16, DType::F16};

}  // namespace cpu_test
