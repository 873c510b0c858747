// The reference itself (ref/ref_ops.h) on tiny cases computed by hand, so
// the oracle the backends are diff-tested against is checked against
// arithmetic rather than against another implementation. Values compare to
// 1e-12 (the reference computes in double); ints and bools exactly.

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "ops/core/philox.h"
#include "ref/ref_ops.h"
#include "ref/tests/hand_values.h"

namespace {

using namespace ss::ref::hand;
namespace ref = ss::ref;

}  // namespace

TEST_CASE("ref self: elementwise", "[ref]") {
  is(ref::gelu(F({1}, {1})), {1}, {0.8413447460685429});
  double c = std::sqrt(2 / M_PI);
  is(ref::gelu(F({1}, {1}), "tanh"),
     {1},
     {0.5 * (1 + std::tanh(c * 1.044715))});
  is(ref::sigmoid(F({2}, {0, std::log(3.0)})), {2}, {0.5, 0.75});
  is(ref::silu(F({1}, {std::log(3.0)})), {1}, {0.75 * std::log(3.0)});
  is(ref::softplus(F({3}, {0, 1000, -1000})), {3}, {std::log(2.0), 1000, 0});
  is(ref::relu(I({3}, {-2, 0, 3})), {3}, {0, 0, 3});
  CHECK(ref::relu(I({1}, {1})).dtype() == DType::I64);
  CHECK(ref::exp(I({1}, {0})).dtype() == DType::F32);
  is(ref::sign(F({3}, {-0.5, 0, 2})), {3}, {-1, 0, 1});
  is(ref::rsqrt(F({1}, {4})), {1}, {0.5});
  // e^x - 1 = x + x^2/2 + x^3/6 + ...: at 1e-5 the series' next term is
  // 4e-22, far below the 1e-12 the comparison allows.
  is(ref::expm1(F({3}, {0, 1e-5, std::log(3.0)})),
     {3},
     {0, 1e-5 + 5e-11 + 1e-15 / 6, 2});
  // Python's // and %: floored, % takes b's sign.
  is(ref::floordiv(I({2}, {-7, 7}), I({2}, {2, -2})), {2}, {-4, -4});
  is(ref::mod(I({3}, {-7, 7, 6}), I({3}, {3, -3, 3})), {3}, {2, -2, 0});
  is(ref::mod(F({1}, {-0.5}), F({1}, {2})), {1}, {1.5});
  // Broadcasting [2 1] with [3].
  is(ref::add(F({2, 1}, {10, 20}), F({3}, {1, 2, 3})),
     {2, 3},
     {11, 12, 13, 21, 22, 23});
  CHECK(ref::add(B({1}, {1}), B({1}, {1})).dtype() == DType::I64);
  CHECK(ref::div(I({1}, {1}), I({1}, {2})).item() == 0.5);
  is(ref::lt(F({3}, {1, 2, 3}), F({}, {2})), {3}, {1, 0, 0});
  is(ref::where(B({2, 1}, {1, 0}), F({2}, {1, 2}), F({}, {-1})),
     {2, 2},
     {1, 2, -1, -1});
  is(ref::clip(F({3}, {-2, 0.5, 2}), F({}, {-1}), F({}, {1})),
     {3},
     {-1, 0.5, 1});
  is(ref::masked_fill(F({2, 2}, {1, 2, 3, 4}), B({2}, {0, 1}), -9),
     {2, 2},
     {1, -9, 3, -9});
  is(ref::maximum(F({2}, {1, 5}), F({2}, {3, 2})), {2}, {3, 5});
  is(ref::logical_not(B({2}, {1, 0})), {2}, {0, 1});
}

TEST_CASE("ref self: matmul, numpy semantics", "[ref]") {
  Tensor a = F({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = F({3, 2}, {1, 0, 0, 1, 1, 1});
  is(ref::matmul(a, b), {2, 2}, {4, 5, 10, 11});
  is(ref::matmul(F({3}, {1, 2, 3}), F({3}, {4, 5, 6})), {}, {32});
  is(ref::matmul(a, F({3}, {1, 1, 1})), {2}, {6, 15});
  is(ref::matmul(F({2}, {1, 1}), a), {3}, {5, 7, 9});
  // [2 1 2 3] @ [3 3 2] -> [2 3 2 2]: batch axes broadcast.
  Tensor big = ref::matmul(F({2, 1, 2, 3}, std::vector<double>(12, 1)),
                           F({3, 3, 2}, std::vector<double>(18, 2)));
  is(big, {2, 3, 2, 2}, std::vector<double>(24, 6));
  is(ref::linear(F({1, 2}, {1, 2}), F({2, 1}, {3, 4}), F({1}, {0.5})),
     {1, 1},
     {11.5});
}

TEST_CASE("ref self: reductions", "[ref]") {
  Tensor x = F({2, 3}, {1, 2, 3, 4, 6, 8});
  is(ref::sum(x), {}, {24});
  is(ref::sum(x, {-1}), {2}, {6, 18});
  is(ref::mean(x, {0}), {3}, {2.5, 4, 5.5});
  is(ref::prod(x, {1}), {2}, {6, 192});
  is(ref::max(x, {0, 1}), {}, {8});
  is(ref::min(x, {1}), {2}, {1, 4});
  is(ref::var(F({4}, {1, 2, 3, 4})), {}, {5.0 / 3});
  is(ref::std(F({4}, {1, 2, 3, 4})), {}, {std::sqrt(5.0 / 3)});
  is(ref::norm(F({2}, {3, 4})), {}, {5});
  is(ref::logsumexp(F({2}, {0, std::log(3.0)})), {}, {std::log(4.0)});
  is(ref::logsumexp(F({2}, {-INFINITY, -INFINITY})), {}, {-INFINITY});
  is(ref::logsumexp(F({2}, {1000, 1000})), {}, {1000 + std::log(2.0)});
  // Ties: the first; several axes: row-major within them.
  is(ref::argmax(F({4}, {1, 3, 3, 0})), {}, {1});
  is(ref::argmin(F({4}, {1, 0, 3, 0})), {}, {1});
  is(ref::argmax(x, {0, 1}), {}, {5});
  is(ref::argmax(F({2, 2, 2}, {0, 1, 9, 2, 3, 4, 5, 6}), {0, 2}), {2}, {3, 0});
  is(ref::any(B({2, 2}, {1, 0, 0, 0}), {1}), {2}, {1, 0});
  is(ref::all(B({2, 2}, {1, 1, 0, 1}), {1}), {2}, {1, 0});
  is(ref::reduce(x, {1}, "max"), {2}, {3, 8});
  CHECK(ref::sum(I({2}, {1, 2})).dtype() == DType::I64);
  CHECK(ref::mean(I({2}, {1, 2})).dtype() == DType::F32);
}

TEST_CASE("ref self: along an axis", "[ref]") {
  is(ref::softmax(F({2}, {0, std::log(2.0)}), 0), {2}, {1.0 / 3, 2.0 / 3});
  is(ref::log_softmax(F({2}, {0, std::log(2.0)}), 0),
     {2},
     {std::log(1.0 / 3), std::log(2.0 / 3)});
  is(ref::softmax(F({3}, {1000, 1000, -INFINITY}), 0), {3}, {0.5, 0.5, 0});
  // Over axis 0 of [2 2]: columns.
  is(ref::softmax(F({2, 2}, {0, 5, 0, 5}), 0), {2, 2}, {0.5, 0.5, 0.5, 0.5});
  is(ref::cumsum(F({2, 3}, {1, 2, 3, 4, 5, 6}), 1),
     {2, 3},
     {1, 3, 6, 4, 9, 15});
  is(ref::cumsum(F({2, 2}, {1, 2, 3, 4}), 0), {2, 2}, {1, 2, 4, 6});
  // Stable: equal values keep their order.
  auto [sv, si] = ref::sort(F({4}, {2, 1, 2, 1}), 0);
  is(sv, {4}, {1, 1, 2, 2});
  is(si, {4}, {1, 3, 0, 2});
  auto [tv, ti] = ref::topk(F({2, 3}, {1, 3, 2, 6, 5, 4}), 2, 1);
  is(tv, {2, 2}, {3, 2, 6, 5});
  is(ti, {2, 2}, {1, 2, 0, 1});
  auto [tt, tti] = ref::topk(F({4}, {1, 3, 2, 3}), 2, 0);
  is(tti, {2}, {1, 3});
  Tensor x = F({2, 3}, {3, 1, 2, 5, 9, 7});
  is(ref::gather(x, I({2, 2}, {2, 0, 1, 1}), 1), {2, 2}, {2, 3, 9, 9});
  is(ref::gather(x, I({1, 3}, {1, 0, 1}), 0), {1, 3}, {5, 1, 7});
  is(ref::scatter(x, I({2, 1}, {2, 0}), F({2, 1}, {-1, -2}), 1),
     {2, 3},
     {3, 1, -1, -2, 9, 7});
  // Duplicate indices: the position takes the sum of its values.
  is(ref::scatter(x, I({1, 2}, {0, 0}), F({1, 2}, {10, 20}), 1),
     {2, 3},
     {30, 1, 2, 5, 9, 7});
}

TEST_CASE("ref self: shape ops", "[ref]") {
  Tensor a = F({2, 2}, {1, 2, 3, 4});
  is(ref::concat({a, F({2, 1}, {5, 6})}, 1), {2, 3}, {1, 2, 5, 3, 4, 6});
  is(ref::concat({a, F({1, 2}, {5, 6})}, -2), {3, 2}, {1, 2, 3, 4, 5, 6});
  is(ref::stack({a, a}, 0), {2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  is(ref::stack({F({2}, {1, 2}), F({2}, {3, 4})}, 1), {2, 2}, {1, 3, 2, 4});
  is(ref::take(a, 1, 0), {2}, {3, 4});
  is(ref::take(a, -1, 1), {2}, {2, 4});
  is(ref::take(a, I({3}, {1, 0, -1}), 1), {2, 3}, {2, 1, 2, 4, 3, 4});
  is(ref::take(a, I({2, 1}, {1, 0}), 0), {2, 1, 2}, {3, 4, 1, 2});
  CHECK_THROWS_AS(ref::take(a, 2, 0), std::out_of_range);
  is(ref::put(a, 0, F({2}, {7, 8}), 0), {2, 2}, {7, 8, 3, 4});
  is(ref::put(a, -1, F({}, {0}), 1), {2, 2}, {1, 0, 3, 0});
  is(ref::put(F({2, 3}, {1, 2, 3, 4, 5, 6}),
              I({2}, {2, 0}),
              F({2, 2}, {10, 20, 30, 40}),
              1),
     {2, 3},
     {20, 2, 10, 40, 5, 30});
  is(ref::roll(F({5}, {0, 1, 2, 3, 4}), 2, 0), {5}, {3, 4, 0, 1, 2});
  is(ref::roll(F({5}, {0, 1, 2, 3, 4}), -1, 0), {5}, {1, 2, 3, 4, 0});
  is(ref::roll(a, 1, 0), {2, 2}, {3, 4, 1, 2});
  is(ref::pad(a, 1, 3), {2, 3}, {1, 2, 0, 3, 4, 0});
  is(ref::pad(a, 0, 3, -1), {3, 2}, {1, 2, 3, 4, -1, -1});
  is(ref::reshape(a, {4}), {4}, {1, 2, 3, 4});
  Tensor c = ref::to(F({3}, {1.7, -2.2, -0.5}), DType::I64);
  CHECK(c.dtype() == DType::I64);
  is(c, {3}, {1, -2, 0});
  is(ref::to(F({2}, {0.5, 0}), DType::Bool), {2}, {1, 0});
}

TEST_CASE("ref self: makers and random draws", "[ref]") {
  is(ref::causal(3, 4), {3, 4}, {1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0});
  is(ref::arange(3), {3}, {0, 1, 2});
  is(ref::full({2}, 2.5, DType::F32), {2}, {2.5, 2.5});
  CHECK(ref::ones({1}, DType::I32).dtype() == DType::I32);
  is(ref::tensor({F({2}, {1, 2}), F({2}, {3, 4})}, DType::F32),
     {2, 2},
     {1, 2, 3, 4});
  // Random123's known-answer vectors for Philox4x32-10 (its
  // tests/kat_vectors): the generator the draws are defined by.
  using ss::ops::philox::draw;
  CHECK(draw(0, 0, 0) ==
        ss::ops::philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(draw(~0ull, ~0ull, ~0ull) ==
        ss::ops::philox::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(draw(0x299f31d0a4093822ull,
             0x85a308d3243f6a88ull,
             0x0370734413198a2eull) ==
        ss::ops::philox::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  // rand: key 0, counter (0, 0) gives 0x6627e8d5's top 24 bits / 2^24.
  is(ref::rand({1}, DType::F64, 0, 0),
     {1},
     {double(0x6627e8d5u >> 8) / 16777216.0});
  Tensor u = ref::rand({1000}, DType::F32, 7, 3);
  double lo = 1, hi = 0, m = 0;
  for (double v : u.to_doubles()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    m += v / 1000;
  }
  CHECK(lo >= 0);
  CHECK(hi < 1);
  CHECK(m == Approx(0.5).margin(0.05));
  // An offset continues the sequence.
  CHECK(ref::rand({2}, DType::F32, 7, 3, 998).to_doubles() ==
        std::vector<double>{u.at(998), u.at(999)});
  Tensor n = ref::randn({4000}, DType::F64, 7, 3);
  double s1 = 0, s2 = 0;
  for (double v : n.to_doubles()) {
    s1 += v / 4000;
    s2 += v * v / 4000;
  }
  CHECK(s1 == Approx(0).margin(0.06));
  CHECK(s2 == Approx(1).margin(0.08));
}

TEST_CASE("ref self: nn", "[ref]") {
  // Two equal logits: ln 2; a label at a position axis [b n C].
  is(ref::cross_entropy(F({1, 2}, {0, 0}), I({1}, {0})), {}, {std::log(2.0)});
  is(ref::cross_entropy(F({1, 2, 2}, {0, 0, 0, std::log(3.0)}),
                        I({1, 2}, {1, 1})),
     {},
     {(std::log(2.0) + std::log(4.0 / 3)) / 2});
  is(ref::cross_entropy(F({1, 2}, {0, 0}), F({1, 2}, {0.25, 0.75})),
     {},
     {std::log(2.0)});
  CHECK_THROWS_AS(ref::cross_entropy(F({1, 2}, {0, 0}), I({1}, {2})),
                  std::out_of_range);
  is(ref::mse(F({3}, {1, 2, 3}), F({3}, {1, 0, 6})), {}, {13.0 / 3});
  is(ref::dropout(F({4}, {1, 2, 3, 4}), B({4}, {1, 0, 1, 0}), 0.5),
     {4},
     {2, 0, 6, 0});
  // batch_norm: channel 0 is 1 2 3 6 (mean 3, biased var 3.5, unbiased
  // 14/3), channel 1 is 0 0 4 4 (mean 2, biased 4, unbiased 16/3).
  Tensor x = F({4, 2}, {1, 0, 2, 0, 3, 4, 6, 4});
  auto bn = ref::batch_norm(x,
                            F({2}, {1, 1}),
                            F({2}, {0, 0}),
                            F({2}, {0, 0}),
                            F({2}, {1, 1}),
                            true,
                            0.0);
  is(bn.y,
     {4, 2},
     {-2 / std::sqrt(3.5),
      -1,
      -1 / std::sqrt(3.5),
      -1,
      0,
      1,
      3 / std::sqrt(3.5),
      1});
  is(bn.running_mean, {2}, {0.3, 0.2});
  is(bn.running_var, {2}, {0.9 + 0.1 * 14 / 3, 0.9 + 0.1 * 16 / 3});
  auto ev = ref::batch_norm(x,
                            F({2}, {2, 1}),
                            F({2}, {1, 0}),
                            F({2}, {1, 0}),
                            F({2}, {4, 1}),
                            false,
                            0.0);
  is(ev.y, {4, 2}, {1, 0, 2, 0, 3, 4, 6, 4});  // (x - 1) / 2 * 2 + 1 = x
  is(ev.running_var, {2}, {4, 1});
  // layer_norm of 1 2 3 with eps 0: (-1, 0, 1) / sqrt(2/3).
  double r = std::sqrt(1.5);
  is(ref::layer_norm(F({1, 3}, {1, 2, 3}), {1}, 0.0), {1, 3}, {-r, 0, r});
  is(ref::layer_norm(
         F({1, 3}, {1, 2, 3}), {-1}, 0.0, F({3}, {1, 2, 3}), F({3}, {0, 1, 0})),
     {1, 3},
     {-r, 1, 3 * r});
  // Over axis 0, g laid along it.
  is(ref::layer_norm(
         F({2, 1}, {1, 3}), {0}, 0.0, F({2}, {1, 2}), F({2}, {0, 0})),
     {2, 1},
     {-1, 2});
  is(ref::rms_norm(F({1, 2}, {3, 4}), {1}, 0.0),
     {1, 2},
     {3 / std::sqrt(12.5), 4 / std::sqrt(12.5)});
  is(ref::embedding(F({3, 2}, {0, 1, 10, 11, 20, 21}), I({2}, {2, 0})),
     {2, 2},
     {20, 21, 0, 1});
  // conv2d: a 3x3 ones kernel over 1..9 with padding 1: sums of the
  // neighbourhoods; stride 2 keeps the corners.
  Tensor img = F({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor k = F({1, 1, 3, 3}, std::vector<double>(9, 1));
  is(ref::conv2d(img, k, 1, 1),
     {1, 1, 3, 3},
     {12, 21, 16, 27, 45, 33, 24, 39, 28});
  is(ref::conv2d(img, k, 2, 1), {1, 1, 2, 2}, {12, 16, 24, 28});
  is(ref::conv2d(img, F({1, 1, 1, 2}, {1, -1})),
     {1, 1, 3, 2},
     {-1, -1, -1, -1, -1, -1});
  Tensor p =
      F({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  is(ref::max_pool2d(p, 2), {1, 1, 2, 2}, {6, 8, 14, 16});
  is(ref::avg_pool2d(p, 2), {1, 1, 2, 2}, {3.5, 5.5, 11.5, 13.5});
  is(ref::max_pool2d(F({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), 2),
     {1, 1, 1},
     {5});
  // Overlapping windows (stride 1) and padding: max ignores the padding,
  // the mean counts it as zeros.
  is(ref::max_pool2d(img, 2, 1), {1, 1, 2, 2}, {5, 6, 8, 9});
  is(ref::avg_pool2d(img, 2, 2, 1), {1, 1, 2, 2}, {0.25, 1.25, 2.75, 7});
  is(ref::max_pool2d(img, 2, 2, 1), {1, 1, 2, 2}, {1, 3, 7, 9});
  // conv2d with dilation 2: the 2x2 ones kernel reads the corners.
  is(ref::conv2d(img, F({1, 1, 2, 2}, {1, 1, 1, 1}), 1, 0, 2),
     {1, 1, 1, 1},
     {20});
  // Two groups: output 0 sees channel 0 (ones), output 1 channel 1 (twos).
  Tensor two = F({1, 2, 1, 1}, {1, 2});
  is(ref::conv2d(two, F({2, 1, 1, 1}, {3, 5}), 1, 0, 1, 2),
     {1, 2, 1, 1},
     {3, 10});
  // conv1d, dilation 2: [1 2 3 4] with [1 1] two apart: 1 + 3, 2 + 4.
  is(ref::conv1d(F({1, 1, 4}, {1, 2, 3, 4}), F({1, 1, 2}, {1, 1}), 1, 0, 2),
     {1, 1, 2},
     {4, 6});
  // conv_transpose2d, stride 2 with a 2x2 ones kernel: each value fills
  // its own 2x2 block.
  is(ref::conv_transpose2d(
         F({1, 1, 2, 2}, {1, 2, 3, 4}), F({1, 1, 2, 2}, {1, 1, 1, 1}), 2),
     {1, 1, 4, 4},
     {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // adaptive_avg_pool2d of 3x3 to 2x2: windows [0, 2) and [1, 3).
  is(ref::adaptive_avg_pool2d(img, 2), {1, 1, 2, 2}, {3, 4, 6, 7});
}

namespace {

// [got]'s values are [want]'s, NaN where it is NaN (torch's and numpy's
// values, printed by /usr/bin/python3 with torch 1.13).
void same(const ss::ops::Tensor& got, const std::vector<double>& want) {
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i]))
      CHECK(std::isnan(g[i]));
    else
      CHECK(g[i] == Approx(want[i]).margin(1e-12).epsilon(1e-12));
  }
}

}  // namespace

// The runtime fuzzer's oracle found these (Note [A runtime fuzzer's
// oracle] in tests/fuzz/run_ref.cpp): the reference disagreed with the op,
// and torch (numpy for sign) with the reference.
TEST_CASE("ref self: NaN and infinities as torch gives them", "[ref]") {
  const double nan = NAN, inf = INFINITY;
  // torch.relu(tensor([nan, inf, -inf, -0.0])): NaN is kept.
  same(ref::relu(F({4}, {nan, inf, -inf, -0.0})), {nan, inf, 0, 0});
  // numpy.sign(nan) is nan (torch 1.13's CPU sign gives 0; the op's
  // contract is numpy's: elementwise.def).
  same(ref::sign(F({3}, {nan, -0.0, 2})), {nan, 0, 1});
  // torch.div(-inf, [0, 1, 2], rounding_mode="floor"): [-inf, nan, nan],
  // as Python's -inf // 1.0 (fmod(-inf, 1) is NaN).
  same(ref::floordiv(F({}, {-inf}), F({3}, {0, 1, 2})), {-inf, nan, nan});
  same(ref::floordiv(F({2}, {inf, 7}), F({2}, {9007199254740992.0, -2})),
       {nan, -4});
  // F.kl_div([0, 1, 2, inf], [-1, 0, 0.5, 0], reduction="none"): xlogy's
  // t log t is NaN for t < 0, and 0 · inf is NaN.
  same(ref::kl_div(
           F({4}, {0, 1, 2, inf}), F({4}, {-1, 0, 0.5, 0}), "none", false),
       {nan, 0, 0.5 * (std::log(0.5) - 2), nan});
  // torch.sort, topk, argmax and argmin of [1, nan, 3, nan]: NaN above
  // every number, the first NaN the extreme.
  const auto x = F({4}, {1, nan, 3, nan});
  auto [v, i] = ref::sort(x, 0);
  same(v, {1, 3, nan, nan});
  same(i, {0, 2, 1, 3});
  auto [tv, ti] = ref::topk(x, 2, 0);
  same(tv, {nan, nan});
  same(ti, {1, 3});
  same(ref::argmax(x), {1});
  same(ref::argmin(x), {1});
  // torch.roll(tensor([0, 1, 2, 3, 4]), 2**63 - 1): a shift of 2 (2^63 - 1
  // is 2 mod 5), not p + k overflowing.
  same(ref::roll(F({5}, {0, 1, 2, 3, 4}), 9223372036854775807, 0),
       {3, 4, 0, 1, 2});
  // F.max_pool2d of [[1, nan, 3], [4, 5, 6]] by 2, stride 1: a window
  // holding a NaN is NaN, wherever the NaN is in it.
  same(ref::max_pool2d(F({1, 2, 3}, {1, nan, 3, 4, 5, 6}), 2, 1, 0),
       {nan, nan});
  same(ref::max_pool2d(F({1, 2, 2}, {nan, nan, nan, nan}), 2, 0, 0), {nan});
  // F.binary_cross_entropy_with_logits(t, t, reduction="none") of t = [nan,
  // inf, -inf, -0.0, 2.0] in f64, without and with pos_weight=3.0.
  const auto t = F({5}, {nan, inf, -inf, -0.0, 2.0});
  same(ref::binary_cross_entropy_with_logits(
           t, t, ss::ops::Tensor(), ss::ops::Tensor(), "none"),
       {nan, -inf, nan, 0.6931471805599453, -1.8730719889570273});
  same(ref::binary_cross_entropy_with_logits(
           t, t, ss::ops::Tensor(), F({5}, {3, 3, 3, 3, 3}), "none"),
       {nan, nan, nan, 0.6931471805599453, -1.365359944785137});
}
