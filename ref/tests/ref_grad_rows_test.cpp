// Finite-difference gradient checks (ref/ref_grad.h) of the differentiable
// builtins no other file checks, and a coverage test: every builtin whose
// OpDef says differentiable must be checked here or in a file named below.

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ops/registry/registry.h"
#include "ops/tests/fake_forward_ctx.h"
#include "ref/ref_grad.h"

namespace {

using namespace ss::ops;
using ss::ops::test::FakeFwd;
using ss::ops::test::Model;
using ss::types::DType;
using Ts = std::vector<Tensor>;

// Deterministic values in [lo, hi), f64 (as ref_ops_test.cpp).
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

// Distinct values 0.1 apart, shuffled: no ties (max, topk).
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

}  // namespace

// ---------------------------------------------------------------- gradients
// Finite differences (ref/ref_grad.h, f64, its default tolerances: eps
// 1e-6, rtol 1e-5, atol 1e-7) for the differentiable builtins that no
// other file checks. Who checks which builtin's gradient:
// - ops/tests/grad_test.cpp, at the API primitive the builtin's forward is
//   (one call, so its VJP is the builtin's): neg abs exp expm1 log log1p sqrt
//   rsqrt sin cos tanh sigmoid relu add sub mul div pow maximum minimum
//   where sum mean max min prod concat stack take (index tensor and int,
//   as take_one) reshape gather cumsum sort matmul conv2d;
// - ops/tests/forward_test.cpp, through the builtin's forward: softmax
//   log_softmax logsumexp cross_entropy gelu (both forms) silu softplus
//   layer_norm (with and without affine) rms_norm std var norm mse linear
//   masked_fill clip batch_norm (Train) put (int and tensor) scatter roll
//   pad max_pool2d avg_pool2d;
// - here: sign mod topk embedding batch_norm (Eval) to dropout reduce
//   (every with=), max and min of two values, take (int, through the
//   builtin), stop_grad (its gradient is zero by definition, so it is
//   checked to be exactly zero rather than by differences).

namespace {

struct GradRow {
  std::string op, label;
  std::function<Tensor(const Ts&)> f;
  Ts inputs;
};

Tensor Signed(const Shape& s, uint64_t seed) {
  Tensor t = R(s, seed, 0.2, 1.2);
  for (int64_t i = 0; i < t.numel(); i += 2) t.set(i, -t.at(i));
  return t;
}

std::vector<GradRow> grad_rows() {
  std::vector<GradRow> g;
  g.push_back(
      {"sign",
       "sign",
       [](const Ts& in) { return FakeFwd("sign").t("x", in[0]).run1(); },
       {Signed({2, 3}, 800)}});
  g.push_back({"mod",
               "mod",
               [](const Ts& in) {
                 return FakeFwd("mod").t("a", in[0]).t("b", in[1]).run1();
               },
               // a / b stays 0.1 away from integers: no jump within eps.
               {Tensor::from_doubles({4}, {-2.3, -0.45, 0.7, 2.9}, DType::F64),
                Tensor::from_doubles({4}, {1.0, 1.0, 2.0, 1.3}, DType::F64)}});
  g.push_back({"topk",
               "topk values",
               [](const Ts& in) {
                 return FakeFwd("topk")
                     .t("x", in[0])
                     .integer("k", 2)
                     .over({1})
                     .run()[0];
               },
               {Distinct({3, 5})}});
  g.push_back({"embedding",
               "embedding (repeated ids)",
               [](const Ts& in) {
                 return FakeFwd("embedding")
                     .t("table", in[0])
                     .t("ids", I({2, 3}, {1, 0, 1, 3, 1, 0}))
                     .run1();
               },
               {R({4, 3}, 801)}});
  g.push_back({"batch_norm",
               "batch_norm eval",
               [](const Ts& in) {
                 Model bn = {{"g", in[1]},
                             {"b", in[2]},
                             {"running_mean", R({3}, 802)},
                             {"running_var", R({3}, 803, 0.5, 2)}};
                 return FakeFwd("batch_norm")
                     .t("x", in[0])
                     .model("bn", &bn)
                     .mode("mode", false)
                     .run1();
               },
               {R({4, 3, 2}, 804), R({3}, 805, 0.5, 1.5), R({3}, 806)}});
  g.push_back({"to",
               "to f64",
               [](const Ts& in) {
                 return FakeFwd("to")
                     .t("x", in[0])
                     .type("dtype", {}, DType::F64)
                     .run1();
               },
               {R({2, 3}, 807)}});
  g.push_back({"dropout",
               "dropout train p=0.4",
               [](const Ts& in) {
                 return FakeFwd("dropout")
                     .t("x", in[0])
                     .num("p", 0.4)
                     .mode("mode", true, RandomStream{3, 1, 0})
                     .run1();
               },
               {R({4, 5}, 808)}});
  for (const char* with : {"sum", "max", "min", "prod", "mean"})
    g.push_back({"reduce",
                 std::string("reduce with=") + with,
                 [with](const Ts& in) {
                   return FakeFwd("reduce")
                       .t("x", in[0])
                       .over({1})
                       .str("with", with)
                       .run1();
                 },
                 {std::string(with) == "prod" ? R({3, 4}, 809, 0.5, 1.5)
                                              : Distinct({3, 4})}});
  for (const char* op : {"max", "min"})
    g.push_back({op,
                 std::string(op) + " of two",
                 [op](const Ts& in) {
                   return FakeFwd(op).t("x", in[0]).t("y", in[1]).run1();
                 },
                 {Distinct({2, 3}),
                  Tensor::from_doubles({3}, {0.05, 0.15, -0.05}, DType::F64)}});
  g.push_back(
      {"take",
       "take int",
       [](const Ts& in) {
         return FakeFwd("take").t("x", in[0]).integer("i", -1).over({0}).run1();
       },
       {R({3, 2}, 810)}});
  return g;
}

}  // namespace

TEST_CASE(
    "ref: finite-difference gradients of the builtins no other file "
    "checks",
    "[ref]") {
  for (const GradRow& r : grad_rows()) {
    SECTION(r.label) {
      auto rep = ss::ref::check_gradients(r.f, r.inputs);
      INFO(r.label << ":\n" << rep.detail);
      CHECK(rep.ok);
    }
  }
  SECTION("stop_grad: exactly zero") {
    Tensor x = requires_grad(R({2, 3}, 811));
    Tensor y = FakeFwd("stop_grad").t("x", x).run1();
    Tensor loss = sum(mul(add(y, x), y));  // d/dx = y, through x only
    auto g = backward(loss, {x});
    CHECK(g[0].to_doubles() == y.to_doubles());
  }
}

TEST_CASE("ref: every differentiable builtin has a gradient check", "[ref]") {
  std::set<std::string> covered = {
      // ops/tests/grad_test.cpp (the API primitive the forward calls)
      "neg",
      "abs",
      "exp",
      "expm1",
      "log",
      "log1p",
      "sqrt",
      "rsqrt",
      "sin",
      "cos",
      "tanh",
      "sigmoid",
      "relu",
      "add",
      "sub",
      "mul",
      "div",
      "pow",
      "maximum",
      "minimum",
      "where",
      "sum",
      "mean",
      "max",
      "min",
      "prod",
      "concat",
      "stack",
      "take",
      "reshape",
      "gather",
      "cumsum",
      "sort",
      "matmul",
      "conv2d",
      // ops/tests/forward_test.cpp (through the builtin)
      "softmax",
      "log_softmax",
      "logsumexp",
      "cross_entropy",
      "gelu",
      "silu",
      "softplus",
      "layer_norm",
      "rms_norm",
      "std",
      "var",
      "norm",
      "mse",
      "linear",
      "masked_fill",
      "clip",
      "batch_norm",
      "put",
      "scatter",
      "roll",
      "pad",
      "max_pool2d",
      "avg_pool2d",
      "adaptive_avg_pool2d",
      "conv1d",
      "conv_transpose2d",
      // interp/tests/spmd_transpose_test.cpp: each collective's VJP in the
      // simulated mesh against the derivative from ref/'s collectives
      // (and conformance/spmd/grad_*.ss against numpy)
      "psum",
      "pmean",
      "pmax",
      "pmin",
      "pvary",
      "all_gather",
      "psum_scatter",
      "ppermute",
      "all_to_all",
      // ops/tests/forward_losses_test.cpp (each option's forward)
      "nll_loss",
      "binary_cross_entropy",
      "binary_cross_entropy_with_logits",
      "smooth_l1",
      "huber",
      "kl_div",
      // ops/tests/attention_test.cpp (the fused kernel's VJP), and
      // interp/tests/fusion_test.cpp (the builtin's, against the op by
      // op attention's)
      "scaled_dot_product_attention",
      // ops/tests/epilogue_test.cpp (the fused product's VJP against
      // central differences), interp/tests/fusion_layers_test.cpp (the
      // builtin's, against the layer op by op's)
      "fused_linear",
      // here
      "stop_grad"};
  for (const GradRow& r : grad_rows()) covered.insert(r.op);
  for (const OpDef* d : all_ops()) {
    if (!d->forward || !d->differentiable) continue;
    INFO(d->name << " is differentiable but has no gradient check");
    CHECK(covered.count(d->name) == 1);
  }
}
