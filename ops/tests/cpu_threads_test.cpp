// Intra-op threads (Note [Intra-op threads] in ops/cpu/cpu_threads.cpp):
// parallel_for covers each index once from any number of callers, and
// the threaded kernels give, on 2 threads, what the naive loops give
// (binary and where over broadcasts, against bidx) and bit for bit what
// they give on 1 thread (the fused kernels and vector functions, whose
// values fused_test and cpu_vmath_test check against ref/ and libm).
// The tensors are large enough (>= 2 x 32768 elements) to be split.

#include "ops/cpu/cpu_threads.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "ops/api.h"
#include "ops/cpu/cpu_backend.h"
#include "ops/tests/cpu_test_util.h"

using namespace cpu_test;

namespace {

/// Sets the thread count for a scope and restores the one before.
struct Threads {
  explicit Threads(int n) : before(cpu_threads()) { set_cpu_threads(n); }
  ~Threads() { set_cpu_threads(before); }
  int before;
};

}  // namespace

TEST_CASE("parallel_for covers every index once, from several callers",
          "[cpu]") {
  Threads two(2);
  const int64_t n = 1 << 20;
  std::vector<std::atomic<int>> hits(n);
  auto mark = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  };
  ss::ops::cpu::parallel_for(n, 1000, mark);
  // Four callers at once: one gets the pool, the others run inline.
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] { ss::ops::cpu::parallel_for(n, 1000, mark); });
  for (auto& t : callers) t.join();
  int64_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 5;
  CHECK(wrong == 0);
}

TEST_CASE("a kernel's error on a split tensor is thrown on the caller",
          "[cpu]") {
  Threads two(2);
  // An integer division by zero at the end, so the helper's range meets
  // it: thrown once on the caller, and the pool works afterwards.
  std::vector<double> ones(200000, 1.0), den(200000, 1.0);
  den.back() = 0;
  Tensor a = T({200000}, ones, DType::I64), b = T({200000}, den, DType::I64);
  for (int round = 0; round < 2; ++round)
    CHECK_THROWS_WITH(B().binary(BinaryOp::FloorDiv, a, b),
                      Catch::Contains("integer division by zero"));
  Tensor ok = B().binary(BinaryOp::FloorDiv, a, a);
  CHECK(ok.to_doubles() == ones);
}

TEST_CASE("threaded binary and where match the naive loops", "[cpu]") {
  Threads two(2);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{200, 401}, {200, 401}},    // same layout
      {{200, 401}, {401}},         // row
      {{200, 401}, {200, 1}},      // column
      {{5, 4, 64, 64}, {64, 64}},  // the attention mask
      {{200, 401}, {}}};           // scalar
  for (auto& [sa, sb] : cases) {
    INFO(shape_string(sa) << " " << shape_string(sb));
    Tensor a = rnd(sa, DType::F32, 21), b = rnd(sb, DType::F32, 22);
    std::vector<double> va = a.to_doubles(), vb = b.to_doubles(), add, sel;
    Tensor c = B().binary(BinaryOp::Gt, b, T({}, {0.0}, DType::F32));
    std::vector<double> vc = c.to_doubles();
    for (int64_t i = 0; i < numel_of(sa); ++i) {
      double x = va[i], y = vb[bidx(sb, sa, i)];
      add.push_back(x + y);
      sel.push_back(vc[bidx(sb, sa, i)] != 0 ? y : x);
    }
    check_close(B().binary(BinaryOp::Add, a, b), sa, add, 0);
    check_close(B().where(c, b, a), sa, sel, 0);
  }
}

// Note [Reductions on threads]: the paths that split (rows, columns by
// output, one long row and few columns by fixed chunks) against a naive
// loop in double. Tolerance: 1e-5 of the sum of |x| (f32 columns
// accumulate in f32: ~200 roundings of 6e-8 each at worst; rows and
// whole sums accumulate in double); max and min exactly.
TEST_CASE("threaded reductions match the naive loops", "[cpu]") {
  Threads two(2);
  const Shape s = {200, 401};
  Tensor x = rnd(s, DType::F32, 27);
  std::vector<double> v = x.to_doubles();
  for (std::vector<int> axes : {std::vector<int>{0, 1}, {0}, {1}}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
      bool rows = axes == std::vector<int>{1}, all = axes.size() == 2;
      INFO("op " << static_cast<int>(op)
                 << (all    ? " every axis"
                     : rows ? " the last axis"
                            : " axis 0"));
      int64_t outs = all ? 1 : rows ? s[0] : s[1];
      int64_t len = all ? numel_of(s) : rows ? s[1] : s[0];
      std::vector<double> want(outs), mag(outs, 0.0);
      for (int64_t o = 0; o < outs; ++o) {
        double acc = op == ReduceOp::Sum   ? 0
                     : op == ReduceOp::Max ? -1e300
                                           : 1e300;
        for (int64_t j = 0; j < len; ++j) {
          double e = all ? v[j] : rows ? v[o * s[1] + j] : v[j * s[1] + o];
          acc = op == ReduceOp::Sum   ? acc + e
                : op == ReduceOp::Max ? std::max(acc, e)
                                      : std::min(acc, e);
          mag[o] += std::abs(e);
        }
        want[o] = acc;
      }
      std::vector<double> got = B().reduce(op, x, axes, false).to_doubles();
      REQUIRE(got.size() == want.size());
      for (int64_t o = 0; o < outs; ++o) {
        INFO("output " << o);
        CHECK(std::abs(got[o] - want[o]) <=
              (op == ReduceOp::Sum ? 1e-5 * mag[o] : 0.0));
      }
    }
  }
}

TEST_CASE("threaded kernels give the one-thread results bit for bit", "[cpu]") {
  Tensor x = rnd({256, 515}, DType::F32, 23),
         g = rnd({256, 515}, DType::F32, 24);
  Tensor xd = B().cast(x, DType::F64), gd = B().cast(g, DType::F64);
  Tensor gamma = rnd({515}, DType::F32, 25), beta = rnd({515}, DType::F32, 26);
  auto run = [&] {
    std::vector<Tensor> r = {
        B().unary(UnaryOp::Exp, x),
        B().unary(UnaryOp::Abs, xd),
        B().softmax_last(x, false),
        B().softmax_last_backward(g, B().softmax_last(x, true), true),
        B().gelu(x, false),
        B().gelu_backward(gd, xd, true)};
    // Reductions (Note [Reductions on threads]): every axis (one long
    // row, by chunks), the first (few columns over many rows, by chunks),
    // the last (rows), in f32 and f64.
    for (const Tensor& t : {x, xd})
      for (std::vector<int> axes : {std::vector<int>{0, 1}, {0}, {1}}) {
        r.push_back(B().reduce(ReduceOp::Sum, t, axes, false));
        r.push_back(B().reduce(ReduceOp::Max, t, axes, false));
      }
    // layer_norm with and without its affine part and rms_norm, forward
    // and VJP; gamma's and beta's gradients sum over rows (Note [Norm
    // gradients by fixed chunks]).
    for (bool centered : {true, false})
      for (bool affine : {true, false}) {
        Tensor gm = affine ? gamma : Tensor(), bt = affine ? beta : Tensor();
        auto [y, mean, rstd] = B().norm_last(x, 1e-5, centered, gm, bt);
        auto [dx, dg, db] =
            B().norm_last_backward(g, x, mean, rstd, centered, gm);
        for (const Tensor& t : {y, mean, rstd, dx, dg, db})
          if (t.defined()) r.push_back(t);
      }
    return r;
  };
  std::vector<Tensor> one, two;
  {
    Threads t(1);
    one = run();
  }
  {
    Threads t(2);
    two = run();
  }
  for (size_t i = 0; i < one.size(); ++i) {
    INFO("kernel " << i);
    CHECK(bitwise_equal(one[i], two[i]));
  }
}
