#pragma once
// Shared helpers for the builtins' forward tests (ops/tests/forward*_test.cpp):
// test tensors, element comparison and OpError expectations.

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ops/registry/registry.h"
#include "ops/tests/fake_forward_ctx.h"
#include "ref/ref_grad.h"

namespace forward_test {

using namespace ss::ops;
using ss::types::DType;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Model = std::map<std::string, Tensor>;

using ss::ops::test::FakeFwd;

inline Tensor T(const Shape& s, std::vector<double> v, DType d = DType::F64) {
  return Tensor::from_doubles(s, v, d);
}

// Deterministic values in [lo, hi).
inline Tensor R(const Shape& s, uint64_t seed, double lo = -1, double hi = 1) {
  int64_t n = numel_of(s);
  std::vector<double> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + (hi - lo) * static_cast<double>(x >> 11) / 9007199254740992.0;
  }
  return Tensor::from_doubles(s, v, DType::F64);
}

// Distinct values 0.1 apart, shuffled: no ties (max, pools).
inline Tensor Distinct(const Shape& s) {
  int64_t n = numel_of(s);
  int64_t stride = 7;
  while (std::gcd(n, stride) != 1) stride += 2;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = 0.1 * static_cast<double>((i * stride) % n) - 0.3;
  return Tensor::from_doubles(s, v, DType::F64);
}

inline void close(const Tensor& got,
                  const std::vector<double>& want,
                  double tol = 1e-12) {
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).margin(tol).epsilon(tol));
  }
}

template <class F>
void expect_op_error(F f, OpError::Kind kind, const std::string& part) {
  try {
    f();
    FAIL("no OpError");
  } catch (const OpError& e) {
    CHECK(e.kind() == kind);
    INFO(e.what());
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

/// A gradient check: [f] at [inputs], against finite differences.
struct GradRow {
  std::string name;
  Fn f;
  std::vector<Tensor> inputs;
};

/// Each row in its own section: ref::check_gradients' report.
inline void check_grad_rows(const std::vector<GradRow>& rows) {
  for (const GradRow& r : rows) {
    SECTION(r.name) {
      auto rep = ss::ref::check_gradients(r.f, r.inputs);
      INFO(r.name << ":\n" << rep.detail);
      CHECK(rep.ok);
    }
  }
}

}  // namespace forward_test
