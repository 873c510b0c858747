// The fused norms and the f32 vector row kernels (Note [Vector row
// kernels] in ops/cpu/cpu_vrows.cpp): layer_norm with its affine part and
// rms_norm along the last axis against ref/'s naive loops in double
// (ref/ref_ops.h), their VJPs against central differences (ref/ref_grad.h)
// in f64, and the f32 VJPs of softmax, log_softmax, layer_norm, rms_norm
// and gelu (exact and tanh), which run the AVX2 row kernels, against
// central differences of ref's f64 loops. Row lengths 37 and 67 leave tails
// (not a multiple of 8 lanes), 128 has none, 1 is all tail.
//
// Tolerances: forwards f64 1e-12 relative plus 1e-12 absolute, f32 2e-6
// relative (a few roundings of a <= 128-term sum) plus 1e-6 absolute
// (stated where it is set: + b can cancel xhat * g). The f32 VJPs: 2e-5 of the
// largest gradient entry: the kernel rounds its f32 inputs' products and two
// row sums (about 1e-6 each relative), and central differences in f64 at step
// 1e-6 are good to ~1e-9; a wrong term (a missing mean(d) or xhat * mean(d *
// xhat)) moves entries by 1e-2 or more of the largest.

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "ops/api.h"
#include "ops/autodiff/tape.h"
#include "ops/tests/cpu_test_util.h"
#include "ref/ref_grad.h"
#include "ref/ref_ops.h"

using namespace cpu_test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

void check_like(const Tensor& got,
                const Tensor& want,
                double rtol,
                double atol) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    CHECK(std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]));
  }
}

/// LayerNorm-like affine params: g = 1 + rnd / 30, b = rnd / 30 (rnd's
/// values are in [-3, 3]).
Tensor affine(const Shape& s, DType d, unsigned seed, double one) {
  std::vector<double> v = rnd(s, DType::F64, seed).to_doubles();
  for (double& e : v) e = one + e / 30;
  return T(s, v, d);
}

/// x with an offset and a scale, so the mean and the variance both matter.
Tensor input(const Shape& s, DType d, unsigned seed) {
  std::vector<double> v = rnd(s, DType::F64, seed).to_doubles();
  for (double& e : v) e = 10 + 3 * e;
  return T(s, v, d);
}

/// Cotangent weights in [0.5, 1.5] with both signs.
Tensor weights(const Shape& s, unsigned seed) {
  std::vector<double> v = rnd(s, DType::F64, seed).to_doubles();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (i % 3 ? 1 : -1) * (1 + v[i] / 6);
  return T(s, v);
}

/// d sum(w * f(xs)) / d xs[k], by central differences of [f] (ref's f64
/// loops) at step 1e-6.
std::vector<double> numeric_grad(const Fn& f,
                                 std::vector<Tensor> xs,
                                 size_t k,
                                 const Tensor& w) {
  std::vector<double> wv = w.to_doubles(), x = xs[k].to_doubles(), out;
  auto loss = [&](const std::vector<double>& v) {
    xs[k] = T(xs[k].shape(), v);
    std::vector<double> y = f(xs).to_doubles();
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += wv[i] * y[i];
    return s;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> p = x, m = x;
    p[i] += 1e-6, m[i] -= 1e-6;
    out.push_back((loss(p) - loss(m)) / 2e-6);
  }
  return out;
}

/// The f32 kernel's VJP ([f32] on f32 copies of [xs], by backward())
/// against numeric_grad of [ref] on the f64 [xs], for every input.
void check_f32_vjp(const char* what,
                   const Fn& f32,
                   const Fn& ref,
                   const std::vector<Tensor>& xs) {
  std::vector<Tensor> leaves;
  for (const Tensor& x : xs)
    leaves.push_back(requires_grad(cast(x, DType::F32)));
  Tensor y = f32(leaves);
  Tensor w = weights(y.shape(), 31);
  std::vector<Tensor> grads =
      backward(sum(mul(cast(y, DType::F64), w)), leaves);
  for (size_t k = 0; k < xs.size(); ++k) {
    std::vector<double> want = numeric_grad(ref, xs, k, w);
    std::vector<double> got = grads[k].to_doubles();
    double top = 0;
    for (double v : want) top = std::max(top, std::abs(v));
    for (size_t i = 0; i < want.size(); ++i) {
      INFO(what << ", input " << k << ", element " << i << ": got " << got[i]
                << ", want " << want[i]);
      CHECK(std::abs(got[i] - want[i]) <= 2e-5 * std::max(top, 1.0));
    }
  }
}

}  // namespace

TEST_CASE("fused layer_norm with its affine part and rms_norm match ref",
          "[api]") {
  for (DType d : kFloats)
    for (Shape s :
         {Shape{4, 37}, Shape{2, 3, 128}, Shape{3, 67}, Shape{3, 1}}) {
      INFO(ss::types::dtype_name(d) << " " << shape_string(s));
      Tensor x = input(s, d, 41);
      Shape ps = {s.back()};
      Tensor g = affine(ps, d, 42, 1), b = affine(ps, d, 43, 0);
      int last = static_cast<int>(s.size()) - 1;
      double rtol = d == DType::F64 ? 1e-12 : 2e-6;
      // + b can cancel xhat * g to near 0, where the absolute error of
      // xhat stays: x ~ 10 rounds to f32 by 5e-7, which xhat carries
      // divided by the row's deviation (~2) and times g (~1).
      double atol = d == DType::F64 ? 1e-12 : 1e-6;
      for (double eps : {1e-5, 0.1}) {
        check_like(layer_norm_last(x, eps, g, b),
                   ss::ref::layer_norm(x, {last}, eps, g, b),
                   rtol,
                   atol);
        check_like(rms_norm_last(x, eps),
                   ss::ref::rms_norm(x, {last}, eps),
                   rtol,
                   atol);
      }
    }
}

TEST_CASE("fused norms' f64 VJPs match central differences", "[api]") {
  Tensor x = input({3, 7}, DType::F64, 44);
  Tensor g = affine({7}, DType::F64, 45, 1), b = affine({7}, DType::F64, 46, 0);
  auto check = [](const char* what, const Fn& f, std::vector<Tensor> in) {
    auto r = ss::ref::check_gradients(f, std::move(in));
    INFO(what << ": " << r.detail);
    CHECK(r.ok);
  };
  check("layer_norm affine",
        [](const std::vector<Tensor>& v) {
          return layer_norm_last(v[0], 1e-5, v[1], v[2]);
        },
        {x, g, b});
  check("rms_norm",
        [](const std::vector<Tensor>& v) { return rms_norm_last(v[0], 1e-6); },
        {x});
}

TEST_CASE("f32 row kernels' VJPs match central differences of ref", "[api]") {
  for (Shape s : {Shape{3, 37}, Shape{2, 128}, Shape{2, 67}}) {
    INFO(shape_string(s));
    int last = static_cast<int>(s.size()) - 1;
    Shape ps = {s.back()};
    Tensor x = input(s, DType::F64, 47);
    Tensor g = affine(ps, DType::F64, 48, 1), b = affine(ps, DType::F64, 49, 0);
    Tensor logits = rnd(s, DType::F64, 50);
    check_f32_vjp(
        "softmax",
        [](const std::vector<Tensor>& v) { return softmax_last(v[0], false); },
        [last](const std::vector<Tensor>& v) {
          return ss::ref::softmax(v[0], last);
        },
        {logits});
    check_f32_vjp(
        "log_softmax",
        [](const std::vector<Tensor>& v) { return softmax_last(v[0], true); },
        [last](const std::vector<Tensor>& v) {
          return ss::ref::log_softmax(v[0], last);
        },
        {logits});
    check_f32_vjp(
        "layer_norm affine",
        [](const std::vector<Tensor>& v) {
          return layer_norm_last(v[0], 1e-5, v[1], v[2]);
        },
        [last](const std::vector<Tensor>& v) {
          return ss::ref::layer_norm(v[0], {last}, 1e-5, v[1], v[2]);
        },
        {x, g, b});
    check_f32_vjp(
        "layer_norm",
        [](const std::vector<Tensor>& v) {
          return layer_norm_last(v[0], 1e-5);
        },
        [last](const std::vector<Tensor>& v) {
          return ss::ref::layer_norm(v[0], {last}, 1e-5);
        },
        {x});
    check_f32_vjp(
        "rms_norm",
        [](const std::vector<Tensor>& v) { return rms_norm_last(v[0], 1e-6); },
        [last](const std::vector<Tensor>& v) {
          return ss::ref::rms_norm(v[0], {last}, 1e-6);
        },
        {x});
    for (bool tanh : {false, true})
      check_f32_vjp(
          tanh ? "gelu tanh" : "gelu",
          [tanh](const std::vector<Tensor>& v) { return gelu(v[0], tanh); },
          [tanh](const std::vector<Tensor>& v) {
            return ss::ref::gelu(v[0], tanh ? "tanh" : "none");
          },
          {logits});
  }
}
