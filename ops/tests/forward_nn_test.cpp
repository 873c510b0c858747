// The builtins' forwards: random draws, nn ops, and the composites'
// gradients by finite differences (see forward_test.cpp for the tolerances).

#include <catch2/catch.hpp>

#include "ops/tests/forward_test_util.h"

using namespace ss::ops;
using ss::types::DType;
using namespace forward_test;

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
  // Overlapping, padded windows (one strided slice per window position).
  for (const char* op : {"max_pool2d", "avg_pool2d"})
    add_row(op,
            [op](const std::vector<Tensor>& in) {
              return FakeFwd(op)
                  .t("x", in[0])
                  .integer("k", 3)
                  .integer("stride", 2)
                  .integer("padding", 1)
                  .run1();
            },
            {Distinct({1, 2, 5, 6})});
  add_row("adaptive_avg_pool2d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("adaptive_avg_pool2d")
                .t("x", in[0])
                .integer("size", 3)
                .run1();
          },
          {R({2, 2, 5, 7}, 35)});
  add_row("conv2d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("conv2d")
                .t("x", in[0])
                .t("k", in[1])
                .integer("stride", 2)
                .integer("padding", 1)
                .integer("dilation", 2)
                .integer("groups", 2)
                .t("bias", in[2])
                .run1();
          },
          {R({2, 4, 7, 6}, 36), R({6, 2, 2, 3}, 37), R({6}, 38)});
  add_row("conv1d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("conv1d")
                .t("x", in[0])
                .t("k", in[1])
                .integer("stride", 2)
                .integer("padding", 1)
                .integer("groups", 3)
                .t("bias", in[2])
                .run1();
          },
          {R({2, 3, 9}, 39), R({6, 1, 3}, 40), R({6}, 41)});
  add_row("conv_transpose2d",
          [](const std::vector<Tensor>& in) {
            return FakeFwd("conv_transpose2d")
                .t("x", in[0])
                .t("k", in[1])
                .integer("stride", 2)
                .integer("padding", 1)
                .integer("output_padding", 1)
                .integer("groups", 2)
                .t("bias", in[2])
                .run1();
          },
          {R({2, 4, 3, 3}, 42), R({4, 3, 3, 3}, 43), R({6}, 44)});
  return rows;
}

}  // namespace

TEST_CASE("forward: finite-difference gradients of the composites",
          "[forward]") {
  check_grad_rows(grad_rows());
}
