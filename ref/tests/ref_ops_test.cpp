// Every builtin's CPU forward (OpDef::forward, run through the fake
// ForwardCtx of ops/tests/fake_forward_ctx.h) diff-tested against the
// executable specification (ref/ref_ops.h): one table row per case, run
// twice, with the float inputs in f64 and in f32. A coverage test makes a
// builtin with a forward but no row fail. The gradients are checked in
// ref/tests/ref_grad_rows_test.cpp.
//
// Tolerances (forward): an element passes when
//   |got - want| <= rtol * max(|want|, 1),
// i.e. relative for values above 1 and absolute below (inputs are O(1), so
// a value near 0 that results from cancellation is held to the inputs'
// scale, not its own). rtol depends on the result's dtype:
// - f64 results: 1e-12 for every op. The forward computes in f64 and the
//   reference in f64 by another formula; both round about 1e-16 per
//   operation, so 1e-12 leaves room for ~1e4 accumulated roundings.
// - f32 results, against the double reference rounded to f32: f32 rounds
//   by 2^-24 ~ 6e-8 relative per operation, so n accumulated adds err by
//   at most ~n * 6e-8 and typically ~sqrt(n) * 6e-8. kElem = 1e-5 for
//   elementwise ops and reductions over up to a few hundred values;
//   kBig = 1e-4 for reductions over thousands of values and for
//   transcendental composites (gelu, softplus, log_softmax, norms, losses:
//   several f32 transcendental calls, each within a few ulp, and
//   cancellations such as 1 + erf(x) for x << 0).
// - ints and bools: exact, and the dtypes must agree.

#include "ref/ref_ops.h"

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

namespace {

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

// Random integers in [lo, hi] as [dtype] (f64 for float inputs that should
// tie often: comparisons).
Tensor Ri(
    const Shape& s, uint64_t seed, int lo, int hi, DType dtype = DType::I64) {
  std::vector<double> v = R(s, seed, 0, 1).to_doubles();
  for (auto& e : v) e = lo + std::floor(e * (hi - lo + 1));
  return Tensor::from_doubles(s, v, dtype);
}

Tensor Bools(const Shape& s, uint64_t seed) {
  return Ri(s, seed, 0, 1, DType::Bool);
}

// Distinct values 0.1 apart, shuffled: no ties (sort, topk, argmax, max).
Tensor Distinct(const Shape& s) {
  int64_t n = numel_of(s);
  int64_t stride = 7;
  while (std::gcd(n, stride) != 1) stride += 2;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = 0.1 * static_cast<double>((i * stride) % n) - 0.3;
  return Tensor::from_doubles(s, v, DType::F64);
}

Tensor I(const Shape& s, const std::vector<double>& v) {
  return Tensor::from_doubles(s, v, DType::I64);
}

struct Row {
  std::string op;  // the builtin (the coverage test reads it)
  std::string label;
  double rtol32;  // for f32 results
  Ts inputs;      // float inputs in f64; converted for the f32 run
  Fn fwd, want;
};

Fn one(std::function<Tensor(const Ts&)> f) {
  return [f](const Ts& in) { return Ts{f(in)}; };
}

// The inputs of one run: f64 inputs converted to [dt].
Ts in_dtype(const Ts& in, DType dt) {
  Ts out;
  for (const Tensor& t : in)
    out.push_back(t.dtype() == DType::F64
                      ? Tensor::from_doubles(t.shape(), t.to_doubles(), dt)
                      : t);
  return out;
}

bool close_enough(double g, double w, double rtol) {
  if (std::isnan(w)) return std::isnan(g);
  if (std::isinf(w)) return g == w;
  return std::fabs(g - w) <= rtol * std::max(std::fabs(w), 1.0);
}

void compare(const Row& r, DType dt) {
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

// ---------------------------------------------------------------- rows

void unary_rows(std::vector<Row>& rows) {
  struct U {
    const char* op;
    Tensor (*ref)(const Tensor&);
    double lo, hi, rtol;
  };
  const U us[] = {
      {"abs", ref::abs, -2, 2, kElem},
      {"sign", ref::sign, -2, 2, kElem},
      {"neg", ref::neg, -2, 2, kElem},
      {"relu", ref::relu, -2, 2, kElem},
      {"exp", ref::exp, -3, 3, kElem},
      {"log", ref::log, 0.05, 4, kElem},
      {"log1p", ref::log1p, -0.5, 3, kElem},
      {"sqrt", ref::sqrt, 0, 4, kElem},
      {"rsqrt", ref::rsqrt, 0.1, 4, kElem},
      {"sin", ref::sin, -4, 4, kElem},
      {"cos", ref::cos, -4, 4, kElem},
      {"tanh", ref::tanh, -3, 3, kElem},
      {"sigmoid", ref::sigmoid, -8, 8, kElem},
      {"silu", ref::silu, -8, 8, kBig},
      {"softplus", ref::softplus, -20, 20, kBig},
      {"gelu", [](const Tensor& x) { return ref::gelu(x); }, -5, 5, kBig},
  };
  uint64_t seed = 100;
  for (const U& u : us) {
    const char* op = u.op;
    rows.push_back(
        {op,
         op,
         u.rtol,
         {R({3, 17}, seed++, u.lo, u.hi)},
         one([op](const Ts& in) { return FakeFwd(op).t("x", in[0]).run1(); }),
         one([f = u.ref](const Ts& in) { return f(in[0]); })});
  }
  rows.push_back(
      {"gelu",
       "gelu tanh",
       kBig,
       {R({4, 9}, 120, -5, 5)},
       one([](const Ts& in) {
         return FakeFwd("gelu").t("x", in[0]).str("approximate", "tanh").run1();
       }),
       one([](const Ts& in) { return ref::gelu(in[0], "tanh"); })});
  // Ints: abs, sign, neg, relu keep them; the others give f32.
  for (auto [op, f] : {std::make_pair("abs", ref::abs),
                       std::make_pair("sign", ref::sign),
                       std::make_pair("neg", ref::neg),
                       std::make_pair("relu", ref::relu),
                       std::make_pair("exp", ref::exp),
                       std::make_pair("sigmoid", ref::sigmoid)}) {
    rows.push_back({op,
                    std::string(op) + " i64",
                    kElem,
                    {Ri({2, 5}, 121, -3, 3)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0]); })});
  }
  Tensor odd = Tensor::from_doubles(
      {6}, {1.5, NAN, INFINITY, -INFINITY, 0, -2}, DType::F64);
  for (auto [op, f] : {std::make_pair("isnan", ref::isnan),
                       std::make_pair("isfinite", ref::isfinite)})
    rows.push_back({op,
                    op,
                    0,
                    {odd},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0]); })});
  rows.push_back({"logical_not",
                  "logical_not",
                  0,
                  {Bools({3, 4}, 122)},
                  one([](const Ts& in) {
                    return FakeFwd("logical_not").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::logical_not(in[0]); })});
}

void binary_rows(std::vector<Row>& rows) {
  using BF = Tensor (*)(const Tensor&, const Tensor&);
  auto add = [&](const char* op,
                 BF f,
                 std::string label,
                 Tensor a,
                 Tensor b,
                 double rtol = kElem) {
    rows.push_back({op,
                    op + (" " + label),
                    rtol,
                    {a, b},
                    one([op](const Ts& in) {
                      return FakeFwd(op).t("a", in[0]).t("b", in[1]).run1();
                    }),
                    one([f](const Ts& in) { return f(in[0], in[1]); })});
  };
  struct B {
    const char* op;
    BF f;
    double alo, ahi, blo, bhi;
  };
  const B bs[] = {
      {"add", ref::add, -2, 2, -2, 2},
      {"sub", ref::sub, -2, 2, -2, 2},
      {"mul", ref::mul, -2, 2, -2, 2},
      {"div", ref::div, -2, 2, 0.25, 2},
      {"pow", ref::pow, 0.25, 3, -2, 2},
      {"maximum", ref::maximum, -1, 1, -1, 1},
      {"minimum", ref::minimum, -1, 1, -1, 1},
      {"floordiv", ref::floordiv, -5, 5, 0.3, 2},
      {"mod", ref::mod, -5, 5, 0.3, 2},
  };
  uint64_t seed = 200;
  for (const B& b : bs) {
    // [2 1 4] with [3 1] -> [2 3 4]; [4] with a 0-d; negative divisors for
    // floordiv and mod come from the second row.
    add(b.op,
        b.f,
        "[2 1 4] [3 1]",
        R({2, 1, 4}, seed, b.alo, b.ahi),
        R({3, 1}, seed + 1, b.blo, b.bhi));
    add(b.op,
        b.f,
        "0-d",
        R({}, seed + 2, b.alo, b.ahi),
        R({4}, seed + 3, b.blo, b.bhi));
    seed += 4;
  }
  add("floordiv",
      ref::floordiv,
      "negative divisor",
      R({3, 4}, 240, -5, 5),
      R({4}, 241, -2, -0.3));
  add("mod",
      ref::mod,
      "negative divisor",
      R({3, 4}, 242, -5, 5),
      R({4}, 243, -2, -0.3));
  // Ints: exact, Python's floored // and %.
  for (auto [op, f] : {std::make_pair("add", ref::add),
                       std::make_pair("sub", ref::sub),
                       std::make_pair("mul", ref::mul),
                       std::make_pair("maximum", ref::maximum),
                       std::make_pair("div", ref::div)})
    add(op, f, "i64", Ri({3, 4}, 250, -9, 9), Ri({4}, 251, 1, 5));
  add("floordiv",
      ref::floordiv,
      "i64",
      Ri({3, 4}, 252, -9, 9),
      Tensor::from_doubles({4}, {3, -3, 2, -5}, DType::I64));
  add("mod",
      ref::mod,
      "i64",
      Ri({3, 4}, 253, -9, 9),
      Tensor::from_doubles({4}, {3, -3, 2, -5}, DType::I64));
  add("pow", ref::pow, "i64", Ri({3, 4}, 254, -3, 3), Ri({4}, 255, 0, 3));
  add("add", ref::add, "i64 + f64", Ri({2, 3}, 256, -9, 9), R({3}, 257));
  // Comparisons on small integers (as floats), so that ties occur.
  for (auto [op, f] : {std::make_pair("eq", ref::eq),
                       std::make_pair("ne", ref::ne),
                       std::make_pair("lt", ref::lt),
                       std::make_pair("le", ref::le),
                       std::make_pair("gt", ref::gt),
                       std::make_pair("ge", ref::ge)}) {
    add(op,
        f,
        "ties",
        Ri({2, 1, 5}, 260, 0, 2, DType::F64),
        Ri({3, 1}, 261, 0, 2, DType::F64));
    add(op,
        f,
        "i64 with f64",
        Ri({4}, 262, 0, 2),
        Ri({2, 4}, 263, 0, 2, DType::F64));
  }
  for (auto [op, f] : {std::make_pair("logical_and", ref::logical_and),
                       std::make_pair("logical_or", ref::logical_or)})
    add(op, f, "bool", Bools({2, 1, 4}, 270), Bools({3, 4}, 271));
  // A host number: the weak scalar takes x's dtype.
  rows.push_back({"sub",
                  "sub host number",
                  kElem,
                  {R({2, 3}, 280)},
                  one([](const Ts& in) {
                    return FakeFwd("sub").t("a", in[0]).num("b", 0.75).run1();
                  }),
                  one([](const Ts& in) {
                    return ref::sub(in[0], Tensor::scalar(0.75, in[0].dtype()));
                  })});
  rows.push_back(
      {"where",
       "where [2 3] [3] [2 1]",
       kElem,
       {Bools({2, 3}, 281), R({3}, 282), R({2, 1}, 283)},
       one([](const Ts& in) {
         return FakeFwd("where")
             .t("c", in[0])
             .t("a", in[1])
             .t("b", in[2])
             .run1();
       }),
       one([](const Ts& in) { return ref::where(in[0], in[1], in[2]); })});
  rows.push_back(
      {"clip",
       "clip",
       kElem,
       {R({2, 5}, 284, -2, 2), R({}, 285, -1, 0), R({5}, 286, 0, 1)},
       one([](const Ts& in) {
         return FakeFwd("clip")
             .t("x", in[0])
             .t("lo", in[1])
             .t("hi", in[2])
             .run1();
       }),
       one([](const Ts& in) { return ref::clip(in[0], in[1], in[2]); })});
  for (double v : {-2.5, -double(INFINITY)})
    rows.push_back(
        {"masked_fill",
         "masked_fill " + std::to_string(v),
         kElem,
         {R({3, 4}, 287), Bools({1, 4}, 288)},
         one([v](const Ts& in) {
           return FakeFwd("masked_fill")
               .t("x", in[0])
               .t("mask", in[1])
               .num("v", v)
               .run1();
         }),
         one([v](const Ts& in) { return ref::masked_fill(in[0], in[1], v); })});
}

void matmul_rows(std::vector<Row>& rows) {
  auto add = [&](std::string label, Tensor a, Tensor b, double rtol = kElem) {
    rows.push_back(
        {"matmul",
         "matmul " + label,
         rtol,
         {a, b},
         one([](const Ts& in) {
           return FakeFwd("matmul").t("a", in[0]).t("b", in[1]).run1();
         }),
         one([](const Ts& in) { return ref::matmul(in[0], in[1]); })});
  };
  add("2-d", R({5, 7}, 300), R({7, 3}, 301));
  add("1-d @ 2-d", R({7}, 302), R({7, 3}, 303));
  add("2-d @ 1-d", R({5, 7}, 304), R({7}, 305));
  add("1-d @ 1-d", R({7}, 306), R({7}, 307));
  add("batch broadcast", R({2, 1, 4, 6}, 308), R({3, 6, 5}, 309));
  add("batch @ 2-d", R({3, 4, 6}, 310), R({6, 2}, 311));
  add("1-d @ batch", R({6}, 312), R({2, 6, 3}, 313));
  add("K = 2048", R({4, 2048}, 314), R({2048, 3}, 315), kBig);
  add("i64", Ri({2, 3}, 316, -5, 5), Ri({3, 2}, 317, -5, 5));
  rows.push_back(
      {"linear",
       "linear [5 3]",
       kElem,
       {R({5, 3}, 318), R({3, 4}, 319), R({4}, 320)},
       one([](const Ts& in) {
         Model l = {{"w", in[1]}, {"b", in[2]}};
         return FakeFwd("linear").model("l", &l).t("x", in[0]).run1();
       }),
       one([](const Ts& in) { return ref::linear(in[0], in[1], in[2]); })});
  rows.push_back(
      {"linear",
       "linear [2 3 3]",
       kElem,
       {R({2, 3, 3}, 321), R({3, 2}, 322), R({2}, 323)},
       one([](const Ts& in) {
         Model l = {{"w", in[1]}, {"b", in[2]}};
         return FakeFwd("linear").model("l", &l).t("x", in[0]).run1();
       }),
       one([](const Ts& in) { return ref::linear(in[0], in[1], in[2]); })});
}

void reduction_rows(std::vector<Row>& rows) {
  using RF = Tensor (*)(const Tensor&, const std::vector<int>&);
  struct Red {
    const char* op;
    RF f;
    int kind;  // 0: any floats, 1: positive (prod), 2: distinct, 3: bools
  };
  const Red reds[] = {
      {"sum", ref::sum, 0},
      {"mean", ref::mean, 0},
      {"max", ref::max, 2},
      {"min", ref::min, 2},
      {"prod", ref::prod, 1},
      {"std", ref::std, 0},
      {"var", ref::var, 0},
      {"logsumexp", ref::logsumexp, 0},
      {"norm", ref::norm, 0},
      {"argmax", ref::argmax, 2},
      {"argmin", ref::argmin, 2},
      {"any", ref::any, 3},
      {"all", ref::all, 3},
  };
  uint64_t seed = 400;
  auto input = [&](int kind, const Shape& s) {
    ++seed;
    if (kind == 1) return R(s, seed, 0.6, 1.5);
    if (kind == 2) return Distinct(s);
    if (kind == 3) return Ri(s, seed, 0, 1, DType::Bool);
    return R(s, seed, -2, 2);
  };
  for (const Red& r : reds) {
    const char* op = r.op;
    auto add = [&](std::string label,
                   Tensor x,
                   std::optional<std::vector<int>> over,
                   double rtol) {
      rows.push_back({op,
                      std::string(op) + " " + label,
                      rtol,
                      {x},
                      one([op, over](const Ts& in) {
                        FakeFwd f(op);
                        f.t("x", in[0]);
                        if (over) f.over(*over);
                        return f.run1();
                      }),
                      one([f = r.f, over](const Ts& in) {
                        return f(in[0], over ? *over : std::vector<int>{});
                      })});
    };
    add("all axes", input(r.kind, {3, 4, 5}), std::nullopt, kElem);
    add("over -1", input(r.kind, {3, 4, 5}), std::vector<int>{-1}, kElem);
    add("over 0 2", input(r.kind, {3, 4, 5}), std::vector<int>{0, 2}, kElem);
    add("over 1 of [2 3]", input(r.kind, {2, 3}), std::vector<int>{1}, kElem);
    if (r.kind != 1) {
      add("4096 values", input(r.kind, {4096}), std::nullopt, kBig);
      add("[4 3000] over 1",
          input(r.kind, {4, 3000}),
          std::vector<int>{1},
          kBig);
    }
  }
  // Ints: sum and prod give i64, max keeps the dtype, mean gives f32.
  for (auto [op, f] : {std::make_pair("sum", ref::sum),
                       std::make_pair("prod", ref::prod),
                       std::make_pair("max", ref::max),
                       std::make_pair("mean", ref::mean),
                       std::make_pair("argmax", ref::argmax)})
    rows.push_back({op,
                    std::string(op) + " i64",
                    kElem,
                    {Ri({3, 4}, 450, -4, 4)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).over({1}).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0], {1}); })});
  for (const char* op : {"argmax", "argmin"})
    rows.push_back({op,
                    std::string(op) + " ties (the first)",
                    0,
                    {Ri({3, 6}, 455, 0, 1, DType::F64)},
                    one([op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).over({1}).run1();
                    }),
                    one([op](const Ts& in) {
                      return std::string(op) == "argmax"
                                 ? ref::argmax(in[0], {1})
                                 : ref::argmin(in[0], {1});
                    })});
  rows.push_back({"argmax",
                  "argmax over 2 0 (order written)",
                  0,
                  {Distinct({3, 2, 4})},
                  one([](const Ts& in) {
                    return FakeFwd("argmax").t("x", in[0]).over({2, 0}).run1();
                  }),
                  one([](const Ts& in) {
                    return ref::argmax(in[0], {2, 0});
                  })});
  rows.push_back(
      {"sum",
       "sum bool",
       kElem,
       {Bools({3, 4}, 451)},
       one([](const Ts& in) { return FakeFwd("sum").t("x", in[0]).run1(); }),
       one([](const Ts& in) { return ref::sum(in[0]); })});
  // max / min of two values: elementwise, broadcasting.
  for (auto [op, f] : {std::make_pair("max", ref::maximum),
                       std::make_pair("min", ref::minimum)})
    rows.push_back({op,
                    std::string(op) + " of two",
                    kElem,
                    {R({2, 3}, 452), R({3}, 453)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).t("y", in[1]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0], in[1]); })});
  for (const char* with : {"", "sum", "max", "min", "prod", "mean"})
    rows.push_back({"reduce",
                    std::string("reduce with=") + with,
                    kElem,
                    {R({3, 4, 2}, 454, 0.6, 1.5)},
                    one([with](const Ts& in) {
                      FakeFwd f("reduce");
                      f.t("x", in[0]).over({0, -1});
                      if (*with) f.str("with", with);
                      return f.run1();
                    }),
                    one([with](const Ts& in) {
                      return ref::reduce(in[0], {0, -1}, *with ? with : "sum");
                    })});
  // A fully masked row: logsumexp is -inf.
  rows.push_back(
      {"logsumexp",
       "logsumexp -inf row",
       kElem,
       {Tensor::from_doubles({2, 2}, {-INFINITY, -INFINITY, 1, 2}, DType::F64)},
       one([](const Ts& in) {
         return FakeFwd("logsumexp").t("x", in[0]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::logsumexp(in[0], {1}); })});
}

void along_rows(std::vector<Row>& rows) {
  for (auto [op, f, rtol] :
       {std::make_tuple("softmax", ref::softmax, kElem),
        std::make_tuple("log_softmax", ref::log_softmax, kBig),
        std::make_tuple("cumsum", ref::cumsum, kElem)}) {
    auto add = [&, op = op, f = f](
                   std::string label, Tensor x, int axis, double tol) {
      rows.push_back({op,
                      std::string(op) + " " + label,
                      tol,
                      {x},
                      one([op, axis](const Ts& in) {
                        return FakeFwd(op).t("x", in[0]).over({axis}).run1();
                      }),
                      one([f, axis](const Ts& in) { return f(in[0], axis); })});
    };
    add("over 1", R({3, 5}, 500, -3, 3), 1, rtol);
    add("over 0", R({3, 5}, 501, -3, 3), 0, rtol);
    add("over -2 of [2 3 4]", R({2, 3, 4}, 502, -3, 3), -2, rtol);
    add("[4 3000] over 1", R({4, 3000}, 503, -3, 3), 1, kBig);
  }
  rows.push_back({"softmax",
                  "softmax -inf",
                  kElem,
                  {Tensor::from_doubles(
                      {2, 3}, {1000, 1000, -INFINITY, 0, 1, 2}, DType::F64)},
                  one([](const Ts& in) {
                    return FakeFwd("softmax").t("x", in[0]).over({1}).run1();
                  }),
                  one([](const Ts& in) { return ref::softmax(in[0], 1); })});
  rows.push_back({"cumsum",
                  "cumsum i64",
                  0,
                  {Ri({3, 4}, 504, -5, 5)},
                  one([](const Ts& in) {
                    return FakeFwd("cumsum").t("x", in[0]).over({1}).run1();
                  }),
                  one([](const Ts& in) { return ref::cumsum(in[0], 1); })});
  for (int axis : {1, 0, -1})
    rows.push_back({"sort",
                    "sort over " + std::to_string(axis),
                    kElem,
                    {Distinct({4, 6})},
                    [axis](const Ts& in) {
                      return FakeFwd("sort").t("x", in[0]).over({axis}).run();
                    },
                    [axis](const Ts& in) {
                      auto [v, i] = ref::sort(in[0], axis);
                      return Ts{v, i};
                    }});
  for (auto [k, axis] :
       {std::make_pair(3, -1), std::make_pair(1, 0), std::make_pair(0, 1)})
    rows.push_back({"topk",
                    "topk k=" + std::to_string(k),
                    kElem,
                    {Distinct({4, 6})},
                    [k = k, axis = axis](const Ts& in) {
                      return FakeFwd("topk")
                          .t("x", in[0])
                          .integer("k", k)
                          .over({axis})
                          .run();
                    },
                    [k = k, axis = axis](const Ts& in) {
                      auto [v, i] = ref::topk(in[0], k, axis);
                      return Ts{v, i};
                    }});
  rows.push_back(
      {"gather",
       "gather over 1",
       kElem,
       {R({3, 4}, 505), Ri({3, 6}, 506, 0, 3)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 1); })});
  rows.push_back(
      {"gather",
       "gather over 0, smaller idx",
       kElem,
       {R({3, 4}, 507), Ri({5, 2}, 508, 0, 2)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 0); })});
  rows.push_back(
      {"gather",
       "gather over 0",
       kElem,
       {R({3, 4}, 513), Ri({5, 4}, 514, 0, 2)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 0); })});
  rows.push_back({"sort",
                  "sort ties (stable)",
                  kElem,
                  {Ri({3, 8}, 515, 0, 2, DType::F64)},
                  [](const Ts& in) {
                    return FakeFwd("sort").t("x", in[0]).over({1}).run();
                  },
                  [](const Ts& in) {
                    auto [v, i] = ref::sort(in[0], 1);
                    return Ts{v, i};
                  }});
  rows.push_back(
      {"scatter",
       "scatter duplicate indices",
       kElem,
       {R({2, 4}, 516), I({2, 2}, {1, 1, 3, 3}), R({2, 2}, 517)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 1); })});
  // Distinct indices per row (torch leaves duplicates unspecified).
  Tensor sidx = I({3, 2}, {3, 0, 1, 2, 0, 3});
  rows.push_back(
      {"scatter",
       "scatter over 1",
       kElem,
       {R({3, 4}, 509), sidx, R({3, 2}, 510)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 1); })});
  rows.push_back(
      {"scatter",
       "scatter 0-d value over 0",
       kElem,
       {R({3, 4}, 511), I({1, 4}, {2, 0, 1, 2}), R({}, 512)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 0); })});
}

void shape_rows(std::vector<Row>& rows) {
  for (int axis : {1, -1, 0}) {
    Ts xs = axis == 0 ? Ts{R({2, 3}, 600), R({1, 3}, 601), R({3, 3}, 602)}
                      : Ts{R({2, 3}, 600), R({2, 1}, 601), R({2, 2}, 602)};
    rows.push_back(
        {"concat",
         "concat over " + std::to_string(axis),
         kElem,
         xs,
         one([axis](const Ts& in) {
           return FakeFwd("concat").list("xs", in).over({axis}).run1();
         }),
         one([axis](const Ts& in) { return ref::concat(in, axis); })});
  }
  rows.push_back(
      {"stack",
       "stack 3",
       kElem,
       {R({2, 3}, 603), R({2, 3}, 604), R({2, 3}, 605)},
       one([](const Ts& in) {
         return FakeFwd("stack").list("xs", in).integer("new", 3).run1();
       }),
       one([](const Ts& in) { return ref::stack(in, 0); })});
  for (auto [i, axis] :
       {std::make_pair(1, 0), std::make_pair(-1, -1), std::make_pair(2, 1)})
    rows.push_back({"take",
                    "take int " + std::to_string(i),
                    kElem,
                    {R({3, 4, 2}, 606)},
                    one([i = i, axis = axis](const Ts& in) {
                      return FakeFwd("take")
                          .t("x", in[0])
                          .integer("i", i)
                          .over({axis})
                          .run1();
                    }),
                    one([i = i, axis = axis](const Ts& in) {
                      return ref::take(in[0], i, axis);
                    })});
  rows.push_back(
      {"take",
       "take index tensor",
       kElem,
       {R({3, 4, 2}, 607), I({2, 3}, {3, 0, -1, 1, 1, 2})},
       one([](const Ts& in) {
         return FakeFwd("take").t("x", in[0]).t("i", in[1]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::take(in[0], in[1], 1); })});
  rows.push_back(
      {"take",
       "take index tensor, non-negative",
       kElem,
       {R({3, 4, 2}, 607), I({2, 3}, {3, 0, 2, 1, 1, 2})},
       one([](const Ts& in) {
         return FakeFwd("take").t("x", in[0]).t("i", in[1]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::take(in[0], in[1], 1); })});
  rows.push_back(
      {"put",
       "put int",
       kElem,
       {R({3, 4}, 608), R({3}, 609)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .integer("i", -2)
             .t("v", in[1])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], -2, in[1], 1); })});
  rows.push_back(
      {"put",
       "put int, broadcast value",
       kElem,
       {R({3, 4}, 610), R({}, 611)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .integer("i", 0)
             .t("v", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], 0, in[1], 0); })});
  rows.push_back(
      {"put",
       "put index tensor",
       kElem,
       {R({3, 4}, 612), I({2}, {3, -4}), R({3, 2}, 613)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .t("i", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], in[1], in[2], 1); })});
  for (int k : {2, -3, 7, 0})
    rows.push_back(
        {"roll",
         "roll " + std::to_string(k),
         kElem,
         {R({3, 5}, 614)},
         one([k](const Ts& in) {
           return FakeFwd("roll")
               .t("x", in[0])
               .integer("k", k)
               .over({-1})
               .run1();
         }),
         one([k](const Ts& in) { return ref::roll(in[0], k, -1); })});
  rows.push_back(
      {"pad",
       "pad",
       kElem,
       {R({2, 3}, 615)},
       one([](const Ts& in) {
         return FakeFwd("pad")
             .t("x", in[0])
             .over({0})
             .integer("to", 4)
             .num("value", -1.5)
             .run1();
       }),
       one([](const Ts& in) { return ref::pad(in[0], 0, 4, -1.5); })});
  rows.push_back(
      {"pad",
       "pad default",
       kElem,
       {R({2, 3}, 616)},
       one([](const Ts& in) {
         return FakeFwd("pad").t("x", in[0]).over({1}).integer("to", 3).run1();
       }),
       one([](const Ts& in) { return ref::pad(in[0], 1, 3); })});
  rows.push_back(
      {"reshape",
       "reshape",
       kElem,
       {R({2, 3, 4}, 617)},
       one([](const Ts& in) {
         return FakeFwd("reshape").t("x", in[0]).type("sizes", {4, 6}).run1();
       }),
       one([](const Ts& in) {
         return ref::reshape(in[0], {4, 6});
       })});
  for (DType d : {DType::I64, DType::I32, DType::Bool, DType::F64, DType::F32})
    rows.push_back(
        {"to",
         std::string("to ") + ss::types::dtype_name(d),
         kElem,
         {R({2, 5}, 618, -4, 4)},
         one([d](const Ts& in) {
           return FakeFwd("to").t("x", in[0]).type("dtype", {}, d).run1();
         }),
         one([d](const Ts& in) { return ref::to(in[0], d); })});
  rows.push_back(
      {"to",
       "to f32 from i64",
       kElem,
       {Ri({4}, 619, -9, 9)},
       one([](const Ts& in) {
         return FakeFwd("to")
             .t("x", in[0])
             .type("dtype", {}, DType::F32)
             .run1();
       }),
       one([](const Ts& in) { return ref::to(in[0], DType::F32); })});
  // Makers: no float inputs; the dtype is the type argument's.
  for (DType d : {DType::F32, DType::F64, DType::I64}) {
    std::string n = ss::types::dtype_name(d);
    rows.push_back({"zeros",
                    "zeros " + n,
                    0,
                    {},
                    one([d](const Ts&) {
                      return FakeFwd("zeros").type("type", {2, 3}, d).run1();
                    }),
                    one([d](const Ts&) {
                      return ref::zeros({2, 3}, d);
                    })});
    rows.push_back({"ones",
                    "ones " + n,
                    0,
                    {},
                    one([d](const Ts&) {
                      return FakeFwd("ones").type("type", {3}, d).run1();
                    }),
                    one([d](const Ts&) { return ref::ones({3}, d); })});
    rows.push_back(
        {"full",
         "full " + n,
         0,
         {},
         one([d](const Ts&) {
           return FakeFwd("full").type("type", {2, 2}, d).num("v", 2.5).run1();
         }),
         one([d](const Ts&) {
           return ref::full({2, 2}, 2.5, d);
         })});
  }
  rows.push_back(
      {"arange",
       "arange",
       0,
       {},
       one([](const Ts&) { return FakeFwd("arange").integer("n", 7).run1(); }),
       one([](const Ts&) { return ref::arange(7); })});
  rows.push_back(
      {"causal",
       "causal",
       0,
       {},
       one([](const Ts&) {
         return FakeFwd("causal").integer("n", 4).integer("m", 6).run1();
       }),
       one([](const Ts&) { return ref::causal(4, 6); })});
  rows.push_back({"zeros_like",
                  "zeros_like",
                  0,
                  {R({2, 3}, 620)},
                  one([](const Ts& in) {
                    return FakeFwd("zeros_like").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::zeros_like(in[0]); })});
  rows.push_back({"ones_like",
                  "ones_like",
                  0,
                  {Ri({2, 3}, 621, 0, 3)},
                  one([](const Ts& in) {
                    return FakeFwd("ones_like").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::ones_like(in[0]); })});
  rows.push_back(
      {"tensor",
       "tensor rows",
       kElem,
       {R({3}, 622), R({3}, 623)},
       one([](const Ts& in) {
         return FakeFwd("tensor")
             .list("values", in)
             .type("dtype", {}, DType::F64)
             .run1();
       }),
       one([](const Ts& in) { return ref::tensor(in, DType::F64); })});
  rows.push_back({"tensor",
                  "tensor of ints",
                  0,
                  {},
                  one([](const Ts&) {
                    return FakeFwd("tensor")
                        .list("values",
                              {Tensor::scalar(3, DType::I64),
                               Tensor::scalar(-1, DType::I64)})
                        .result(DType::I64)
                        .run1();
                  }),
                  one([](const Ts&) {
                    return ref::tensor({Tensor::scalar(3, DType::I64),
                                        Tensor::scalar(-1, DType::I64)},
                                       DType::I64);
                  })});
  // Random draws: the fake ctx hands out the stream given with mode().
  for (const char* op : {"rand", "randn"})
    for (DType d : {DType::F32, DType::F64})
      rows.push_back({op,
                      std::string(op) + " " + ss::types::dtype_name(d),
                      kElem,
                      {},
                      one([op, d](const Ts&) {
                        FakeFwd f(op);
                        f.type("type", {5, 40}, d).integer("seed", 1);
                        f.mode("seed", false, RandomStream{987654321, 3, 17});
                        return f.run1();
                      }),
                      one([op, d](const Ts&) {
                        return std::string(op) == "rand"
                                   ? ref::rand({5, 40}, d, 987654321, 3, 17)
                                   : ref::randn({5, 40}, d, 987654321, 3, 17);
                      })});
}

void nn_rows(std::vector<Row>& rows) {
  auto ce = [&](std::string label, Tensor logits, Tensor label_t, double rtol) {
    rows.push_back(
        {"cross_entropy",
         "cross_entropy " + label,
         rtol,
         {logits, label_t},
         one([](const Ts& in) {
           return FakeFwd("cross_entropy")
               .t("logits", in[0])
               .t("label", in[1])
               .run1();
         }),
         one([](const Ts& in) { return ref::cross_entropy(in[0], in[1]); })});
  };
  ce("[4 5]", R({4, 5}, 700, -3, 3), Ri({4}, 701, 0, 4), kBig);
  ce("[b n C]", R({2, 3, 5}, 702, -3, 3), Ri({2, 3}, 703, 0, 4), kBig);
  ce("[64 1000]", R({64, 1000}, 704, -3, 3), Ri({64}, 705, 0, 999), kBig);
  {
    // Probabilities: rows of a softmax.
    Tensor p = ref::softmax(R({3, 4}, 706, -2, 2), 1);
    ce("probabilities", R({3, 4}, 707, -3, 3), p, kBig);
  }
  rows.push_back({"mse",
                  "mse broadcast",
                  kElem,
                  {R({3, 4}, 708), R({4}, 709)},
                  one([](const Ts& in) {
                    return FakeFwd("mse").t("a", in[0]).t("b", in[1]).run1();
                  }),
                  one([](const Ts& in) { return ref::mse(in[0], in[1]); })});
  // dropout: the keep mask is u >= p for u = rand on the Train stream.
  for (double p : {0.3, 0.0, 1.0})
    for (bool train : {true, false})
      rows.push_back(
          {"dropout",
           "dropout p=" + std::to_string(p) + (train ? " train" : " eval"),
           kElem,
           {R({20, 30}, 710)},
           one([p, train](const Ts& in) {
             return FakeFwd("dropout")
                 .t("x", in[0])
                 .num("p", p)
                 .mode("mode", train, RandomStream{55, 9, 4})
                 .run1();
           }),
           one([p, train](const Ts& in) {
             if (!train)
               return ref::dropout(
                   in[0], ref::ones_like(ref::isnan(in[0])), 0.0);
             Tensor u = ref::rand(in[0].shape(), DType::F32, 55, 9, 4);
             return ref::dropout(
                 in[0], ref::ge(u, Tensor::scalar(p, DType::F64)), p);
           })});
  // batch_norm: y and the running stats after the call.
  for (auto [label, shape, train] :
       {std::tuple{"train [6 3]", Shape{6, 3}, true},
        std::tuple{"train [2 3 4 5]", Shape{2, 3, 4, 5}, true},
        std::tuple{"eval [2 3 4]", Shape{2, 3, 4}, false}}) {
    rows.push_back({"batch_norm",
                    std::string("batch_norm ") + label,
                    kBig,
                    {R(shape, 711, -2, 3),
                     R({3}, 712, 0.5, 1.5),
                     R({3}, 713),
                     R({3}, 714),
                     R({3}, 715, 0.5, 2)},
                    [train = train](const Ts& in) {
                      Model bn = {{"g", in[1]},
                                  {"b", in[2]},
                                  {"running_mean", in[3]},
                                  {"running_var", in[4]}};
                      Tensor y = FakeFwd("batch_norm")
                                     .t("x", in[0])
                                     .model("bn", &bn)
                                     .mode("mode", train)
                                     .run1();
                      return Ts{y, bn["running_mean"], bn["running_var"]};
                    },
                    [train = train](const Ts& in) {
                      auto r = ref::batch_norm(
                          in[0], in[1], in[2], in[3], in[4], train);
                      return Ts{r.y, r.running_mean, r.running_var};
                    }});
  }
  struct LN {
    const char* label;
    Shape x;
    std::vector<int> over;
    Shape g;  // empty: no affine
  };
  const LN lns[] = {
      {"over 1", {4, 6}, {1}, {}},
      {"over -1 affine", {4, 6}, {-1}, {6}},
      {"over 0 affine", {4, 6}, {0}, {4}},
      {"over 1 2 affine", {2, 3, 4}, {1, 2}, {3, 4}},
      {"over 2 1 affine", {2, 3, 4}, {2, 1}, {4, 3}},
      {"all axes", {3, 5}, {}, {}},
      {"[4 4096] over 1", {4, 4096}, {1}, {}},
  };
  uint64_t seed = 720;
  for (const LN& ln : lns) {
    Ts in = {R(ln.x, seed++, -2, 3)};
    bool affine = !ln.g.empty();
    if (affine) {
      in.push_back(R(ln.g, seed++, 0.5, 1.5));
      in.push_back(R(ln.g, seed++));
    }
    std::vector<int> over = ln.over;
    rows.push_back({"layer_norm",
                    std::string("layer_norm ") + ln.label,
                    kBig,
                    in,
                    one([over, affine](const Ts& in) {
                      FakeFwd f("layer_norm");
                      f.t("x", in[0]);
                      if (!over.empty()) f.over(over);
                      Model m;
                      if (affine) {
                        m = {{"g", in[1]}, {"b", in[2]}};
                        f.model("affine", &m);
                      }
                      return f.run1();
                    }),
                    one([over, affine](const Ts& in) {
                      if (!affine) return ref::layer_norm(in[0], over);
                      return ref::layer_norm(in[0], over, 1e-5, in[1], in[2]);
                    })});
    rows.push_back(
        {"rms_norm",
         std::string("rms_norm ") + ln.label,
         kBig,
         {in[0]},
         one([over](const Ts& in) {
           FakeFwd f("rms_norm");
           f.t("x", in[0]);
           if (!over.empty()) f.over(over);
           return f.run1();
         }),
         one([over](const Ts& in) { return ref::rms_norm(in[0], over); })});
  }
  rows.push_back(
      {"layer_norm",
       "layer_norm eps=0.1",
       kBig,
       {R({3, 4}, 740)},
       one([](const Ts& in) {
         return FakeFwd("layer_norm")
             .t("x", in[0])
             .over({1})
             .num("eps", 0.1)
             .run1();
       }),
       one([](const Ts& in) { return ref::layer_norm(in[0], {1}, 0.1); })});
  rows.push_back(
      {"rms_norm",
       "rms_norm eps=0.1",
       kBig,
       {R({3, 4}, 741)},
       one([](const Ts& in) {
         return FakeFwd("rms_norm")
             .t("x", in[0])
             .over({1})
             .num("eps", 0.1)
             .run1();
       }),
       one([](const Ts& in) { return ref::rms_norm(in[0], {1}, 0.1); })});
  rows.push_back(
      {"embedding",
       "embedding",
       kElem,
       {R({7, 4}, 742), Ri({2, 3}, 743, 0, 6)},
       one([](const Ts& in) {
         return FakeFwd("embedding").t("table", in[0]).t("ids", in[1]).run1();
       }),
       one([](const Ts& in) { return ref::embedding(in[0], in[1]); })});
  for (auto [label, xs, ks, stride, padding] :
       {std::tuple{"3x3", Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, 1, 0},
        std::tuple{
            "stride 2 padding 1", Shape{2, 3, 7, 6}, Shape{4, 3, 3, 3}, 2, 1},
        std::tuple{"2x1 padding 2", Shape{1, 2, 4, 5}, Shape{3, 2, 2, 1}, 1, 2},
        std::tuple{
            "16 channels 5x5", Shape{1, 16, 9, 9}, Shape{2, 16, 5, 5}, 2, 2}})
    rows.push_back({"conv2d",
                    std::string("conv2d ") + label,
                    kElem,
                    {R(xs, 744), R(ks, 745)},
                    one([stride = stride, padding = padding](const Ts& in) {
                      return FakeFwd("conv2d")
                          .t("x", in[0])
                          .t("k", in[1])
                          .integer("stride", stride)
                          .integer("padding", padding)
                          .run1();
                    }),
                    one([stride = stride, padding = padding](const Ts& in) {
                      return ref::conv2d(in[0], in[1], stride, padding);
                    })});
  for (auto [op, f] : {std::make_pair("max_pool2d", ref::max_pool2d),
                       std::make_pair("avg_pool2d", ref::avg_pool2d)})
    for (int k : {2, 3})
      rows.push_back({op,
                      std::string(op) + " k=" + std::to_string(k),
                      kElem,
                      {R({2, 3, 7, 8}, 746)},
                      one([op = op, k](const Ts& in) {
                        return FakeFwd(op).t("x", in[0]).integer("k", k).run1();
                      }),
                      one([f = f, k](const Ts& in) { return f(in[0], k); })});
  rows.push_back({"stop_grad",
                  "stop_grad",
                  kElem,
                  {R({2, 3}, 747)},
                  one([](const Ts& in) {
                    return FakeFwd("stop_grad").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::stop_grad(in[0]); })});
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  unary_rows(rows);
  binary_rows(rows);
  matmul_rows(rows);
  reduction_rows(rows);
  along_rows(rows);
  shape_rows(rows);
  nn_rows(rows);
  return rows;
}

}  // namespace

TEST_CASE("ref: every CPU forward matches the reference, f64 and f32",
          "[ref]") {
  for (const Row& r : all_rows()) {
    for (DType dt : {DType::F64, DType::F32}) {
      INFO(r.label << " (" << ss::types::dtype_name(dt) << " inputs)");
      try {
        compare(r, dt);
      } catch (const std::exception& e) {
        FAIL_CHECK("threw: " << e.what());
      }
    }
  }
}

TEST_CASE("ref: every builtin with a forward has a reference row", "[ref]") {
  std::set<std::string> covered;
  for (const Row& r : all_rows()) covered.insert(r.op);
  int with_forward = 0;
  for (const OpDef* d : all_ops()) {
    if (!d->forward) continue;
    ++with_forward;
    INFO(d->name << " has a forward but no row in ref/tests/ref_ops_test.cpp");
    CHECK(covered.count(d->name) == 1);
  }
  CHECK(with_forward > 80);
}
