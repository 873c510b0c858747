// The builtins' forwards (OpDef::forward, ops/defs/*.cpp), run through a
// fake ForwardCtx on small hand-computed inputs, and the composites'
// gradients checked by finite differences in f64 (ref/ref_grad.h).
//
// Tolerances: values are compared to 1e-12 in f64 (1e-6 where f32 is
// involved); the finite-difference rows use the defaults of
// check_gradients (eps 1e-6, rtol 1e-5, atol 1e-7), enough for f64 inputs
// of order 1 away from kinks and ties.

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

namespace {

using namespace ss::ops;
using ss::types::DType;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Model = std::map<std::string, Tensor>;

using ss::ops::test::FakeFwd;

Tensor T(const Shape& s, std::vector<double> v, DType d = DType::F64) {
  return Tensor::from_doubles(s, v, d);
}

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

// Distinct values 0.1 apart, shuffled: no ties (max, pools).
Tensor Distinct(const Shape& s) {
  int64_t n = numel_of(s);
  int64_t stride = 7;
  while (std::gcd(n, stride) != 1) stride += 2;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = 0.1 * static_cast<double>((i * stride) % n) - 0.3;
  return Tensor::from_doubles(s, v, DType::F64);
}

void close(const Tensor& got,
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

}  // namespace

// ---------------------------------------------------------------- registry

TEST_CASE("forward: every tensor op of these families has one", "[forward]") {
  const char* ops[] = {"abs",         "sign",        "exp",
                       "log",         "log1p",       "sqrt",
                       "rsqrt",       "sin",         "cos",
                       "tanh",        "sigmoid",     "relu",
                       "gelu",        "silu",        "softplus",
                       "neg",         "isnan",       "isfinite",
                       "add",         "sub",         "mul",
                       "div",         "floordiv",    "mod",
                       "pow",         "maximum",     "minimum",
                       "eq",          "ne",          "lt",
                       "le",          "gt",          "ge",
                       "logical_and", "logical_or",  "logical_not",
                       "where",       "clip",        "masked_fill",
                       "matmul",      "sum",         "mean",
                       "max",         "min",         "prod",
                       "std",         "var",         "logsumexp",
                       "norm",        "argmax",      "argmin",
                       "any",         "all",         "reduce",
                       "softmax",     "log_softmax", "cumsum",
                       "sort",        "topk",        "gather",
                       "scatter",     "concat",      "stack",
                       "take",        "put",         "roll",
                       "pad",         "reshape",     "to",
                       "tensor",      "zeros",       "ones",
                       "full",        "arange",      "zeros_like",
                       "ones_like",   "causal",      "cross_entropy",
                       "mse",         "dropout",     "batch_norm",
                       "layer_norm",  "rms_norm",    "embedding",
                       "conv2d",      "max_pool2d",  "avg_pool2d",
                       "stop_grad",   "linear",      "rand",
                       "randn"};
  for (const char* name : ops) {
    INFO(name);
    const OpDef* d = find_op(name);
    REQUIRE(d != nullptr);
    CHECK(d->forward != nullptr);
  }
}

// ---------------------------------------------------------------- elementwise

TEST_CASE("forward: gelu, silu, softplus values", "[forward]") {
  Tensor one = T({1}, {1.0});
  close(FakeFwd("gelu").t("x", one).run1(), {0.8413447460685429});
  double c = std::sqrt(2.0 / M_PI);
  double tanh_form = 0.5 * (1 + std::tanh(c * (1 + 0.044715)));
  close(FakeFwd("gelu").t("x", one).str("approximate", "tanh").run1(),
        {tanh_form});
  expect_op_error(
      [&] { FakeFwd("gelu").t("x", one).str("approximate", "erf").run(); },
      OpError::Kind::Value,
      "tanh");
  Tensor x = T({4}, {-30, -1, 0.5, 30});
  std::vector<double> silu, sp;
  for (double v : {-30.0, -1.0, 0.5, 30.0}) {
    silu.push_back(v / (1 + std::exp(-v)));
    sp.push_back(std::log1p(std::exp(v)));
  }
  close(FakeFwd("silu").t("x", x).run1(), silu);
  close(FakeFwd("softplus").t("x", x).run1(), sp);
  // Stable where log(1 + exp(x)) overflows.
  Tensor big = FakeFwd("softplus").t("x", T({1}, {1000})).run1();
  CHECK(big.item() == Approx(1000));
  // Ints give f32.
  Tensor gi = FakeFwd("gelu").t("x", T({1}, {1}, DType::I64)).run1();
  CHECK(gi.dtype() == DType::F32);
}

TEST_CASE("forward: operators, where, clip, masked_fill", "[forward]") {
  Tensor a = T({3}, {1, -2, 3});
  Tensor b = T({3}, {2, 2, 2});
  close(FakeFwd("maximum").t("a", a).t("b", b).run1(), {2, 2, 3});
  close(FakeFwd("sub").t("a", a).num("b", 1.0).run1(), {0, -3, 2});
  Tensor lt = FakeFwd("lt").t("a", a).t("b", b).run1();
  CHECK(lt.dtype() == DType::Bool);
  close(lt, {1, 1, 0});
  close(FakeFwd("neg").t("x", a).run1(), {-1, 2, -3});
  close(FakeFwd("isnan").t("x", T({2}, {NAN, 1})).run1(), {1, 0});
  close(FakeFwd("clip").t("x", a).num("lo", -1.0).num("hi", 2.0).run1(),
        {1, -1, 2});
  Tensor mask = T({3}, {1, 0, 1}, DType::Bool);
  close(FakeFwd("where").t("c", mask).t("a", a).t("b", b).run1(), {1, 2, 3});
  Tensor mf = FakeFwd("masked_fill")
                  .t("x", a)
                  .t("mask", mask)
                  .num("v", -INFINITY)
                  .run1();
  CHECK(mf.dtype() == DType::F64);
  std::vector<double> got = mf.to_doubles();
  CHECK(std::isinf(got[0]));
  CHECK(got[0] < 0);
  CHECK(got[1] == -2);
  CHECK(std::isinf(got[2]));
  // A [1 3] mask broadcasts over x's rows.
  Tensor x2 = T({2, 3}, {1, 2, 3, 4, 5, 6});
  close(FakeFwd("masked_fill")
            .t("x", x2)
            .t("mask", T({1, 3}, {0, 1, 0}, DType::Bool))
            .num("v", 0.0)
            .run1(),
        {1, 0, 3, 4, 0, 6});
}

// ---------------------------------------------------------------- matmul

TEST_CASE("forward: matmul", "[forward]") {
  Tensor a = T({2, 2}, {1, 2, 3, 4});
  Tensor b = T({2, 1}, {5, 6});
  close(FakeFwd("matmul").t("a", a).t("b", b).run1(), {17, 39});
}

// ---------------------------------------------------------------- reductions

TEST_CASE("forward: reductions", "[forward]") {
  Tensor x = T({2, 3}, {1, 2, 3, 4, 6, 8});
  close(FakeFwd("sum").t("x", x).run1(), {24});
  close(FakeFwd("sum").t("x", x).over({1}).run1(), {6, 18});
  close(FakeFwd("mean").t("x", x).over({0}).run1(), {2.5, 4, 5.5});
  close(FakeFwd("max").t("x", x).over({1}).run1(), {3, 8});
  close(FakeFwd("min").t("x", x).run1(), {1});
  close(FakeFwd("prod").t("x", x).over({1}).run1(), {6, 192});
  // Unbiased (N - 1), torch's default.
  Tensor v = T({4}, {1, 2, 3, 4});
  close(FakeFwd("var").t("x", v).run1(), {5.0 / 3.0});
  close(FakeFwd("std").t("x", v).run1(), {std::sqrt(5.0 / 3.0)});
  close(FakeFwd("var").t("x", x).over({1}).run1(), {1, 4});
  close(FakeFwd("norm").t("x", T({2}, {3, 4})).run1(), {5});
  close(FakeFwd("argmax").t("x", x).over({1}).run1(), {2, 2});
  close(FakeFwd("argmin").t("x", x).run1(), {0});
  // Several axes: the flat index within them.
  close(FakeFwd("argmax").t("x", x).over({0, 1}).run1(), {5});
  Tensor bx = T({2, 2}, {1, 0, 0, 0}, DType::Bool);
  close(FakeFwd("any").t("x", bx).over({1}).run1(), {1, 0});
  close(FakeFwd("all").t("x", bx).run1(), {0});
  // max/min of two values are elementwise.
  close(FakeFwd("max").t("x", v).num("y", 2.5).run1(), {2.5, 2.5, 3, 4});
  close(FakeFwd("min").t("x", v).t("y", T({4}, {0, 9, 0, 9})).run1(),
        {0, 2, 0, 4});
  // reduce(x, over=, with=).
  close(FakeFwd("reduce").t("x", x).over({1}).str("with", "max").run1(),
        {3, 8});
  close(FakeFwd("reduce").t("x", x).over({0}).run1(), {5, 8, 11});
  close(FakeFwd("reduce").t("x", x).str("with", "mean").run1(), {4});
  expect_op_error([&] { FakeFwd("reduce").t("x", x).str("with", "std").run(); },
                  OpError::Kind::Value,
                  "std");
}

TEST_CASE("forward: logsumexp is the direct formula, and stable", "[forward]") {
  Tensor x = T({2, 3}, {0.1, -0.4, 0.7, 1.0, 2.0, 3.0});
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    double s = 0;
    for (int c = 0; c < 3; ++c) s += std::exp(x.at(r * 3 + c));
    want.push_back(std::log(s));
  }
  close(FakeFwd("logsumexp").t("x", x).over({1}).run1(), want);
  Tensor big = T({3}, {1000, 1000, -INFINITY});
  close(FakeFwd("logsumexp").t("x", big).run1(), {1000 + std::log(2.0)});
  Tensor ninf = T({2}, {-INFINITY, -INFINITY});
  double r = FakeFwd("logsumexp").t("x", ninf).run1().item();
  CHECK(std::isinf(r));
  CHECK(r < 0);
}

// ---------------------------------------------------------------- along_axis

TEST_CASE("forward: softmax and log_softmax", "[forward]") {
  Tensor x = T({2, 3}, {1, 2, 3, -1, 0, 5});
  Tensor s = FakeFwd("softmax").t("x", x).over({1}).run1();
  std::vector<double> sv = s.to_doubles();
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(x.at(r * 3 + c));
    double total = 0;
    for (int c = 0; c < 3; ++c) {
      CHECK(sv[r * 3 + c] == Approx(std::exp(x.at(r * 3 + c)) / z));
      total += sv[r * 3 + c];
    }
    CHECK(total == Approx(1.0).epsilon(1e-14));
  }
  Tensor ls = FakeFwd("log_softmax").t("x", x).over({1}).run1();
  std::vector<double> lv = ls.to_doubles();
  for (size_t i = 0; i < lv.size(); ++i)
    CHECK(lv[i] == Approx(std::log(sv[i])).epsilon(1e-13));
  // Over the other axis; large values; a masked (-inf) entry.
  Tensor cols = FakeFwd("softmax").t("x", x).over({0}).run1();
  CHECK(cols.at(0) + cols.at(3) == Approx(1.0));
  Tensor big = T({3}, {1000, 1000, -INFINITY});
  close(FakeFwd("softmax").t("x", big).over({0}).run1(), {0.5, 0.5, 0});
  std::vector<double> lb =
      FakeFwd("log_softmax").t("x", big).over({0}).run1().to_doubles();
  CHECK(lb[0] == Approx(-std::log(2.0)));
  CHECK(lb[1] == Approx(-std::log(2.0)));
  CHECK((std::isinf(lb[2]) && lb[2] < 0));
}

TEST_CASE("forward: cumsum, sort, topk, gather, scatter", "[forward]") {
  Tensor x = T({2, 3}, {3, 1, 2, 5, 9, 7});
  close(FakeFwd("cumsum").t("x", x).over({1}).run1(), {3, 4, 6, 5, 14, 21});
  auto sorted = FakeFwd("sort").t("x", x).over({1}).run();
  REQUIRE(sorted.size() == 2);
  close(sorted[0], {1, 2, 3, 5, 7, 9});
  close(sorted[1], {1, 2, 0, 0, 2, 1});
  auto top = FakeFwd("topk").t("x", x).integer("k", 2).over({1}).run();
  REQUIRE(top.size() == 2);
  CHECK(top[0].shape() == Shape{2, 2});
  close(top[0], {3, 2, 9, 7});
  close(top[1], {0, 2, 1, 2});
  CHECK(top[1].dtype() == DType::I64);
  expect_op_error(
      [&] { FakeFwd("topk").t("x", x).integer("k", 4).over({1}).run(); },
      OpError::Kind::Value,
      "k = 4");
  Tensor idx = T({2, 2}, {2, 0, 1, 1}, DType::I64);
  close(FakeFwd("gather").t("x", x).t("idx", idx).over({1}).run1(),
        {2, 3, 9, 9});
  // scatter writes (not adds) v at idx.
  Tensor si = T({2, 1}, {2, 0}, DType::I64);
  Tensor sv = T({2, 1}, {-1, -2});
  close(FakeFwd("scatter").t("x", x).t("idx", si).t("v", sv).over({1}).run1(),
        {3, 1, -1, -2, 9, 7});
}

// ---------------------------------------------------------------- shape

TEST_CASE("forward: concat, stack, take, put, roll, pad", "[forward]") {
  Tensor a = T({2, 2}, {1, 2, 3, 4});
  Tensor b = T({2, 1}, {5, 6});
  close(FakeFwd("concat").list("xs", {a, b}).over({1}).run1(),
        {1, 2, 5, 3, 4, 6});
  Tensor st = FakeFwd("stack").list("xs", {a, a}).integer("new", 2).run1();
  CHECK(st.shape() == Shape{2, 2, 2});
  expect_op_error(
      [&] {
        FakeFwd("stack").list("xs", {a, a}).integer("new", 3).run();
      },
      OpError::Kind::Shape,
      "3");
  close(FakeFwd("take").t("x", a).integer("i", 1).over({0}).run1(), {3, 4});
  close(FakeFwd("take").t("x", a).integer("i", -1).over({1}).run1(), {2, 4});
  Tensor ti = FakeFwd("take")
                  .t("x", a)
                  .t("i", T({3}, {1, 0, 1}, DType::I64))
                  .over({1})
                  .run1();
  CHECK(ti.shape() == Shape{2, 3});
  close(ti, {2, 1, 2, 4, 3, 4});
  expect_op_error(
      [&] { FakeFwd("take").t("x", a).integer("i", 2).over({0}).run(); },
      OpError::Kind::Value,
      "2");
  // put: one index (a row), a broadcast value, an index tensor.
  close(FakeFwd("put")
            .t("x", a)
            .integer("i", 0)
            .t("v", T({2}, {7, 8}))
            .over({0})
            .run1(),
        {7, 8, 3, 4});
  close(
      FakeFwd("put").t("x", a).integer("i", -1).num("v", 0.0).over({1}).run1(),
      {1, 0, 3, 0});
  Tensor x3 = T({2, 3}, {1, 2, 3, 4, 5, 6});
  close(FakeFwd("put")
            .t("x", x3)
            .t("i", T({2}, {2, 0}, DType::I64))
            .t("v", T({2, 2}, {10, 20, 30, 40}))
            .over({1})
            .run1(),
        {20, 2, 10, 40, 5, 30});
  expect_op_error(
      [&] {
        FakeFwd("put").t("x", a).integer("i", 5).num("v", 0.0).over({0}).run();
      },
      OpError::Kind::Value,
      "5");
  // roll: element j moves to j + k (torch.roll).
  Tensor r = T({5}, {0, 1, 2, 3, 4});
  close(FakeFwd("roll").t("x", r).integer("k", 2).over({0}).run1(),
        {3, 4, 0, 1, 2});
  close(FakeFwd("roll").t("x", r).integer("k", -1).over({0}).run1(),
        {1, 2, 3, 4, 0});
  close(FakeFwd("roll").t("x", r).integer("k", 5).over({0}).run1(),
        {0, 1, 2, 3, 4});
  // pad at the end, with 0 or value=.
  close(FakeFwd("pad").t("x", a).over({1}).integer("to", 3).run1(),
        {1, 2, 0, 3, 4, 0});
  close(FakeFwd("pad")
            .t("x", a)
            .over({0})
            .integer("to", 3)
            .num("value", -1.0)
            .run1(),
        {1, 2, 3, 4, -1, -1});
  expect_op_error(
      [&] { FakeFwd("pad").t("x", a).over({0}).integer("to", 1).run(); },
      OpError::Kind::Value,
      "smaller");
}

TEST_CASE("forward: reshape and to", "[forward]") {
  Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = FakeFwd("reshape").t("x", x).type("sizes", {3, 2}).run1();
  CHECK(r.shape() == Shape{3, 2});
  close(r, {1, 2, 3, 4, 5, 6});
  expect_op_error(
      [&] {
        FakeFwd("reshape").t("x", x).type("sizes", {4, 2}).run();
      },
      OpError::Kind::Shape,
      "6 values");
  Tensor c = FakeFwd("to")
                 .t("x", T({2}, {1.7, -2.2}))
                 .type("dtype", {}, DType::I64)
                 .run1();
  CHECK(c.dtype() == DType::I64);
  close(c, {1, -2});
}

// ---------------------------------------------------------------- make

TEST_CASE("forward: tensor, zeros, ones, full, arange, *_like, causal",
          "[forward]") {
  Tensor t =
      FakeFwd("tensor")
          .list("values",
                {Tensor::scalar(1, DType::I64), Tensor::scalar(2, DType::I64)})
          .result(DType::I64)
          .run1();
  CHECK(t.dtype() == DType::I64);
  close(t, {1, 2});
  // Nested: rows (tensors) stack to the next axis; dtype= converts.
  Tensor rows = FakeFwd("tensor")
                    .list("values", {T({2}, {1, 2}), T({2}, {3, 4})})
                    .type("dtype", {}, DType::F32)
                    .run1();
  CHECK(rows.shape() == Shape{2, 2});
  CHECK(rows.dtype() == DType::F32);
  Tensor z = FakeFwd("zeros").type("type", {2, 3}, DType::F64).run1();
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.dtype() == DType::F64);
  close(z, {0, 0, 0, 0, 0, 0});
  close(FakeFwd("ones").type("type", {2}, DType::I32).run1(), {1, 1});
  expect_op_error(
      [&] { FakeFwd("zeros").run(); }, OpError::Kind::Value, "initialises");
  Tensor f = FakeFwd("full").type("type", {3}, DType::F32).num("v", 2.5).run1();
  CHECK(f.dtype() == DType::F32);
  close(f, {2.5, 2.5, 2.5});
  Tensor ar = FakeFwd("arange").integer("n", 4).run1();
  CHECK(ar.dtype() == DType::I64);
  close(ar, {0, 1, 2, 3});
  close(FakeFwd("ones_like").t("x", T({2}, {5, 6})).run1(), {1, 1});
  close(FakeFwd("zeros_like").t("x", T({2}, {5, 6})).run1(), {0, 0});
  Tensor cz = FakeFwd("causal").integer("n", 3).integer("m", 4).run1();
  CHECK(cz.shape() == Shape{3, 4});
  CHECK(cz.dtype() == DType::Bool);
  close(cz,
        {1,
         0,
         0,
         0,  //
         1,
         1,
         0,
         0,  //
         1,
         1,
         1,
         0});
}

// ---------------------------------------------------------------- random

TEST_CASE("forward: rand and randn draw from ctx.random", "[forward]") {
  RandomStream s{1234, 0, 0};
  auto draw = [&](const char* op, uint64_t key) {
    FakeFwd f(op);
    f.type("type", {1000}, DType::F32).integer("seed", 1);
    // The fake keys by the seed param's stream: reuse mode()'s storage.
    f.mode("seed", false, RandomStream{key, 0, 0});
    return f.run1();
  };
  Tensor u1 = draw("rand", s.key), u2 = draw("rand", s.key);
  CHECK(u1.to_doubles() == u2.to_doubles());
  CHECK(u1.to_doubles() != draw("rand", 99).to_doubles());
  CHECK(u1.to_doubles() ==
        random_uniform({1000}, DType::F32, s.key, 0, 0).to_doubles());
  double lo = 1, hi = 0, m = 0;
  for (double v : u1.to_doubles()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    m += v / 1000;
  }
  CHECK(lo >= 0);
  CHECK(hi < 1);
  CHECK(m == Approx(0.5).margin(0.05));
  Tensor n = draw("randn", s.key);
  CHECK(n.to_doubles() ==
        random_normal({1000}, DType::F32, s.key, 0, 0).to_doubles());
}

// ---------------------------------------------------------------- nn

TEST_CASE("forward: cross_entropy is the mean of -log softmax[label]",
          "[forward]") {
  Tensor logits = T({2, 2, 3},
                    {0.1,
                     0.5,
                     -0.2,
                     1.0,
                     2.0,
                     0.0,  //
                     -1.0,
                     0.3,
                     0.8,
                     0.0,
                     0.0,
                     0.0});
  Tensor label = T({2, 2}, {2, 1, 0, 1}, DType::I64);
  double want = 0;
  for (int p = 0; p < 4; ++p) {
    double z = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(logits.at(p * 3 + c));
    int l = static_cast<int>(label.at(p));
    want += -std::log(std::exp(logits.at(p * 3 + l)) / z) / 4;
  }
  close(FakeFwd("cross_entropy")
            .t("logits", logits)
            .t("label", label)
            .result(DType::F64)
            .run1(),
        {want});
  // Typed f32 by the checker.
  Tensor f32 = FakeFwd("cross_entropy")
                   .t("logits", logits)
                   .t("label", label)
                   .result(DType::F32)
                   .run1();
  CHECK(f32.dtype() == DType::F32);
  CHECK(f32.item() == Approx(want).epsilon(1e-6));
  // Stable with huge logits.
  Tensor big = FakeFwd("cross_entropy")
                   .t("logits", T({1, 2}, {1000, 0}))
                   .t("label", T({1}, {1}, DType::I64))
                   .run1();
  CHECK(big.item() == Approx(1000));
  expect_op_error(
      [&] {
        FakeFwd("cross_entropy")
            .t("logits", logits)
            .t("label", T({2, 2}, {0, 3, 1, 1}, DType::I64))
            .run();
      },
      OpError::Kind::Value,
      "label 3");
  expect_op_error(
      [&] {
        FakeFwd("cross_entropy")
            .t("logits", logits)
            .t("label", T({2, 2}, {0, -1, 1, 1}, DType::I64))
            .run();
      },
      OpError::Kind::Value,
      "label -1");
}

TEST_CASE("forward: mse", "[forward]") {
  close(
      FakeFwd("mse").t("a", T({3}, {1, 2, 3})).t("b", T({3}, {1, 0, 6})).run1(),
      {13.0 / 3.0});
}

TEST_CASE("forward: dropout", "[forward]") {
  const int n = 20000;
  Tensor x = Tensor::full({n}, 1.0, DType::F32);
  RandomStream s{77, 5, 0};
  auto run = [&](double p, bool train, RandomStream st) {
    return FakeFwd("dropout")
        .t("x", x)
        .num("p", p)
        .mode("mode", train, st)
        .run1();
  };
  Tensor y = run(0.25, true, s);
  int kept = 0;
  for (double v : y.to_doubles()) {
    if (v != 0) {
      ++kept;
      CHECK(v == Approx(1 / 0.75));
    }
  }
  CHECK(kept / double(n) == Approx(0.75).margin(0.015));
  // The mask is u >= p for u = random_uniform on the stream.
  std::vector<double> u =
      random_uniform({n}, DType::F32, s.key, s.stream, s.offset).to_doubles();
  std::vector<double> yv = y.to_doubles();
  for (int i = 0; i < n; i += 997) CHECK((yv[i] != 0) == (u[i] >= 0.25));
  // Same stream, same mask; another stream, another mask.
  CHECK(run(0.25, true, s).to_doubles() == yv);
  CHECK(run(0.25, true, RandomStream{77, 6, 0}).to_doubles() != yv);
  // Eval and p = 0 are the identity; p = 1 zeroes.
  CHECK(run(0.25, false, s).same_storage(x));
  CHECK(run(0.0, true, s).same_storage(x));
  close(slice(run(1.0, true, s), 0, 0, 3), {0, 0, 0});
  expect_op_error([&] { run(1.5, true, s); }, OpError::Kind::Value, "1.5");
  // Two draws of one call take different ordinals.
  FakeFwd f("dropout");
  f.t("x", x).num("p", 0.5).mode("mode", true, s);
  Tensor d1 = f.run1(), d2 = f.run1();
  CHECK(d1.to_doubles() != d2.to_doubles());
}

TEST_CASE("forward: batch_norm train, eval and running stats (torch)",
          "[forward]") {
  // x: [4 2]; channel 0: 1 2 3 6 (mean 3, biased var 3.5, unbiased 14/3);
  // channel 1: 0 0 4 4 (mean 2, biased var 4, unbiased 16/3).
  Tensor x = T({4, 2}, {1, 0, 2, 0, 3, 4, 6, 4});
  Model bn = {{"g", T({2}, {2, 1})},
              {"b", T({2}, {0.5, -1})},
              {"running_mean", T({2}, {0, 0})},
              {"running_var", T({2}, {1, 1})}};
  Tensor y = FakeFwd("batch_norm")
                 .t("x", x)
                 .model("bn", &bn)
                 .mode("mode", true)
                 .run1();
  const double eps = 1e-5;
  std::vector<double> want;
  double mu[2] = {3, 2}, var[2] = {3.5, 4}, g[2] = {2, 1}, b[2] = {0.5, -1};
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 2; ++c)
      want.push_back(
          (x.at(i * 2 + c) - mu[c]) / std::sqrt(var[c] + eps) * g[c] + b[c]);
  close(y, want);
  // torch: running = 0.9 running + 0.1 batch, with the unbiased variance.
  close(bn["running_mean"], {0.3, 0.2});
  close(bn["running_var"], {0.9 + 0.1 * 14.0 / 3.0, 0.9 + 0.1 * 16.0 / 3.0});
  // A second Train call moves them again.
  FakeFwd("batch_norm").t("x", x).model("bn", &bn).mode("mode", true).run();
  close(bn["running_mean"], {0.9 * 0.3 + 0.3, 0.9 * 0.2 + 0.2});
  // Eval uses the running stats and leaves them.
  Tensor rm = bn["running_mean"], rv = bn["running_var"];
  Tensor ye = FakeFwd("batch_norm")
                  .t("x", x)
                  .model("bn", &bn)
                  .mode("mode", false)
                  .run1();
  want.clear();
  for (int i = 0; i < 4; ++i)
    for (int c = 0; c < 2; ++c)
      want.push_back((x.at(i * 2 + c) - rm.at(c)) / std::sqrt(rv.at(c) + eps) *
                         g[c] +
                     b[c]);
  close(ye, want);
  CHECK(bn["running_mean"].same_storage(rm));
  // [b C h w]: statistics over b, h, w.
  Tensor x4 = R({2, 3, 2, 2}, 3);
  Model bn3 = {{"g", T({3}, {1, 1, 1})},
               {"b", T({3}, {0, 0, 0})},
               {"running_mean", T({3}, {0, 0, 0})},
               {"running_var", T({3}, {1, 1, 1})}};
  Tensor y4 = FakeFwd("batch_norm")
                  .t("x", x4)
                  .model("bn", &bn3)
                  .mode("mode", true)
                  .run1();
  Tensor m4 = mean(y4, {0, 2, 3});
  close(m4, {0, 0, 0}, 1e-10);
  expect_op_error(
      [&] {
        FakeFwd("batch_norm")
            .t("x", T({1, 2}, {1, 2}))
            .model("bn", &bn)
            .mode("mode", true)
            .run();
      },
      OpError::Kind::Value,
      "more than one");
}

TEST_CASE("forward: layer_norm and rms_norm", "[forward]") {
  Tensor x = R({3, 5}, 11, -2, 3);
  Tensor y = FakeFwd("layer_norm").t("x", x).over({1}).run1();
  for (int r = 0; r < 3; ++r) {
    Tensor row = take_one(y, r, 0);
    CHECK(mean(row).item() == Approx(0).margin(1e-12));
    // Biased variance of the normalised row: 1 (up to eps).
    CHECK(mean(mul(row, row)).item() == Approx(1).epsilon(1e-4));
  }
  Model ln = {{"g", T({5}, {1, 2, 3, 4, 5})}, {"b", T({5}, {0, 0, 0, 0, 1})}};
  Tensor ya =
      FakeFwd("layer_norm").t("x", x).over({1}).model("affine", &ln).run1();
  CHECK(ya.at(4) == Approx(y.at(4) * 5 + 1));
  CHECK(ya.at(6) == Approx(y.at(6) * 2));
  // over= an axis that is not last: g lines up with it.
  Model ln0 = {{"g", T({3}, {1, 2, 3})}, {"b", T({3}, {0, 0, 0})}};
  Tensor y0 =
      FakeFwd("layer_norm").t("x", x).over({0}).model("affine", &ln0).run1();
  Tensor y0n = FakeFwd("layer_norm").t("x", x).over({0}).run1();
  CHECK(y0.at(5 * 2 + 1) == Approx(3 * y0n.at(5 * 2 + 1)));
  // rms_norm: x / sqrt(mean(x^2) + eps), eps 1e-6 by default.
  Tensor v = T({1, 2}, {3, 4});
  double rms = std::sqrt((9 + 16) / 2.0 + 1e-6);
  close(FakeFwd("rms_norm").t("x", v).over({1}).run1(), {3 / rms, 4 / rms});
  double rms2 = std::sqrt(12.5 + 0.5);
  close(FakeFwd("rms_norm").t("x", v).over({1}).num("eps", 0.5).run1(),
        {3 / rms2, 4 / rms2});
}

TEST_CASE("forward: embedding, linear, stop_grad", "[forward]") {
  Tensor table = T({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor e = FakeFwd("embedding")
                 .t("table", table)
                 .t("ids", T({2, 2}, {2, 0, 1, 2}, DType::I64))
                 .run1();
  CHECK(e.shape() == Shape{2, 2, 2});
  close(e, {20, 21, 0, 1, 10, 11, 20, 21});
  expect_op_error(
      [&] {
        FakeFwd("embedding")
            .t("table", table)
            .t("ids", T({1}, {3}, DType::I64))
            .run();
      },
      OpError::Kind::Value,
      "3");
  Model l = {{"w", T({2, 1}, {1, 2})}, {"b", T({1}, {0.5})}};
  close(FakeFwd("linear").model("l", &l).t("x", T({2, 2}, {1, 1, 3, 0})).run1(),
        {3.5, 3.5});
  Tensor w = requires_grad(T({2}, {1, 2}));
  Tensor sg = FakeFwd("stop_grad").t("x", w).run1();
  CHECK_FALSE(needs_grad(sg));
}

TEST_CASE("forward: conv2d, max_pool2d, avg_pool2d", "[forward]") {
  Tensor x = R({2, 3, 7, 6}, 5);
  Tensor k = R({4, 3, 3, 3}, 6);
  CHECK(FakeFwd("conv2d").t("x", x).t("k", k).run1().shape() ==
        Shape{2, 4, 5, 4});
  CHECK(FakeFwd("conv2d")
            .t("x", x)
            .t("k", k)
            .integer("stride", 2)
            .integer("padding", 1)
            .run1()
            .shape() == Shape{2, 4, 4, 3});
  Tensor p = T({1, 1, 4, 4},
               {1,
                2,
                3,
                4,  //
                5,
                6,
                7,
                8,  //
                9,
                10,
                11,
                12,  //
                13,
                14,
                15,
                16});
  close(FakeFwd("max_pool2d").t("x", p).integer("k", 2).run1(), {6, 8, 14, 16});
  close(FakeFwd("avg_pool2d").t("x", p).integer("k", 2).run1(),
        {3.5, 5.5, 11.5, 13.5});
  // Not divisible: the rest is dropped (floor, as torch and the rule).
  Tensor q = T({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  close(FakeFwd("max_pool2d").t("x", q).integer("k", 2).run1(), {5});
  expect_op_error(
      [&] { FakeFwd("avg_pool2d").t("x", q).integer("k", 4).run(); },
      OpError::Kind::Shape,
      "window");
}

// ---------------------------------------------------------------- gradients

namespace {

struct GradRow {
  std::string name;
  Fn f;
  std::vector<Tensor> inputs;
};

std::vector<GradRow> grad_rows() {
  std::vector<GradRow> rows;
  auto add_row = [&](std::string name, Fn f, std::vector<Tensor> in) {
    rows.push_back({std::move(name), std::move(f), std::move(in)});
  };
  add_row("softmax",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("softmax").t("x", in[0]).over({1}).run1();
          },
          {R({3, 4}, 1)});
  add_row("log_softmax",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("log_softmax").t("x", in[0]).over({0}).run1();
          },
          {R({3, 4}, 2)});
  add_row("logsumexp",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("logsumexp").t("x", in[0]).over({1}).run1();
          },
          {R({3, 4}, 3)});
  add_row("logsumexp all",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("logsumexp").t("x", in[0]).run1();
          },
          {R({2, 3}, 4)});
  add_row("cross_entropy",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("cross_entropy")
                .t("logits", in[0])
                .t("label", in[1])
                .result(DType::F64)
                .run1();
          },
          {R({2, 3, 4}, 5), T({2, 3}, {0, 3, 1, 2, 2, 0}, DType::I64)});
  add_row("gelu",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("gelu").t("x", in[0]).run1();
          },
          {R({5}, 6, -3, 3)});
  add_row(
      "gelu tanh",
      [](const std::vector<Tensor>& in) {
        return FakeFwd("gelu").t("x", in[0]).str("approximate", "tanh").run1();
      },
      {R({5}, 7, -3, 3)});
  add_row("silu",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("silu").t("x", in[0]).run1();
          },
          {R({5}, 8, -3, 3)});
  add_row("softplus",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("softplus").t("x", in[0]).run1();
          },
          {Tensor::from_doubles({4}, {-2.5, -0.7, 0.6, 2.1}, DType::F64)});
  add_row("layer_norm",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("layer_norm").t("x", in[0]).over({1}).run1();
          },
          {R({3, 4}, 9)});
  add_row("layer_norm affine",
          [](const std::vector<Tensor>& in) {
            Model ln = {{"g", in[1]}, {"b", in[2]}};
            return FakeFwd("layer_norm")
                .t("x", in[0])
                .over({1})
                .model("affine", &ln)
                .run1();
          },
          {R({3, 4}, 10), R({4}, 11, 0.5, 1.5), R({4}, 12)});
  add_row("rms_norm",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("rms_norm").t("x", in[0]).over({1}).run1();
          },
          {R({3, 4}, 13)});
  add_row("std",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("std").t("x", in[0]).over({0}).run1();
          },
          {R({4, 3}, 14)});
  add_row("var",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("var").t("x", in[0]).run1();
          },
          {R({4, 3}, 15)});
  add_row("norm",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("norm").t("x", in[0]).over({1}).run1();
          },
          {R({2, 3}, 16)});
  add_row("mse",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("mse")
                .t("a", in[0])
                .t("b", in[1])
                .result(DType::F64)
                .run1();
          },
          {R({2, 3}, 17), R({3}, 18)});
  add_row("linear (x @ w + b)",
          [](const std::vector<Tensor>& in) {
            Model l = {{"w", in[1]}, {"b", in[2]}};
            return FakeFwd("linear").model("l", &l).t("x", in[0]).run1();
          },
          {R({2, 3}, 19), R({3, 4}, 20), R({4}, 21)});
  add_row("masked_fill",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("masked_fill")
                .t("x", in[0])
                .t("mask", in[1])
                .num("v", -5.0)
                .run1();
          },
          {R({2, 3}, 22), T({1, 3}, {1, 0, 1}, DType::Bool)});
  add_row(
      "clip",
      [](const std::vector<Tensor>& in) {
        return FakeFwd("clip")
            .t("x", in[0])
            .num("lo", -0.5)
            .num("hi", 0.5)
            .run1();
      },
      {Tensor::from_doubles({5}, {-0.9, -0.3, 0.1, 0.45, 0.8}, DType::F64)});
  add_row("batch_norm train",
          [](const std::vector<Tensor>& in) {
            Model bn = {{"g", in[1]},
                        {"b", in[2]},
                        {"running_mean", T({3}, {0, 0, 0})},
                        {"running_var", T({3}, {1, 1, 1})}};
            return FakeFwd("batch_norm")
                .t("x", in[0])
                .model("bn", &bn)
                .mode("mode", true)
                .run1();
          },
          {R({4, 3}, 23), R({3}, 24, 0.5, 1.5), R({3}, 25)});
  add_row("put int",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("put")
                .t("x", in[0])
                .integer("i", 1)
                .t("v", in[1])
                .over({1})
                .run1();
          },
          {R({2, 3}, 26), R({2}, 27)});
  add_row("put tensor",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("put")
                .t("x", in[0])
                .t("i", in[2])
                .t("v", in[1])
                .over({0})
                .run1();
          },
          {R({4, 2}, 28), R({2, 2}, 29), T({2}, {3, 0}, DType::I64)});
  add_row("scatter",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("scatter")
                .t("x", in[0])
                .t("idx", in[2])
                .t("v", in[1])
                .over({1})
                .run1();
          },
          {R({2, 3}, 30), R({2, 1}, 31), T({2, 1}, {2, 0}, DType::I64)});
  add_row(
      "roll",
      [](const std::vector<Tensor>& in) {
        return FakeFwd("roll").t("x", in[0]).integer("k", 2).over({1}).run1();
      },
      {R({2, 5}, 32)});
  add_row(
      "pad",
      [](const std::vector<Tensor>& in) {
        return FakeFwd("pad").t("x", in[0]).over({0}).integer("to", 4).run1();
      },
      {R({2, 3}, 33)});
  add_row("max_pool2d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("max_pool2d").t("x", in[0]).integer("k", 2).run1();
          },
          {Distinct({1, 2, 4, 5})});
  add_row("avg_pool2d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("avg_pool2d").t("x", in[0]).integer("k", 2).run1();
          },
          {R({1, 2, 4, 4}, 34)});
  return rows;
}

}  // namespace

TEST_CASE("forward: finite-difference gradients of the composites",
          "[forward]") {
  for (const GradRow& r : grad_rows()) {
    SECTION(r.name) {
      auto rep = ss::ref::check_gradients(r.f, r.inputs);
      INFO(r.name << ":\n" << rep.detail);
      CHECK(rep.ok);
    }
  }
}
