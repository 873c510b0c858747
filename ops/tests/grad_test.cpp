// Reverse-mode autodiff (ops/autodiff/tape.h) and every VJP of the
// differentiable API (ops/api.h), checked by finite differences in f64
// (ref/ref_grad.h): one table row per differentiable function, with
// broadcasting cases for the binary ones. Inputs stay away from kinks and
// ties (|x| > 0.1 for abs and relu, distinct values for max, min, sort,
// maximum and minimum); the conventions at kinks and ties are checked
// exactly in their own test cases.
//
// Tolerances: central differences with eps = 1e-6 in f64 have a truncation
// error O(eps^2 f''') ~ 1e-12 and a rounding error O(1e-16 / eps) ~ 1e-10
// on inputs and values of order 1, so rtol = 1e-6 with atol = 1e-8 is safe
// and still catches any wrong VJP (errors of order 1). The cast row goes
// through f32 and uses eps = 1e-2, rtol = 1e-3 (f32 rounding ~ 6e-8 / 1e-2).

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ref/ref_grad.h"

namespace {

using namespace ss::ops;
using ss::types::DType;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Deterministic values in [lo, hi).
Tensor R(const Shape& s, uint64_t seed, double lo = -1, double hi = 1) {
  int64_t n = numel_of(s);
  std::vector<double> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + (hi - lo) * static_cast<double>(x >> 11) / 9007199254740992.0;
  }
  return Tensor::from_doubles(s, v, DType::F64);
}

// Magnitudes in [0.2, 1.2] with mixed signs: away from 0 (abs, relu).
Tensor Away(const Shape& s, uint64_t seed) {
  Tensor t = R(s, seed, 0.2, 1.2);
  for (int64_t i = 0; i < t.numel(); i += 2) t.set(i, -t.at(i));
  return t;
}

// Distinct values 0.1 apart, shuffled: no ties (max, sort).
Tensor Distinct(const Shape& s, double offset = 0) {
  int64_t n = numel_of(s);
  int64_t stride = 7;
  while (std::gcd(n, stride) != 1) stride += 2;  // a permutation
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = 0.1 * static_cast<double>((i * stride) % n) - 0.3 + offset;
  return Tensor::from_doubles(s, v, DType::F64);
}

Tensor I(const Shape& s, const std::vector<double>& v) {
  return Tensor::from_doubles(s, v, DType::I64);
}

Tensor F(const Shape& s, const std::vector<double>& v) {
  return Tensor::from_doubles(s, v, DType::F64);
}

struct Row {
  const char* name;
  Fn f;
  std::vector<Tensor> inputs;
  double eps = 1e-6, rtol = 1e-6, atol = 1e-8;
};

Fn U(Tensor (*f)(const Tensor&)) {
  return [f](const std::vector<Tensor>& x) { return f(x[0]); };
}
Fn B(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); };
}

std::vector<Row> rows() {
  Tensor cond = Tensor::from_doubles({2, 3}, {1, 0, 0, 1, 1, 0}, DType::Bool);
  return {
      // ------------------------------------------------ unary
      {"neg", U(neg), {R({2, 3}, 1)}},
      {"abs", U(abs), {Away({2, 3}, 2)}},
      {"exp", U(exp), {R({2, 3}, 3)}},
      {"expm1", U(expm1), {R({2, 3}, 14, -2, 2)}},
      {"log", U(log), {R({2, 3}, 4, 0.2, 2)}},
      {"log1p", U(log1p), {R({2, 3}, 5, -0.5, 2)}},
      {"sqrt", U(sqrt), {R({2, 3}, 6, 0.2, 2)}},
      {"rsqrt", U(rsqrt), {R({2, 3}, 7, 0.2, 2)}},
      {"sin", U(sin), {R({2, 3}, 8, -3, 3)}},
      {"cos", U(cos), {R({2, 3}, 9, -3, 3)}},
      {"tanh", U(tanh), {R({2, 3}, 10, -2, 2)}},
      {"sigmoid", U(sigmoid), {R({2, 3}, 11, -3, 3)}},
      {"relu", U(relu), {Away({2, 3}, 12)}},
      {"erf", U(erf), {R({2, 3}, 13, -2, 2)}},
      // ------------------------------------------------ binary
      {"add", B(add), {R({2, 3}, 20), R({3}, 21)}},
      {"add 2x1 + 1x3", B(add), {R({2, 1}, 22), R({1, 3}, 23)}},
      {"sub", B(sub), {R({3}, 24), R({2, 3}, 25)}},
      {"mul", B(mul), {R({2, 3}, 26), R({2, 1}, 27)}},
      {"mul by 0-d", B(mul), {R({2, 3}, 28), R({}, 29)}},
      {"div", B(div), {R({2, 3}, 30), R({3}, 31, 0.5, 2)}},
      {"div 0-d by", B(div), {R({}, 32), R({2, 3}, 33, 0.5, 2)}},
      {"pow", B(pow), {R({2, 3}, 34, 0.5, 2), R({3}, 35, -2, 2)}},
      {"pow 0-d base", B(pow), {R({}, 36, 0.5, 2), R({2, 2}, 37)}},
      {"maximum", B(maximum), {Distinct({2, 3}), Distinct({3}, 0.05)}},
      {"minimum", B(minimum), {Distinct({3}, 0.05), Distinct({2, 3})}},
      {"where",
       [cond](const std::vector<Tensor>& x) { return where(cond, x[0], x[1]); },
       {R({2, 3}, 40), R({3}, 41)}},
      {"where 0-d",
       [cond](const std::vector<Tensor>& x) { return where(cond, x[0], x[1]); },
       {R({}, 42), R({2, 1}, 43)}},
      {"cast",
       [](const std::vector<Tensor>& x) {
         return mul(cast(x[0], DType::F32), cast(x[0], DType::F32));
       },
       {R({2, 3}, 44)},
       1e-2,
       1e-3,
       1e-5},
      {"mixed dtypes",
       [](const std::vector<Tensor>& x) {
         return add(cast(x[0], DType::F32), x[1]);  // f32 + f64 -> f64
       },
       {R({2, 3}, 45), R({3}, 46)},
       1e-2,
       1e-3,
       1e-5},
      // ------------------------------------------------ reductions
      {"sum all", [](auto& x) { return sum(x[0]); }, {R({2, 3, 4}, 50)}},
      {"sum axes",
       [](auto& x) {
         return sum(x[0], {0, -1});
       },
       {R({2, 3, 4}, 51)}},
      {"sum keepdims",
       [](auto& x) { return sum(x[0], {1}, true); },
       {R({2, 3, 4}, 52)}},
      {"mean", [](auto& x) { return mean(x[0], {1}); }, {R({2, 3, 4}, 53)}},
      {"mean all", [](auto& x) { return mean(x[0]); }, {R({2, 3}, 54)}},
      {"max", [](auto& x) { return max(x[0], {1}); }, {Distinct({2, 3, 4})}},
      {"max all", [](auto& x) { return max(x[0]); }, {Distinct({2, 3})}},
      {"min",
       [](auto& x) {
         return min(x[0], {0, 2}, true);
       },
       {Distinct({2, 3, 4})}},
      {"prod", [](auto& x) { return prod(x[0], {1}); }, {R({2, 3, 4}, 55)}},
      {"prod all",
       [](auto& x) { return prod(x[0]); },
       {R({2, 3}, 56, 0.5, 1.5)}},
      // ------------------------------------------------ shape
      {"reshape",
       [](auto& x) {
         return reshape(x[0], {3, -1});
       },
       {R({2, 3, 2}, 60)}},
      {"permute",
       [](auto& x) {
         return permute(x[0], {2, 0, 1});
       },
       {R({2, 3, 4}, 61)}},
      {"transpose_last", U(transpose_last), {R({2, 3, 4}, 62)}},
      {"broadcast_to",
       [](auto& x) {
         return broadcast_to(x[0], {2, 3, 4});
       },
       {R({3, 1}, 63)}},
      {"sum_to",
       [](auto& x) {
         return sum_to(x[0], {3, 1});
       },
       {R({2, 3, 4}, 64)}},
      {"unsqueeze",
       [](auto& x) { return unsqueeze(x[0], -1); },
       {R({2, 3}, 65)}},
      {"squeeze", [](auto& x) { return squeeze(x[0], 1); }, {R({2, 1, 3}, 66)}},
      {"slice", [](auto& x) { return slice(x[0], 1, 1, 3); }, {R({2, 4}, 67)}},
      {"slice step",
       [](auto& x) { return slice(x[0], -1, 1, 7, 2); },
       {R({2, 7}, 68)}},
      {"concat",
       [](auto& x) {
         return concat({x[0], x[1], x[0]}, -1);
       },
       {R({2, 3}, 69), R({2, 1}, 70)}},
      {"stack",
       [](auto& x) {
         return stack({x[0], x[1]}, 1);
       },
       {R({2, 3}, 71), R({2, 3}, 72)}},
      {"pad", [](auto& x) { return pad(x[0], 0, 2, 1, 3.0); }, {R({2, 3}, 73)}},
      // ------------------------------------------------ indexing
      {"take",
       [](auto& x) { return take(x[0], x[1], 1); },
       {R({2, 4}, 80), I({2, 3}, {3, 0, 3, 1, 1, 2})}},
      {"take_one",
       [](auto& x) { return take_one(x[0], -2, 1); },
       {R({2, 4}, 81)}},
      {"gather",
       [](auto& x) { return gather(x[0], x[1], 0); },
       {R({3, 2}, 82), I({4, 2}, {2, 0, 2, 1, 0, 0, 1, 2})}},
      {"scatter_add",
       [](auto& x) { return scatter_add(x[0], x[2], x[1], 1); },
       {R({2, 3}, 83), R({2, 4}, 84), I({2, 4}, {0, 2, 2, 1, 1, 1, 0, 2})}},
      {"cumsum", [](auto& x) { return cumsum(x[0], -1); }, {R({2, 4}, 85)}},
      {"cumsum axis 0",
       [](auto& x) { return cumsum(x[0], 0); },
       {R({3, 2}, 86)}},
      {"sort", [](auto& x) { return sort(x[0], 1).first; }, {Distinct({2, 5})}},
      {"sort descending",
       [](auto& x) { return sort(x[0], 0, true).first; },
       {Distinct({4, 3})}},
      // ------------------------------------------------ matmul, conv2d
      {"matmul", B(matmul), {R({2, 3}, 90), R({3, 4}, 91)}},
      {"matmul batch broadcast", B(matmul), {R({2, 2, 3}, 92), R({3, 4}, 93)}},
      {"matmul batch both", B(matmul), {R({2, 1, 2, 3}, 94), R({3, 3, 2}, 95)}},
      {"matmul 1-d @ 2-d", B(matmul), {R({3}, 96), R({3, 2}, 97)}},
      {"matmul 2-d @ 1-d", B(matmul), {R({2, 3}, 98), R({3}, 99)}},
      {"matmul 1-d @ 1-d", B(matmul), {R({3}, 100), R({3}, 101)}},
      {"conv2d",
       [](auto& x) { return conv2d(x[0], x[1], ConvShape::square(1, 1)); },
       {R({2, 2, 4, 4}, 110), R({3, 2, 3, 3}, 111)}},
      {"conv2d stride 2",
       [](auto& x) { return conv2d(x[0], x[1], ConvShape::square(2, 0)); },
       {R({1, 2, 5, 5}, 112), R({2, 2, 2, 2}, 113)}},
      // ------------------------------------------------ composites
      {"log_softmax",
       [](auto& x) {
         Tensor m = stop_grad(max(x[0], {-1}, true));
         Tensor s = sub(x[0], m);
         return sub(s, log(sum(exp(s), {-1}, true)));
       },
       {R({2, 4}, 120, -2, 2)}},
  };
}

}  // namespace

TEST_CASE("grad: finite differences for every differentiable op", "[grad]") {
  for (const Row& r : rows()) {
    SECTION(r.name) {
      auto rep = ss::ref::check_gradients(r.f, r.inputs, r.eps, r.rtol, r.atol);
      INFO(r.name << ":\n" << rep.detail);
      CHECK(rep.ok);
    }
  }
}

TEST_CASE("grad: a tensor used twice accumulates", "[grad]") {
  // y = x*x + x -> dy/dx = 2x + 1.
  Tensor x = requires_grad(F({3}, {1, -2, 0.5}));
  Tensor loss = sum(add(mul(x, x), x));
  auto g = backward(loss, {x});
  CHECK(g[0].to_doubles() == std::vector<double>{3, -3, 2});
  CHECK(g[0].dtype() == DType::F64);
}

TEST_CASE("grad: unreached leaves get zeros, in their dtype", "[grad]") {
  Tensor x = requires_grad(F({2}, {1, 2}));
  Tensor w = requires_grad(Tensor::from_doubles({3}, {1, 2, 3}, DType::F32));
  Tensor loss = sum(mul(x, x));
  auto g = backward(loss, {x, w});
  CHECK(g[0].to_doubles() == std::vector<double>{2, 4});
  CHECK(g[1].shape() == Shape{3});
  CHECK(g[1].dtype() == DType::F32);
  CHECK(g[1].to_doubles() == std::vector<double>{0, 0, 0});
  // A root that records nothing: every gradient is zero.
  auto g2 = backward(sum(stop_grad(x)), {x});
  CHECK(g2[0].to_doubles() == std::vector<double>{0, 0});
}

TEST_CASE("grad: gradients reach leaves through promotion casts", "[grad]") {
  Tensor x = requires_grad(Tensor::from_doubles({2}, {1, 2}, DType::F32));
  Tensor y = F({2}, {3, 4});
  auto g = backward(sum(mul(x, y)), {x});
  CHECK(g[0].dtype() == DType::F32);
  CHECK(g[0].to_doubles() == std::vector<double>{3, 4});
  // Through an int promotion: i64 * f32 -> f32.
  Tensor i = Tensor::from_doubles({2}, {5, 6}, DType::I64);
  auto gi = backward(sum(mul(i, x)), {x});
  CHECK(gi[0].to_doubles() == std::vector<double>{5, 6});
}

TEST_CASE("grad: no recording without grad mode or grad inputs", "[grad]") {
  Tensor x = requires_grad(F({2}, {1, 2}));
  Tensor c = F({2}, {3, 4});
  CHECK(needs_grad(x));
  CHECK_FALSE(needs_grad(c));
  CHECK(needs_grad(mul(x, c)));
  CHECK_FALSE(needs_grad(mul(c, c)));
  CHECK_FALSE(mul(c, c).autograd());
  {
    GradMode::Guard off(false);
    CHECK_FALSE(GradMode::enabled());
    Tensor y = mul(x, c);
    CHECK_FALSE(needs_grad(y));
    CHECK_FALSE(needs_grad(reshape(x, {2, 1})));
    {
      GradMode::Guard on(true);
      CHECK(needs_grad(mul(x, c)));
    }
  }
  CHECK(GradMode::enabled());
  // Ops without a gradient record nothing.
  CHECK_FALSE(needs_grad(floor(x)));
  CHECK_FALSE(needs_grad(gt(x, c)));
  CHECK_FALSE(needs_grad(argmax(x, 0)));
  CHECK_FALSE(needs_grad(sign(x)));
  CHECK_FALSE(needs_grad(stop_grad(x)));
  CHECK_FALSE(needs_grad(sort(x, 0).second));
  CHECK_FALSE(needs_grad(isnan(x)));
}

TEST_CASE("grad: backward checks its root", "[grad]") {
  Tensor x = requires_grad(F({2}, {1, 2}));
  CHECK_THROWS_AS(backward(mul(x, x), {x}), OpError);
  CHECK_THROWS_AS(
      backward(sum(Tensor::from_doubles({2}, {1, 2}, DType::I64)), {x}),
      OpError);
  // The root as its own leaf: one.
  Tensor s = requires_grad(F({}, {3}));
  CHECK(backward(s, {s})[0].item() == 1);
  // An intermediate as a "leaf": its cotangent.
  Tensor h = mul(x, x);
  auto g = backward(sum(mul(h, F({2}, {5, 7}))), {h, x});
  CHECK(g[0].to_doubles() == std::vector<double>{5, 7});
  CHECK(g[1].to_doubles() == std::vector<double>{10, 28});
}

TEST_CASE("grad: conventions at kinks and ties", "[grad]") {
  auto grad_of = [](const std::function<Tensor(const Tensor&)>& f,
                    const Tensor& x0) {
    Tensor x = requires_grad(x0);
    return backward(sum(f(x)), {x})[0].to_doubles();
  };
  // abs and relu: 0 at 0.
  CHECK(grad_of([](auto& x) { return abs(x); }, F({3}, {-1, 0, 2})) ==
        std::vector<double>{-1, 0, 1});
  CHECK(grad_of([](auto& x) { return relu(x); }, F({3}, {-1, 0, 2})) ==
        std::vector<double>{0, 0, 1});
  // relu selects the cotangent: an inf or NaN one where x <= 0 gives 0,
  // not inf * 0 = NaN, and a NaN x passes it on, as torch's
  // threshold_backward (torch 1.13: x = [-1, 0, nan, 2] and the output's
  // cotangent [inf, nan, inf, 3] give x.grad = [0, 0, inf, 3]).
  {
    Tensor x = requires_grad(F({4}, {-1, 0, NAN, 2}));
    Tensor g = F({4}, {INFINITY, NAN, INFINITY, 3});
    CHECK(backward(sum(mul(relu(x), g)), {x})[0].to_doubles() ==
          std::vector<double>{0, 0, INFINITY, 3});
  }
  // maximum / minimum: ties split half and half.
  Tensor other = F({3}, {0, 1, 5});
  CHECK(grad_of([&](auto& x) { return maximum(x, other); },
                F({3}, {1, 1, 1})) == std::vector<double>{1, 0.5, 0});
  CHECK(grad_of([&](auto& x) { return minimum(x, other); },
                F({3}, {1, 1, 1})) == std::vector<double>{0, 0.5, 1});
  // max / min reductions: split evenly among the extremes (torch.amax).
  CHECK(grad_of([](auto& x) { return max(x); }, F({4}, {3, 1, 3, 3})) ==
        std::vector<double>{1.0 / 3, 0, 1.0 / 3, 1.0 / 3});
  CHECK(grad_of([](auto& x) { return min(x, {1}); }, F({2, 2}, {2, 2, 1, 4})) ==
        std::vector<double>{0.5, 0.5, 1, 0});
  // prod with zeros: the product of the others, without dividing by 0.
  CHECK(grad_of([](auto& x) { return prod(x); }, F({3}, {2, 0, 3})) ==
        std::vector<double>{0, 6, 0});
  CHECK(grad_of([](auto& x) { return prod(x); }, F({3}, {2, 0, 0})) ==
        std::vector<double>{0, 0, 0});
  CHECK(grad_of([](auto& x) { return prod(x, {1}); },
                F({2, 2}, {0, 5, 2, 3})) == std::vector<double>{5, 0, 3, 2});
  // pow: 0^0 has gradient 0 w.r.t. the base, and 0^b gives 0 w.r.t. b.
  Tensor zero = F({1}, {0});
  CHECK(grad_of([&](auto& x) { return pow(zero, x); }, F({1}, {2})) ==
        std::vector<double>{0});
  CHECK(grad_of([&](auto& x) { return pow(x, zero); }, F({1}, {0})) ==
        std::vector<double>{0});
  // stop_grad: x * stop_grad(x) has gradient x.
  CHECK(grad_of([](auto& x) { return mul(x, stop_grad(x)); },
                F({2}, {3, -1})) == std::vector<double>{3, -1});
}

namespace {

// A stand-in for a cross-rank all-reduce: the identity, whose output is
// replicated, and whose VJP reports what backward() told it.
Tensor probe(const Tensor& x, bool& saw_replicated) {
  bool* seen = &saw_replicated;
  return mark_replicated(
      record("probe", x.detach(), {x}, [seen](const Tensor& g) {
        *seen = cotangent_replicated();
        return std::vector<Tensor>{g};
      }));
}

}  // namespace

TEST_CASE("grad: a cotangent is replicated only along replicated values",
          "[grad]") {
  // Tape.cpp, Note [Replicated cotangents]: p is a param (the same on every
  // rank), x a rank's own rows (unmarked), k a replicated constant.
  Tensor p = mark_replicated(requires_grad(F({2}, {1, 2})));
  Tensor x = F({2}, {3, 4});
  Tensor k = mark_replicated(Tensor::scalar(0.5, DType::F64));
  bool saw = false;

  // loss = k · Σ probe(p · x): every value after the probe is replicated.
  Tensor s = probe(sum(mul(p, x)), saw);
  CHECK(is_replicated(s));
  CHECK_FALSE(is_replicated(mul(p, x)));
  CHECK(is_replicated(mul(p, k)));
  backward(mul(s, k), {p});
  CHECK(saw);

  // An unmarked factor after the probe makes the root differ by rank.
  saw = true;
  backward(mul(probe(sum(mul(p, x)), saw), Tensor::scalar(0.5, DType::F64)),
           {p});
  CHECK_FALSE(saw);

  // x - probe(mean): the probe's output meets x, so its cotangent differs
  // even though the root is marked (as after a second all-reduce).
  saw = true;
  Tensor m = probe(mean(mul(p, x)), saw);
  Tensor centred = sub(mul(p, x), m);
  backward(mark_replicated(sum(mul(centred, centred))), {p});
  CHECK_FALSE(saw);
}

TEST_CASE("grad: leaves are handed over as the pass finishes them", "[grad]") {
  // loss = sum(relu(x·w1)·w2): the pass reaches w2 before w1; `unused`
  // gets no gradient and comes last, as zeros.
  Tensor x = R({3, 4}, 1);
  Tensor w1 = requires_grad(R({4, 5}, 2));
  Tensor w2 = requires_grad(R({5, 2}, 3));
  Tensor unused = requires_grad(R({2}, 4));
  Tensor loss = sum(matmul(relu(matmul(x, w1)), w2));
  std::vector<size_t> order;
  std::vector<Tensor> handed(3);
  auto told = backward(loss, {w1, w2, unused}, [&](size_t i, const Tensor& g) {
    order.push_back(i);
    handed[i] = g;
  });
  CHECK(order == std::vector<size_t>{1, 0, 2});
  // The pass without a receiver gives the same gradients; with one, a
  // told gradient is the receiver's alone (undefined in the result).
  auto grads = backward(loss, {w1, w2, unused});
  for (size_t i = 0; i < 3; ++i) {
    CHECK(!told[i].defined());
    CHECK(handed[i].to_doubles() == grads[i].to_doubles());
  }
  CHECK(grads[2].to_doubles() == std::vector<double>{0, 0});
}
