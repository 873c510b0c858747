#pragma once
// The reference diff-test table shared by ref_ops_test.cpp and the
// ref_rows_*_test.cpp families: the Row type, input makers, tolerances and the
// runner (compare). The tolerances are explained at the top of
// ref/tests/ref_ops_test.cpp.

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ops/api.h"
#include "ops/registry/registry.h"
#include "ops/tests/fake_forward_ctx.h"
#include "ref/ref_ops.h"

namespace ref_table {

using namespace ss::ops;
using ss::ops::test::FakeFwd;
using ss::ops::test::Model;
using ss::types::DType;
using Ts = std::vector<Tensor>;
using Fn = std::function<Ts(const Ts&)>;
namespace ref = ss::ref;

constexpr double kElem = 1e-5;
constexpr double kBig = 1e-4;
constexpr double kF64 = 1e-12;

// Deterministic values in [lo, hi), f64.
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

// Random integers in [lo, hi] as [dtype] (f64 for float inputs that should
// tie often: comparisons).
inline Tensor Ri(
    const Shape& s, uint64_t seed, int lo, int hi, DType dtype = DType::I64) {
  std::vector<double> v = R(s, seed, 0, 1).to_doubles();
  for (auto& e : v) e = lo + std::floor(e * (hi - lo + 1));
  return Tensor::from_doubles(s, v, dtype);
}

inline Tensor Bools(const Shape& s, uint64_t seed) {
  return Ri(s, seed, 0, 1, DType::Bool);
}

// Distinct values 0.1 apart, shuffled: no ties (sort, topk, argmax, max).
inline Tensor Distinct(const Shape& s) {
  int64_t n = numel_of(s);
  int64_t stride = 7;
  while (std::gcd(n, stride) != 1) stride += 2;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = 0.1 * static_cast<double>((i * stride) % n) - 0.3;
  return Tensor::from_doubles(s, v, DType::F64);
}

inline Tensor I(const Shape& s, const std::vector<double>& v) {
  return Tensor::from_doubles(s, v, DType::I64);
}

struct Row {
  std::string op;  // the builtin (the coverage test reads it)
  std::string label;
  double rtol32;  // for f32 results
  Ts inputs;      // float inputs in f64; converted for the f32 run
  Fn fwd, want;
};

inline Fn one(std::function<Tensor(const Ts&)> f) {
  return [f](const Ts& in) { return Ts{f(in)}; };
}

// The inputs of one run: f64 inputs converted to [dt].
inline Ts in_dtype(const Ts& in, DType dt) {
  Ts out;
  for (const Tensor& t : in)
    out.push_back(t.dtype() == DType::F64
                      ? Tensor::from_doubles(t.shape(), t.to_doubles(), dt)
                      : t);
  return out;
}

inline bool close_enough(double g, double w, double rtol) {
  if (std::isnan(w)) return std::isnan(g);
  if (std::isinf(w)) return g == w;
  return std::fabs(g - w) <= rtol * std::max(std::fabs(w), 1.0);
}

inline void compare(const Row& r, DType dt) {
  Ts in = in_dtype(r.inputs, dt);
  Ts got = r.fwd(in);
  Ts want = r.want(in);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("output " << k);
    REQUIRE(got[k].shape() == want[k].shape());
    CHECK(ss::types::dtype_name(got[k].dtype()) ==
          std::string(ss::types::dtype_name(want[k].dtype())));
    double rtol = want[k].dtype() == DType::F64          ? kF64
                  : ss::types::is_float(want[k].dtype()) ? r.rtol32
                                                         : 0.0;
    std::vector<double> g = got[k].to_doubles(), w = want[k].to_doubles();
    int bad = 0;
    for (size_t i = 0; i < g.size() && bad < 5; ++i) {
      if (close_enough(g[i], w[i], rtol)) continue;
      ++bad;
      FAIL_CHECK("element " << i << ": forward " << g[i] << ", ref " << w[i]
                            << " (rtol " << rtol << ")");
    }
  }
}

// One family of rows each (ref/tests/ref_rows_*_test.cpp), appended to [rows];
// all_rows() in ref_ops_test.cpp concatenates them.
void unary_rows(std::vector<Row>& rows);
void binary_rows(std::vector<Row>& rows);
void matmul_rows(std::vector<Row>& rows);
void reduction_rows(std::vector<Row>& rows);
void along_rows(std::vector<Row>& rows);
void shape_rows(std::vector<Row>& rows);
void nn_rows(std::vector<Row>& rows);
void losses_rows(std::vector<Row>& rows);

}  // namespace ref_table
