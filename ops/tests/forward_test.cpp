// The builtins' forwards (OpDef::forward, ops/defs/*.cpp), run through a
// fake ForwardCtx on small hand-computed inputs, and the composites'
// gradients checked by finite differences in f64 (ref/ref_grad.h).
//
// Tolerances: values are compared to 1e-12 in f64 (1e-6 where f32 is
// involved); the finite-difference rows use the defaults of
// check_gradients (eps 1e-6, rtol 1e-5, atol 1e-7), enough for f64 inputs
// of order 1 away from kinks and ties.

#include <catch2/catch.hpp>

#include "ops/tests/forward_test_util.h"

using namespace ss::ops;
using ss::types::DType;
using namespace forward_test;

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
