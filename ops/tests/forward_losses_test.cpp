// The losses' gradients by finite differences (see forward_test.cpp for the
// tolerances), through each builtin's forward with its options; weight=
// and the labels are constants (torch gives a loss's weights no gradient).
#include <catch2/catch.hpp>

#include "ops/tests/forward_test_util.h"

using namespace forward_test;

namespace {

std::vector<GradRow> grad_rows() {
  const Tensor labels = T({2, 3}, {0, -100, 4, 2, 2, -100}, DType::I64);
  const Tensor w = T({5}, {0.5, 1.5, 1.0, 2.0, 0.75});
  const Tensor wb = T({4}, {0.5, 1.5, 1.0, 2.0});
  const Tensor target = R({3, 4}, 30, 0.1, 0.9);
  std::vector<GradRow> rows;
  rows.push_back({"cross_entropy weight ignore smoothing",
                  [=](const std::vector<Tensor>& in) {
                    return FakeFwd("cross_entropy")
                        .t("logits", in[0])
                        .t("label", labels)
                        .t("weight", w)
                        .num("label_smoothing", 0.1)
                        .result(DType::F64)
                        .run1();
                  },
                  {R({2, 3, 5}, 31, -2, 2)}});
  rows.push_back({"nll_loss weight ignore",
                  [=](const std::vector<Tensor>& in) {
                    return FakeFwd("nll_loss")
                        .t("logp", in[0])
                        .t("label", labels)
                        .t("weight", w)
                        .result(DType::F64)
                        .run1();
                  },
                  {R({2, 3, 5}, 32, -2, 0)}});
  rows.push_back({"binary_cross_entropy weight",
                  [=](const std::vector<Tensor>& in) {
                    return FakeFwd("binary_cross_entropy")
                        .t("p", in[0])
                        .t("target", in[1])
                        .t("weight", wb)
                        .result(DType::F64)
                        .run1();
                  },
                  {R({3, 4}, 33, 0.1, 0.9), target}});
  rows.push_back({"binary_cross_entropy_with_logits pos_weight",
                  [=](const std::vector<Tensor>& in) {
                    return FakeFwd("binary_cross_entropy_with_logits")
                        .t("x", in[0])
                        .t("target", in[1])
                        .t("pos_weight", wb)
                        .str("reduction", "sum")
                        .result(DType::F64)
                        .run1();
                  },
                  {R({3, 4}, 34, -3, 3), target}});
  // Differences away from the thresholds (|d| of 1 and 0.5), where the
  // losses have no derivative for a finite difference to approach.
  auto away = [](uint64_t seed) {
    std::vector<double> v = R({3, 4}, seed, -2, 2).to_doubles();
    for (double& x : v)
      if (std::fabs(std::fabs(x) - 1) < 0.05 ||
          std::fabs(std::fabs(x) - 0.5) < 0.05 || std::fabs(x) < 0.05)
        x += 0.17;
    return T({3, 4}, v);
  };
  for (const char* op : {"smooth_l1", "huber"})
    rows.push_back({op,
                    [op](const std::vector<Tensor>& in) {
                      return FakeFwd(op)
                          .t("a", in[0])
                          .t("b", zeros_like(in[0]))
                          .str("reduction", "sum")
                          .result(DType::F64)
                          .run1();
                    },
                    {away(35)}});
  rows.push_back({"kl_div batchmean",
                  [](const std::vector<Tensor>& in) {
                    return FakeFwd("kl_div")
                        .t("input", in[0])
                        .t("target", in[1])
                        .str("reduction", "batchmean")
                        .result(DType::F64)
                        .run1();
                  },
                  {R({3, 4}, 36, -2, 0), R({3, 4}, 37, 0.1, 1)}});
  rows.push_back({"kl_div log_target none",
                  [](const std::vector<Tensor>& in) {
                    return FakeFwd("kl_div")
                        .t("input", in[0])
                        .t("target", in[1])
                        .str("reduction", "none")
                        .num("log_target", 1, true)
                        .result(DType::F64)
                        .run1();
                  },
                  {R({3, 4}, 38, -2, 0), R({3, 4}, 39, -2, 0)}});
  return rows;
}

}  // namespace

TEST_CASE("forward: finite-difference gradients of the losses' options",
          "[forward]") {
  check_grad_rows(grad_rows());
}

TEST_CASE("forward: a loss's labels", "[forward]") {
  // A label out of range is named; an ignored one is not checked.
  const Tensor z = R({2, 3}, 40);
  expect_op_error(
      [&] {
        FakeFwd("cross_entropy")
            .t("logits", z)
            .t("label", T({2}, {3, 0}, DType::I64))
            .run();
      },
      OpError::Kind::Value,
      "label 3");
  Tensor kept = FakeFwd("nll_loss")
                    .t("logp", z)
                    .t("label", T({2}, {7, 1}, DType::I64))
                    .integer("ignore_index", 7)
                    .result(DType::F64)
                    .run1();
  CHECK(kept.item() == Approx(-z.to_doubles()[4]));
  expect_op_error(
      [&] {
        FakeFwd("binary_cross_entropy")
            .t("p", T({2}, {0.5, 1.5}))
            .t("target", T({2}, {0, 1}))
            .run();
      },
      OpError::Kind::Value,
      "between 0 and 1");
}
