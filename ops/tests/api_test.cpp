// The differentiable API's forward values (ops/api.h): one small,
// hand-computed case per function, dtype promotion, broadcasting, negative
// axes and the OpErrors for bad arguments. Gradients: grad_test.cpp.

#include "ops/api.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

namespace {

using namespace ss::ops;
using ss::types::DType;
constexpr double kPi = std::numbers::pi;

Tensor T(const Shape& s, const std::vector<double>& v, DType d = DType::F32) {
  return Tensor::from_doubles(s, v, d);
}

void check(const Tensor& t,
           const Shape& s,
           const std::vector<double>& v,
           DType d,
           double eps = 1e-6) {
  INFO("shape " << shape_string(t.shape()) << " dtype "
                << ss::types::dtype_name(t.dtype()));
  REQUIRE(t.shape() == s);
  REQUIRE(t.dtype() == d);
  std::vector<double> got = t.to_doubles();
  REQUIRE(got.size() == v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(v[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(got[i] == Approx(v[i]).epsilon(eps).margin(eps));
  }
}

// The message of the OpError [f] throws (and its kind).
std::string op_error(const std::function<void()>& f,
                     OpError::Kind kind = OpError::Kind::Shape) {
  try {
    f();
  } catch (const OpError& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("no OpError");
  return "";
}

}  // namespace

TEST_CASE("api: makers", "[api]") {
  Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6}, DType::F64);
  check(scalar_like(2.5, x), {}, {2.5}, DType::F64);
  check(zeros_like(x), {2, 3}, {0, 0, 0, 0, 0, 0}, DType::F64);
  check(ones_like(x), {2, 3}, {1, 1, 1, 1, 1, 1}, DType::F64);
  check(arange(4), {4}, {0, 1, 2, 3}, DType::I64);
  check(arange(0), {0}, {}, DType::I64);

  Tensor u = random_uniform({1000}, DType::F32, 7, 0);
  REQUIRE(u.shape() == Shape{1000});
  double s = 0;
  for (double v : u.to_doubles()) {
    CHECK(v >= 0);
    CHECK(v < 1);
    s += v;
  }
  CHECK(s / 1000 == Approx(0.5).margin(0.05));
  // Counter-based: same key, stream and offset give the same draws; an
  // offset shifts them.
  CHECK(random_uniform({8}, DType::F32, 7, 0).to_doubles() ==
        random_uniform({8}, DType::F32, 7, 0).to_doubles());
  CHECK(random_uniform({4}, DType::F32, 7, 0, 4).to_doubles() ==
        slice(random_uniform({8}, DType::F32, 7, 0), 0, 4, 8).to_doubles());
  CHECK(random_uniform({8}, DType::F32, 7, 1).to_doubles() !=
        random_uniform({8}, DType::F32, 7, 0).to_doubles());
  Tensor n = random_normal({2000}, DType::F64, 3, 0);
  CHECK(n.dtype() == DType::F64);
  CHECK(mean(n).item() == Approx(0).margin(0.1));
  CHECK(mean(mul(n, n)).item() == Approx(1).margin(0.1));
}

TEST_CASE("api: unary functions", "[api]") {
  struct Row {
    const char* name;
    Tensor (*f)(const Tensor&);
    std::vector<double> in, out;
  };
  double e = std::exp(1.0);
  const Row rows[] = {
      {"neg", neg, {1, -2, 0}, {-1, 2, 0}},
      {"abs", abs, {1, -2, 0}, {1, 2, 0}},
      {"sign", sign, {3, -2, 0}, {1, -1, 0}},
      {"exp", exp, {0, 1, -1}, {1, e, 1 / e}},
      {"log", log, {1, e, 1 / e}, {0, 1, -1}},
      {"log1p", log1p, {0, e - 1, 1e-10}, {0, 1, 1e-10}},
      {"sqrt", sqrt, {0, 4, 2.25}, {0, 2, 1.5}},
      {"rsqrt", rsqrt, {4, 0.25, 1}, {0.5, 2, 1}},
      {"sin", sin, {0, kPi / 2, -kPi / 2}, {0, 1, -1}},
      {"cos", cos, {0, kPi, kPi / 2}, {1, -1, 0}},
      {"tanh", tanh, {0, 1, -1}, {0, std::tanh(1.0), -std::tanh(1.0)}},
      {"sigmoid",
       sigmoid,
       {0, 2, -2},
       {0.5, 1 / (1 + std::exp(-2.0)), 1 / (1 + std::exp(2.0))}},
      {"relu", relu, {1.5, -2, 0}, {1.5, 0, 0}},
      {"erf", erf, {0, 1, -0.5}, {0, std::erf(1.0), std::erf(-0.5)}},
      {"floor", floor, {1.5, -1.5, 2}, {1, -2, 2}},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      check(r.f(T({3}, r.in, DType::F64)), {3}, r.out, DType::F64, 1e-12);
      check(r.f(T({3}, r.in)), {3}, r.out, DType::F32, 1e-6);
    }
  }
  SECTION("ints") {
    Tensor i = T({3}, {-2, 0, 3}, DType::I32);
    check(neg(i), {3}, {2, 0, -3}, DType::I32);
    check(abs(i), {3}, {2, 0, 3}, DType::I32);
    check(relu(i), {3}, {0, 0, 3}, DType::I32);
    check(floor(i), {3}, {-2, 0, 3}, DType::I32);
    // Float functions of ints compute in f32.
    check(exp(T({1}, {0}, DType::I64)), {1}, {1}, DType::F32);
    check(sqrt(T({1}, {9}, DType::I32)), {1}, {3}, DType::F32);
  }
  SECTION("isnan, isfinite, logical_not") {
    double nan = std::numeric_limits<double>::quiet_NaN();
    double inf = std::numeric_limits<double>::infinity();
    Tensor x = T({4}, {1, nan, inf, -inf});
    check(isnan(x), {4}, {0, 1, 0, 0}, DType::Bool);
    check(isfinite(x), {4}, {1, 0, 0, 0}, DType::Bool);
    check(isnan(T({2}, {1, 2}, DType::I64)), {2}, {0, 0}, DType::Bool);
    check(isfinite(T({2}, {1, 2}, DType::I64)), {2}, {1, 1}, DType::Bool);
    check(logical_not(T({2}, {1, 0}, DType::Bool)), {2}, {0, 1}, DType::Bool);
  }
}

TEST_CASE("api: binary ops and broadcasting", "[api]") {
  Tensor a = T({2, 1}, {1, 2});
  Tensor b = T({3}, {10, 20, 30});
  check(add(a, b), {2, 3}, {11, 21, 31, 12, 22, 32}, DType::F32);
  check(sub(a, b), {2, 3}, {-9, -19, -29, -8, -18, -28}, DType::F32);
  check(mul(a, b), {2, 3}, {10, 20, 30, 20, 40, 60}, DType::F32);
  check(div(b, a), {2, 3}, {10, 20, 30, 5, 10, 15}, DType::F32);
  check(pow(T({3}, {2, 3, 4}), T({}, {2})), {3}, {4, 9, 16}, DType::F32);
  check(pow(T({2}, {4, 9}), T({2}, {0.5, -1})), {2}, {2, 1.0 / 9}, DType::F32);
  check(maximum(T({3}, {1, 5, 3}), T({3}, {2, 4, 3})),
        {3},
        {2, 5, 3},
        DType::F32);
  check(minimum(T({3}, {1, 5, 3}), T({3}, {2, 4, 3})),
        {3},
        {1, 4, 3},
        DType::F32);
  // Floored, as Python.
  Tensor p = T({4}, {7, -7, 7, -7}, DType::I64);
  Tensor q = T({4}, {2, 2, -2, -2}, DType::I64);
  check(floordiv(p, q), {4}, {3, -4, -4, 3}, DType::I64);
  check(mod(p, q), {4}, {1, 1, -1, -1}, DType::I64);
  check(mod(T({2}, {5.5, -5.5}), T({}, {2})), {2}, {1.5, 0.5}, DType::F32);

  Tensor x = T({3}, {1, 2, 3}), y = T({3}, {3, 2, 1});
  check(eq(x, y), {3}, {0, 1, 0}, DType::Bool);
  check(ne(x, y), {3}, {1, 0, 1}, DType::Bool);
  check(lt(x, y), {3}, {1, 0, 0}, DType::Bool);
  check(le(x, y), {3}, {1, 1, 0}, DType::Bool);
  check(gt(x, y), {3}, {0, 0, 1}, DType::Bool);
  check(ge(x, y), {3}, {0, 1, 1}, DType::Bool);
  Tensor t = T({4}, {1, 1, 0, 0}, DType::Bool),
         f = T({4}, {1, 0, 1, 0}, DType::Bool);
  check(logical_and(t, f), {4}, {1, 0, 0, 0}, DType::Bool);
  check(logical_or(t, f), {4}, {1, 1, 1, 0}, DType::Bool);

  check(where(T({2, 1}, {1, 0}, DType::Bool), T({3}, {1, 2, 3}), T({}, {-1})),
        {2, 3},
        {1, 2, 3, -1, -1, -1},
        DType::F32);

  std::string msg = op_error([&] {
    add(T({2, 3}, {1, 2, 3, 4, 5, 6}), T({2}, {1, 2}));
  });
  CHECK(msg == "add: shapes [2 3] and [2] do not broadcast");
}

TEST_CASE("api: dtype promotion", "[api]") {
  Tensor i32 = T({2}, {1, 2}, DType::I32), i64 = T({2}, {3, 4}, DType::I64);
  check(add(i32, i64), {2}, {4, 6}, DType::I64);
  Tensor h = T({2}, {1.5, 2}, DType::BF16), f = T({2}, {1, 1});
  check(add(h, f), {2}, {2.5, 3}, DType::F32);
  check(add(h, T({2}, {1, 1}, DType::F16)), {2}, {2.5, 3}, DType::F32);
  check(mul(f, T({2}, {2, 2}, DType::F64)), {2}, {2, 2}, DType::F64);
  check(add(i64, f), {2}, {4, 5}, DType::F32);
  // True division of ints gives f32; floor division keeps ints.
  check(div(T({2}, {1, 7}, DType::I64), T({2}, {2, 2}, DType::I32)),
        {2},
        {0.5, 3.5},
        DType::F32);
  check(floordiv(T({1}, {7}, DType::I32), T({1}, {2}, DType::I32)),
        {1},
        {3},
        DType::I32);
  // Bool arithmetic computes in i64; bool + float is float.
  Tensor bt = T({2}, {1, 0}, DType::Bool);
  check(add(bt, bt), {2}, {2, 0}, DType::I64);
  check(add(bt, f), {2}, {2, 1}, DType::F32);
  // maximum and minimum of two bools are bools (torch.maximum: or, and), as
  // the checker types them; they were i64, computed as arithmetic.
  Tensor bq = T({2}, {0, 0}, DType::Bool);
  check(maximum(bt, bq), {2}, {1, 0}, DType::Bool);
  check(minimum(bt, T({2}, {1, 1}, DType::Bool)), {2}, {1, 0}, DType::Bool);
  check(maximum(bt, T({2}, {0, 3}, DType::I32)), {2}, {1, 3}, DType::I32);
  check(eq(i32, T({2}, {1, 5}, DType::F32)), {2}, {1, 0}, DType::Bool);
  // Means of ints and bools are f32; sums of them i64.
  check(mean(T({4}, {1, 0, 1, 1}, DType::Bool)), {}, {0.75}, DType::F32);
  check(mean(T({2}, {1, 2}, DType::I64)), {}, {1.5}, DType::F32);
  check(sum(T({3}, {1, 0, 1}, DType::Bool)), {}, {2}, DType::I64);
  check(sum(T({2}, {1, 2}, DType::I32)), {}, {3}, DType::I64);
  check(cast(T({3}, {1.7, -1.7, 0}), DType::I64), {3}, {1, -1, 0}, DType::I64);
  check(
      cast(T({2}, {2, 0}, DType::I32), DType::Bool), {2}, {1, 0}, DType::Bool);
}

TEST_CASE("api: reductions", "[api]") {
  Tensor x = T({2, 3}, {1, 5, 3, 4, 2, 6});
  check(sum(x), {}, {21}, DType::F32);
  check(sum(x, {0}), {3}, {5, 7, 9}, DType::F32);
  check(sum(x, {-1}), {2}, {9, 12}, DType::F32);
  check(sum(x, {1}, true), {2, 1}, {9, 12}, DType::F32);
  check(sum(x, {1, 0}, true), {1, 1}, {21}, DType::F32);
  check(mean(x, {0}), {3}, {2.5, 3.5, 4.5}, DType::F32);
  check(max(x, {1}), {2}, {5, 6}, DType::F32);
  check(min(x, {0}, true), {1, 3}, {1, 2, 3}, DType::F32);
  check(max(x), {}, {6}, DType::F32);
  check(prod(x, {1}), {2}, {15, 48}, DType::F32);
  check(prod(T({2}, {3, 4}, DType::I32)), {}, {12}, DType::I64);
  Tensor bl = T({2, 2}, {1, 0, 0, 0}, DType::Bool);
  check(any(bl, {1}), {2}, {1, 0}, DType::Bool);
  check(all(bl, {0}), {2}, {0, 0}, DType::Bool);
  check(all(T({2}, {1, 2})), {}, {1}, DType::Bool);
  check(argmax(x, 1), {2}, {1, 2}, DType::I64);
  check(argmin(x, -2, true), {1, 3}, {0, 1, 0}, DType::I64);
  // First index of ties.
  check(argmax(T({4}, {1, 3, 3, 0}), 0), {}, {1}, DType::I64);
  // A 0-d tensor reduces to itself.
  check(sum(T({}, {4})), {}, {4}, DType::F32);

  CHECK(op_error([&] { sum(x, {2}); }) ==
        "sum: axis 2 is out of range for a rank-2 tensor");
  CHECK(op_error([&] { sum(x, {1, -1}); }) == "sum: axis 1 is given twice");
  op_error([&] { max(T({0}, {})); }, OpError::Kind::Value);
  CHECK(normalize_axis(-1, 3) == 2);
  CHECK_THROWS_AS(normalize_axis(3, 3), OpError);
}

TEST_CASE("api: shape ops", "[api]") {
  Tensor x = T({2, 3}, {0, 1, 2, 3, 4, 5});
  check(reshape(x, {3, -1}), {3, 2}, {0, 1, 2, 3, 4, 5}, DType::F32);
  CHECK(op_error([&] { reshape(x, {4}); }) ==
        "reshape: cannot reshape [2 3] (6 elements) to [4]");
  check(permute(x, {1, 0}), {3, 2}, {0, 3, 1, 4, 2, 5}, DType::F32);
  check(permute(x, {-1, -2}), {3, 2}, {0, 3, 1, 4, 2, 5}, DType::F32);
  op_error([&] { permute(x, {0, 0}); });
  Tensor y = T({1, 2, 2}, {1, 2, 3, 4});
  check(transpose_last(y), {1, 2, 2}, {1, 3, 2, 4}, DType::F32);
  check(broadcast_to(T({2, 1}, {1, 2}), {3, 2, 2}),
        {3, 2, 2},
        {1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2},
        DType::F32);
  op_error([&] { broadcast_to(x, {3, 3}); });
  check(sum_to(x, {3}), {3}, {3, 5, 7}, DType::F32);
  check(sum_to(x, {2, 1}), {2, 1}, {3, 12}, DType::F32);
  check(sum_to(x, {}), {}, {15}, DType::F32);
  op_error([&] { sum_to(x, {2}); });
  check(unsqueeze(x, -1), {2, 3, 1}, {0, 1, 2, 3, 4, 5}, DType::F32);
  check(unsqueeze(x, 0), {1, 2, 3}, {0, 1, 2, 3, 4, 5}, DType::F32);
  check(squeeze(T({2, 1}, {1, 2}), -1), {2}, {1, 2}, DType::F32);
  op_error([&] { squeeze(x, 0); });
  check(slice(x, 1, 1, 3), {2, 2}, {1, 2, 4, 5}, DType::F32);
  check(slice(x, -1, 0, 3, 2), {2, 2}, {0, 2, 3, 5}, DType::F32);
  check(slice(x, 1, -2, 100), {2, 2}, {1, 2, 4, 5}, DType::F32);
  check(slice(x, 1, 2, 1), {2, 0}, {}, DType::F32);
  check(concat({x, T({2, 1}, {9, 8}, DType::I64)}, -1),
        {2, 4},
        {0, 1, 2, 9, 3, 4, 5, 8},
        DType::F32);
  CHECK(op_error([&] {
          concat({x, T({3, 1}, {9, 8, 7})}, 1);
        }) == "concat: shapes [2 3] and [3 1] differ outside axis 1");
  check(stack({T({2}, {1, 2}), T({2}, {3, 4})}, 1),
        {2, 2},
        {1, 3, 2, 4},
        DType::F32);
  check(stack({T({2}, {1, 2}), T({2}, {3, 4})}, 0),
        {2, 2},
        {1, 2, 3, 4},
        DType::F32);
  check(pad(T({2}, {1, 2}), 0, 1, 2, -1), {5}, {-1, 1, 2, -1, -1}, DType::F32);
  check(pad(T({1, 2}, {1, 2}), -1, 1, 0), {1, 3}, {0, 1, 2}, DType::F32);
}

TEST_CASE("api: indexing, cumsum, sort", "[api]") {
  Tensor x = T({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor idx = T({2, 2}, {2, 0, 1, 1}, DType::I64);
  check(take(x, idx, 1), {2, 2, 2}, {2, 0, 1, 1, 5, 3, 4, 4}, DType::F32);
  check(take(x, T({1}, {1}, DType::I64), 0), {1, 3}, {3, 4, 5}, DType::F32);
  CHECK(op_error(
            [&] {
              take(x, T({2}, {0, 3}, DType::I64), 1);
            },
            OpError::Kind::Value) ==
        "take: index 3 is out of range for an axis of size 3");
  // Negative indices count from the end, as an int index does.
  check(take(x, T({1}, {-1}, DType::I64), 1), {2, 1}, {2, 5}, DType::F32);
  CHECK(op_error([&] { take(x, T({1}, {-4}, DType::I64), 1); },
                 OpError::Kind::Value) ==
        "take: index -4 is out of range for an axis of size 3");
  op_error([&] { take(x, T({1}, {0}), 1); }, OpError::Kind::Value);
  check(take_one(x, 1, 0), {3}, {3, 4, 5}, DType::F32);
  check(take_one(x, -1, 1), {2}, {2, 5}, DType::F32);
  CHECK(op_error([&] { take_one(x, 12, 1); }, OpError::Kind::Value) ==
        "take_one: index 12 is out of range for an axis of size 3");

  Tensor gi = T({2, 2}, {2, 0, 1, 1}, DType::I64);
  check(gather(x, gi, 1), {2, 2}, {2, 0, 4, 4}, DType::F32);
  op_error(
      [&] {
        gather(x, T({2, 1}, {3, 0}, DType::I64), 1);
      },
      OpError::Kind::Value);
  op_error([&] { gather(x, T({2}, {0, 0}, DType::I64), 1); });
  // Repeated indices add up.
  check(scatter_add(x, gi, T({2, 2}, {10, 20, 30, 40}), 1),
        {2, 3},
        {20, 1, 12, 3, 74, 5},
        DType::F32);

  check(cumsum(x, 1), {2, 3}, {0, 1, 3, 3, 7, 12}, DType::F32);
  check(cumsum(x, 0), {2, 3}, {0, 1, 2, 3, 5, 7}, DType::F32);
  check(cumsum(T({3}, {1, 1, 0}, DType::Bool), 0), {3}, {1, 2, 2}, DType::I64);

  auto [v, i] = sort(T({2, 3}, {3, 1, 2, 0, 5, 5}), -1);
  check(v, {2, 3}, {1, 2, 3, 0, 5, 5}, DType::F32);
  check(i, {2, 3}, {1, 2, 0, 0, 1, 2}, DType::I64);
  auto [vd, id] = sort(T({4}, {1, 3, 1, 2}), 0, true);
  check(vd, {4}, {3, 2, 1, 1}, DType::F32);
  check(id, {4}, {1, 3, 0, 2}, DType::I64);  // stable
}

TEST_CASE("api: matmul and conv2d", "[api]") {
  Tensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = T({3, 2}, {1, 0, 0, 1, 1, 1});
  check(matmul(a, b), {2, 2}, {4, 5, 10, 11}, DType::F32);
  Tensor v = T({3}, {1, 1, 2});
  check(matmul(a, v), {2}, {9, 21}, DType::F32);
  check(matmul(T({2}, {1, 2}), a), {3}, {9, 12, 15}, DType::F32);
  check(matmul(v, v), {}, {6}, DType::F32);
  // Batch axes broadcast.
  Tensor bb = T({2, 1, 3, 1}, {1, 0, 0, 0, 0, 1});
  check(matmul(a, bb), {2, 1, 2, 1}, {1, 4, 3, 6}, DType::F32);
  check(matmul(T({2}, {1, 2}, DType::I64), T({2}, {3, 4}, DType::I32)),
        {},
        {11},
        DType::I64);
  CHECK(op_error([&] { matmul(a, a); }) ==
        "matmul: inner dims differ: [2 3] vs [2 3]");
  op_error([&] { matmul(T({}, {1}), a); });
  op_error([&] {
    matmul(T({2, 2, 3}, std::vector<double>(12, 1)),
           T({3, 3, 1}, std::vector<double>(9, 1)));
  });

  // 1 channel, 3x3 input, 2x2 kernel of ones: sums of 2x2 windows.
  Tensor x = T({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor k = T({1, 1, 2, 2}, {1, 1, 1, 1});
  check(conv2d(x, k), {1, 1, 2, 2}, {12, 16, 24, 28}, DType::F32);
  check(conv2d(x, k, ConvShape::square(2, 1)),
        {1, 1, 2, 2},
        {1, 5, 11, 28},
        DType::F32);
  op_error([&] { conv2d(x, T({1, 2, 1, 1}, {1, 1})); });
  op_error([&] { conv2d(x, T({1, 1, 4, 4}, std::vector<double>(16, 1))); });
}

TEST_CASE("api: stop_grad and cast keep values", "[api]") {
  Tensor x = requires_grad(T({2}, {1, 2}, DType::F64));
  Tensor s = stop_grad(x);
  CHECK_FALSE(needs_grad(s));
  check(s, {2}, {1, 2}, DType::F64);
  check(cast(x, DType::F32), {2}, {1, 2}, DType::F32);
  check(cast(T({2}, {1.5, 2}), DType::BF16), {2}, {1.5, 2}, DType::BF16);
}
