// Products with epilogues (Note [Products with epilogues] in
// ops/cpu/cpu_epilogue.cpp): the CPU's fused kernel and the backends'
// default composition (Backend::matmul_epilogue, which the CUDA backend
// runs) against ref/'s naive loops (ref::matmul, ref::relu, ref::gelu,
// ref::add, written from the definitions), on row counts around the
// kernel's 16-row blocks and over one block (300 rows of 300 columns in
// f64: blocks of 96 rows), k = 0 (an empty sum), every activation, with
// and without bias, residual and scale; in f64, where the rows are one
// block, the fused kernel equals the composition bit for bit (the Note's
// claim: each step rounds as the op written out rounds it); the API's
// VJPs against central differences.
//
// Tolerances: f64 1e-12 relative plus 1e-13 absolute (a product over <= 37
// terms of values <= 3, each rounding 1e-16, in another order than ref's;
// gelu's erf within a few ulp); f32 1e-5 relative plus 1e-5 absolute (the
// same sums at 6e-8 per rounding over |sums| <= 40, and the vector erf
// within 1.5 ulp). Gradients: ref_grad's defaults (rtol 1e-5, atol 1e-7 at
// eps 1e-6, in f64; relu's kink is never met: the values are multiples of
// 1/16 plus 1/37 offsets, none of whose pre-activations is 0).

#include <catch2/catch.hpp>
#include <cstring>

#include "ops/api.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/tests/cpu_test_util.h"
#include "ref/ref_grad.h"
#include "ref/ref_ops.h"

using namespace cpu_test;

namespace {

struct Case {
  Shape lead;  // x's leading axes (the rows)
  int64_t k, m;
};

const Case kCases[] = {
    {{1}, 3, 1},
    {{5}, 4, 17},
    {{2, 35}, 37, 20},
    {{300}, 37, 300},
    {{3, 7}, 0, 5},
    {{}, 6, 9},
};

Tensor x_of(const Case& c, DType d, unsigned seed) {
  Shape s = c.lead;
  s.push_back(c.k);
  return rnd(s, d, seed);
}

Tensor scaled(const Shape& s, DType d, unsigned seed, double by) {
  std::vector<double> v = rnd(s, DType::F64, seed).to_doubles();
  for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * by + 1.0 / 37 * (i % 5);
  return T(s, v, d);
}

Tensor want_of(const Tensor& x,
               const Tensor& w,
               const Epilogue& e,
               Activation act) {
  namespace r = ss::ref;
  Tensor y = r::matmul(r::to(x, DType::F64), r::to(w, DType::F64));
  if (e.scale != 1) y = r::mul(y, r::full({}, e.scale, DType::F64));
  if (e.bias.defined()) y = r::add(y, r::to(e.bias, DType::F64));
  switch (act) {
    case Activation::None:
      break;
    case Activation::Relu:
      y = r::relu(y);
      break;
    case Activation::Gelu:
      y = r::gelu(y);
      break;
    case Activation::GeluTanh:
      y = r::gelu(y, "tanh");
      break;
  }
  if (e.residual.defined()) y = r::add(y, r::to(e.residual, DType::F64));
  return y;
}

void check_like(const Tensor& got, const Tensor& want, DType d) {
  REQUIRE(got.shape() == want.shape());
  const double rtol = d == DType::F64 ? 1e-12 : 1e-5;
  const double atol = d == DType::F64 ? 1e-13 : 1e-5;
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  // The worst element, one check a tensor (the cases hold 10^5 elements).
  size_t bad = g.size();
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double over = std::abs(g[i] - w[i]) - (atol + rtol * std::abs(w[i]));
    if (!(over <= 0) && (bad == g.size() || over > worst || std::isnan(over)))
      bad = i, worst = over;
  }
  INFO("element " << bad << ": got " << (bad < g.size() ? g[bad] : 0)
                  << ", want " << (bad < g.size() ? w[bad] : 0));
  CHECK(bad == g.size());
}

struct OneThread {
  OneThread() : before(ss::ops::cpu_threads()) { ss::ops::set_cpu_threads(1); }
  ~OneThread() { ss::ops::set_cpu_threads(before); }
  int before;
};

const Activation kActs[] = {
    Activation::None, Activation::Relu, Activation::Gelu, Activation::GeluTanh};

}  // namespace

TEST_CASE("a product's epilogue gives ref's values", "[epilogue]") {
  for (DType d : {DType::F64, DType::F32})
    for (const Case& c : kCases)
      for (Activation act : kActs)
        for (int extras = 0; extras < 8; ++extras) {
          const bool bias = extras & 1, residual = extras & 2,
                     scale = extras & 4;
          INFO(ss::types::dtype_name(d)
               << " rows " << shape_string(c.lead) << " k " << c.k << " m "
               << c.m << " act " << int(act) << " bias " << bias << " residual "
               << residual << " scale " << scale);
          Tensor x = x_of(c, d, 11);
          Tensor w = scaled({c.k, c.m}, d, 12, 0.25);
          Shape out = c.lead;
          out.push_back(c.m);
          Epilogue e;
          e.act = act;
          e.keep_pre = true;
          if (bias) e.bias = scaled({c.m}, d, 13, 1);
          if (residual) e.residual = rnd(out, d, 14);
          if (scale) e.scale = 0.75;
          Tensor want = want_of(x, w, e, act);
          Epilogue plain = e;
          plain.act = Activation::None;
          plain.residual = Tensor();
          Tensor want_pre = want_of(x, w, plain, Activation::None);
          auto [y, pre] = B().matmul_epilogue(x, w, e);
          auto [y0, pre0] = B().Backend::matmul_epilogue(x, w, e);
          check_like(y, want, d);
          check_like(pre, want_pre, d);
          check_like(y0, want, d);
          check_like(pre0, want_pre, d);
          if (d == DType::F64 && numel_of(c.lead) * c.m * 8 <= 256 * 1024) {
            // One block (the kernel's 256 KiB): the same product, so the
            // same bits, then each step rounded as the ops round it. On
            // one thread, as deterministic mode runs OpenBLAS.
            OneThread scope;
            auto [y1, pre1] = B().matmul_epilogue(x, w, e);
            auto [y2, pre2] = B().Backend::matmul_epilogue(x, w, e);
            CHECK(bitwise_equal(y1, y2));
            CHECK(bitwise_equal(pre1, pre2));
          }
          e.keep_pre = false;
          CHECK_FALSE(B().matmul_epilogue(x, w, e)[1].defined());
        }
}

TEST_CASE("a product's epilogue refuses what it cannot take", "[epilogue]") {
  Tensor x = rnd({4, 3}, DType::F64, 1);
  Tensor w = rnd({3, 5}, DType::F64, 2);
  Epilogue e;
  e.bias = rnd({4}, DType::F64, 3);
  CHECK_THROWS_WITH(B().matmul_epilogue(x, w, e),
                    Catch::Contains("the bias needs shape [m]"));
  e = Epilogue();
  e.residual = rnd({5}, DType::F64, 3);
  CHECK_THROWS_WITH(B().matmul_epilogue(x, w, e),
                    Catch::Contains("the residual needs the output's shape"));
  CHECK_THROWS_WITH(B().matmul_epilogue(x, rnd({4, 5}, DType::F64, 2), {}),
                    Catch::Contains("inner dims differ"));
  CHECK_THROWS_WITH(
      B().matmul_epilogue(
          rnd({4, 3}, DType::I64, 1), rnd({3, 5}, DType::I64, 2), {}),
      Catch::Contains("takes f32 or f64"));
}

TEST_CASE("a product with an epilogue: gradients match central differences",
          "[epilogue]") {
  for (Activation act : kActs)
    for (bool residual : {false, true}) {
      INFO("act " << int(act) << " residual " << residual);
      std::vector<Tensor> in = {scaled({2, 3, 4}, DType::F64, 21, 0.25),
                                scaled({4, 5}, DType::F64, 22, 0.5),
                                scaled({5}, DType::F64, 23, 0.5)};
      if (residual) in.push_back(scaled({2, 3, 5}, DType::F64, 24, 1));
      auto r = ss::ref::check_gradients(
          [&](const std::vector<Tensor>& t) {
            return ss::ops::linear_epilogue(
                t[0], t[1], t[2], act, residual ? t[3] : Tensor(), 0.8);
          },
          in);
      INFO(r.detail);
      CHECK(r.ok);
    }
}

TEST_CASE("a product with an epilogue over an empty sum: its gradients",
          "[epilogue]") {
  // k = 0: y = act(b) on every row; only b has a gradient (the rows were
  // counted as numel / k, 0, and the backward's reshape threw).
  for (Activation act : kActs) {
    INFO("act " << int(act));
    std::vector<Tensor> in = {Tensor::zeros({3, 0}, DType::F64),
                              Tensor::zeros({0, 2}, DType::F64),
                              scaled({2}, DType::F64, 25, 0.5)};
    auto r = ss::ref::check_gradients(
        [&](const std::vector<Tensor>& t) {
          return ss::ops::linear_epilogue(t[0], t[1], t[2], act, Tensor(), 1.0);
        },
        in);
    INFO(r.detail);
    CHECK(r.ok);
  }
}

TEST_CASE("an epilogue's activation backward equals the VJP written out",
          "[epilogue]") {
  // relu's edges: 0, -0, NaN and inf in x, and an inf cotangent where the
  // mask is off (torch's threshold_backward gives 0 there, not NaN).
  const double nan = std::nan(""), inf = INFINITY;
  for (DType d : kFloats) {
    Tensor x = T({2, 5}, {0, -0.0, nan, inf, -inf, 1.5, -2, 0.25, -0.25, 3}, d);
    Tensor g = T({2, 5}, {inf, 2, 3, 4, 5, -inf, inf, 8, 9, 10}, d);
    for (Activation act : kActs) {
      INFO(ss::types::dtype_name(d) << " act " << int(act));
      Tensor got = B().activation_backward(act, g, x);
      Tensor want = B().Backend::activation_backward(act, g, x);
      CHECK(bitwise_equal(got, want));
    }
    // By hand: relu passes g where x > 0 or x is NaN.
    CHECK(B().activation_backward(Activation::Relu, g, x).to_doubles()[2] == 3);
    CHECK(B().activation_backward(Activation::Relu, g, x).to_doubles()[0] == 0);
    CHECK(B().activation_backward(Activation::Relu, g, x).to_doubles()[6] == 0);
  }
}
