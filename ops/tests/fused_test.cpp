// The fused kernels (Note [Fused kernels] in ops/api_fused.cpp): softmax,
// log_softmax and layer_norm along the last axis and gelu, forward against
// ref/'s naive loops in double (ref/ref_ops.h, written from library.md) and
// VJPs against central differences (ref/ref_grad.h), in f64. The op table
// (tests/torch) checks the same builtins through `ss run` against torch.
//
// Tolerances: f64 1e-12 relative (a few roundings of a sum of <= 67
// terms); f32 2e-6 relative plus 1e-7 absolute (the vector exp and erf are
// within 1.5 and 2.5 ulp, ~3e-7, then a 67-term sum and a division round
// again; the absolute part covers values near 0, where gelu's x * Phi(x)
// cancels). Gradients: ref_grad's defaults (rtol 1e-5, atol 1e-7 at eps
// 1e-6 in f64).

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "ops/api.h"
#include "ops/tests/cpu_test_util.h"
#include "ref/ref_grad.h"
#include "ref/ref_ops.h"

using namespace cpu_test;

namespace {

void check_like(const Tensor& got, const Tensor& want, double rtol) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    if (std::isnan(w[i]) || std::isinf(w[i])) {
      CHECK((std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]));
      continue;
    }
    CHECK(std::abs(g[i] - w[i]) <= 1e-7 + rtol * std::abs(w[i]));
  }
}

double rtol_of(DType d) {
  return d == DType::F64 ? 1e-12 : 2e-6;
}

/// Logits with rows the fused path must get right: the values of rnd
/// scaled, a row masked by -inf but for one entry, a row of -inf only
/// (NaN, as torch), and large logits (1000 and more) that overflow exp
/// without the shift.
Tensor logits(const Shape& s, DType d) {
  std::vector<double> v = rnd(s, DType::F64, 11).to_doubles();
  int64_t n = s.back();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    v[n + j] = j == 3 ? 0.5 : -inf;  // row 1: one entry left
    v[2 * n + j] = -inf;             // row 2: fully masked
    v[3 * n + j] = 1000 + 7 * v[3 * n + j];
  }
  return T(s, v, d);
}

}  // namespace

TEST_CASE("fused softmax and log_softmax match ref's loops", "[api]") {
  for (DType d : kFloats)
    for (Shape s : {Shape{4, 37}, Shape{2, 3, 67}, Shape{5, 1}}) {
      INFO(ss::types::dtype_name(d) << " " << shape_string(s));
      Tensor x = s.back() == 1 ? rnd(s, d, 12) : logits(s, d);
      int last = static_cast<int>(s.size()) - 1;
      check_like(softmax_last(x, false), ss::ref::softmax(x, last), rtol_of(d));
      check_like(
          softmax_last(x, true), ss::ref::log_softmax(x, last), rtol_of(d));
    }
}

TEST_CASE("fused gelu matches ref's loops, exact and tanh", "[api]") {
  for (DType d : kFloats) {
    // A grid over [-9, 9] (both tails and the bend) plus rnd's values.
    std::vector<double> v;
    for (int i = -1200; i <= 1200; ++i) v.push_back(i * 0.0075);
    for (double e : {0.0, -0.0, 40.0, -40.0}) v.push_back(e);
    Tensor x = T({int64_t(v.size())}, v, d);
    check_like(gelu(x, false), ss::ref::gelu(x, "none"), rtol_of(d));
    check_like(gelu(x, true), ss::ref::gelu(x, "tanh"), rtol_of(d));
  }
}

TEST_CASE("fused layer_norm matches ref's loops", "[api]") {
  for (DType d : kFloats)
    for (Shape s : {Shape{4, 37}, Shape{2, 3, 128}, Shape{3, 1}}) {
      INFO(ss::types::dtype_name(d) << " " << shape_string(s));
      // An offset and a scale, so the mean and variance both matter.
      Tensor x =
          B().binary(BinaryOp::Add,
                     B().binary(BinaryOp::Mul, rnd(s, d, 14), T({}, {3.0}, d)),
                     T({}, {10.0}, d));
      int last = static_cast<int>(s.size()) - 1;
      for (double eps : {1e-5, 0.1})
        check_like(layer_norm_last(x, eps),
                   ss::ref::layer_norm(x, {last}, eps),
                   rtol_of(d));
    }
}

TEST_CASE("fused kernels' VJPs match central differences", "[api]") {
  Tensor x = rnd({3, 7}, DType::F64, 13);
  auto check = [](const char* what, auto f, const Tensor& in) {
    auto r = ss::ref::check_gradients(
        [f](const std::vector<Tensor>& xs) { return f(xs[0]); }, {in});
    INFO(what << ": " << r.detail);
    CHECK(r.ok);
  };
  check(
      "softmax", [](const Tensor& t) { return softmax_last(t, false); }, x);
  check(
      "log_softmax", [](const Tensor& t) { return softmax_last(t, true); }, x);
  check(
      "gelu", [](const Tensor& t) { return gelu(t, false); }, x);
  check(
      "gelu tanh", [](const Tensor& t) { return gelu(t, true); }, x);
  // A masked row (masked_fill's -inf): the masked entries get no gradient,
  // the others softmax's over the entries left.
  std::vector<double> keep(21, 1);
  for (int j = 1; j < 7; j += 2) keep[7 + j] = 0;
  Tensor m = T({3, 7}, keep, DType::Bool);
  check(
      "masked softmax",
      [m](const Tensor& t) {
        return softmax_last(where(m, t, scalar_like(-INFINITY, t)), false);
      },
      x);
}
