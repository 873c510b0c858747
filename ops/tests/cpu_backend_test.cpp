// The CPU backend against naive loops written here (or hand-computed
// values), primitive by primitive.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "ops/backend/backend.h"
#include "ops/core/philox.h"
#include "ops/core/tensor.h"

using namespace ss::ops;

namespace {

Backend& B() {
  return cpu_backend();
}

Tensor T(const Shape& s, const std::vector<double>& v, DType d = DType::F64) {
  return Tensor::from_doubles(s, v, d);
}

/// Deterministic test values: multiples of 0.25 in [-3, 3] (exact in every
/// float dtype), or ints in [-5, 5]; [nonzero] avoids 0 (divisors).
std::vector<double> vals(int64_t n,
                         unsigned seed,
                         bool ints = false,
                         bool nonzero = false) {
  std::mt19937 g(seed);
  std::vector<double> v(n);
  for (auto& x : v) {
    do {
      x = ints ? static_cast<int>(g() % 11) - 5
               : (static_cast<int>(g() % 25) - 12) * 0.25;
    } while (nonzero && x == 0);
  }
  return v;
}

Tensor rnd(const Shape& s, DType d, unsigned seed, bool nonzero = false) {
  bool ints = d == DType::I32 || d == DType::I64;
  return T(s, vals(numel_of(s), seed, ints, nonzero), d);
}

/// Index in a tensor of shape [in] read at flat index [flat] of the
/// broadcast shape [out].
int64_t bidx(const Shape& in, const Shape& out, int64_t flat) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = flat % out[d];
    flat /= out[d];
  }
  int64_t f = 0;
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    f = f * in[i] + (in[i] == 1 ? 0 : idx[lead + i]);
  return f;
}

bool same(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
}

void check_close(const Tensor& got,
                 const Shape& shape,
                 const std::vector<double>& want,
                 double tol) {
  REQUIRE(got.shape() == shape);
  std::vector<double> g = got.to_doubles();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(same(g[i], want[i], tol));
  }
}

double tol_of(DType d) {
  switch (d) {
    case DType::F32:
      return 1e-5;
    case DType::BF16:
      return 1e-2;
    case DType::F16:
      return 2e-3;
    default:
      return 1e-12;
  }
}

const std::vector<DType> kFloats = {DType::F32, DType::F64};
const std::vector<DType> kAllFloats = {
    DType::F32, DType::F64, DType::BF16, DType::F16};

}  // namespace

// ---------------------------------------------------------------- tensor

TEST_CASE("tensor basics", "[cpu]") {
  CHECK(shape_string({64, 10}) == "[64 10]");
  CHECK(shape_string({}) == "[]");
  CHECK(numel_of({}) == 1);
  CHECK(numel_of({3, 0}) == 0);
  CHECK(Device{}.str() == "cpu");
  CHECK((Device{Device::Kind::Cuda, 1}.str()) == "cuda:1");
  Tensor t = T({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(t.size(-1) == 3);
  CHECK(t.size(0) == 2);
  CHECK(reinterpret_cast<uintptr_t>(t.raw()) % 64 == 0);
  CHECK_THROWS_AS(t.reshape({4}), std::invalid_argument);
  Tensor r = t.reshape({3, 2});
  CHECK(r.same_storage(t));
  CHECK(r.at(5) == 6);
  Tensor c = t.clone();
  c.set(0, 42);
  CHECK(t.at(0) == 1);
  CHECK_THROWS_AS(Tensor::from_doubles({2}, {1, 2, 3}, DType::F32),
                  std::invalid_argument);
  for (DType d : {DType::F32,
                  DType::F64,
                  DType::BF16,
                  DType::F16,
                  DType::I32,
                  DType::I64,
                  DType::Bool}) {
    Tensor f = Tensor::full({3}, 1.0, d);
    CHECK(f.to_doubles() == std::vector<double>{1, 1, 1});
    Tensor z = Tensor::zeros({2}, d);
    CHECK(z.to_doubles() == std::vector<double>{0, 0});
    Tensor s = Tensor::scalar(0, d);
    s.set(0, d == DType::Bool ? 1 : -2);
    CHECK(s.item() == (d == DType::Bool ? 1 : -2));
  }
  CHECK(Tensor::scalar(3.7, DType::I32).item() == 3);
  CHECK(Tensor::scalar(-3.7, DType::I64).item() == -3);
}

TEST_CASE("bf16 and f16 conversions", "[cpu]") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_f16(1.0f) == 0x3C00);
  CHECK(float_to_f16(-2.0f) == 0xC000);
  CHECK(float_to_f16(65504.0f) == 0x7BFF);
  CHECK(f16_to_float(0x7BFF) == 65504.0f);
  CHECK(float_to_f16(65519.0f) == 0x7BFF);  // rounds down to the max
  CHECK(float_to_f16(65520.0f) == 0x7C00);  // tie to even: inf
  CHECK(float_to_f16(1e6f) == 0x7C00);
  CHECK(float_to_f16(-INFINITY) == 0xFC00);
  // Subnormals: 2^-24 is the smallest; 2^-25 is a tie and rounds to 0.
  CHECK(float_to_f16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_f16(std::ldexp(1.0f, -25)) == 0x0000);
  CHECK(float_to_f16(std::ldexp(3.0f, -26)) == 0x0001);
  CHECK(float_to_f16(std::ldexp(3.0f, -25)) == 0x0002);  // 1.5 -> even 2
  CHECK(f16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(f16_to_float(0x0400) == std::ldexp(1.0f, -14));
  // f16 rounding to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(float_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  // bf16 rounding to even: 1 + 2^-8 is halfway between 0x3F80 and 0x3F81.
  CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) ==
        0x3F81);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  CHECK(std::isnan(f16_to_float(float_to_f16(NAN))));
  CHECK(std::isinf(bf16_to_float(float_to_bf16(INFINITY))));
  // Every non-NaN pattern round-trips exactly.
  int bad_bf = 0, bad_f = 0;
  for (uint32_t v = 0; v < 65536; ++v) {
    uint16_t h = static_cast<uint16_t>(v);
    float fb = bf16_to_float(h), ff = f16_to_float(h);
    if (!std::isnan(fb) && float_to_bf16(fb) != h) ++bad_bf;
    if (!std::isnan(ff) && float_to_f16(ff) != h) ++bad_f;
  }
  CHECK(bad_bf == 0);
  CHECK(bad_f == 0);
}

// ---------------------------------------------------------------- elementwise

TEST_CASE("unary ops against std functions", "[cpu]") {
  std::vector<double> xs = {-2.5, -1, -0.25, 0, 0.5, 1, 3};
  std::vector<double> pos = {0.25, 0.5, 1, 2, 9};
  struct Row {
    UnaryOp op;
    std::function<double(double)> f;
    bool positive;
  };
  std::vector<Row> rows = {
      {UnaryOp::Neg, [](double v) { return -v; }, false},
      {UnaryOp::Abs, [](double v) { return std::abs(v); }, false},
      {UnaryOp::Sign,
       [](double v) { return double((v > 0) - (v < 0)); },
       false},
      {UnaryOp::Exp, [](double v) { return std::exp(v); }, false},
      {UnaryOp::Log, [](double v) { return std::log(v); }, true},
      {UnaryOp::Log1p, [](double v) { return std::log1p(v); }, true},
      {UnaryOp::Sqrt, [](double v) { return std::sqrt(v); }, true},
      {UnaryOp::Rsqrt, [](double v) { return 1 / std::sqrt(v); }, true},
      {UnaryOp::Sin, [](double v) { return std::sin(v); }, false},
      {UnaryOp::Cos, [](double v) { return std::cos(v); }, false},
      {UnaryOp::Tanh, [](double v) { return std::tanh(v); }, false},
      {UnaryOp::Sigmoid,
       [](double v) { return 1 / (1 + std::exp(-v)); },
       false},
      {UnaryOp::Relu, [](double v) { return v > 0 ? v : 0; }, false},
      {UnaryOp::Erf, [](double v) { return std::erf(v); }, false},
      {UnaryOp::Floor, [](double v) { return std::floor(v); }, false},
  };
  for (DType d : kAllFloats)
    for (const Row& r : rows) {
      const auto& in = r.positive ? pos : xs;
      std::vector<double> want;
      for (double v : T({int64_t(in.size())}, in, d).to_doubles())
        want.push_back(r.f(v));
      INFO("op " << int(r.op) << " dtype " << ss::types::dtype_name(d));
      Tensor y = B().unary(r.op, T({int64_t(in.size())}, in, d));
      CHECK(y.dtype() == d);
      check_close(y, {int64_t(in.size())}, want, tol_of(d));
    }
  // Edge cases.
  Tensor big = T({4}, {-1000, 1000, NAN, -0.0}, DType::F32);
  check_close(B().unary(UnaryOp::Sigmoid, big), {4}, {0, 1, NAN, 0.5}, 0);
  check_close(B().unary(UnaryOp::Relu, big), {4}, {0, 1000, NAN, 0}, 0);
  check_close(B().unary(UnaryOp::Sign, big), {4}, {-1, 1, NAN, 0}, 0);
  check_close(B().unary(UnaryOp::Sign, T({1}, {0.0})), {1}, {0}, 0);
  Tensor nf = T({4}, {1, NAN, INFINITY, -INFINITY}, DType::F32);
  check_close(B().unary(UnaryOp::IsNan, nf), {4}, {0, 1, 0, 0}, 0);
  check_close(B().unary(UnaryOp::IsFinite, nf), {4}, {1, 0, 0, 0}, 0);
  CHECK(B().unary(UnaryOp::IsNan, nf).dtype() == DType::Bool);
  CHECK(B().unary(UnaryOp::IsNan, T({1}, {1}, DType::BF16)).dtype() ==
        DType::Bool);
  // Ints and bools.
  for (DType d : {DType::I32, DType::I64}) {
    Tensor x = T({4}, {-3, 0, 2, -1}, d);
    check_close(B().unary(UnaryOp::Neg, x), {4}, {3, 0, -2, 1}, 0);
    check_close(B().unary(UnaryOp::Abs, x), {4}, {3, 0, 2, 1}, 0);
    check_close(B().unary(UnaryOp::Sign, x), {4}, {-1, 0, 1, -1}, 0);
    check_close(B().unary(UnaryOp::Relu, x), {4}, {0, 0, 2, 0}, 0);
    CHECK(B().unary(UnaryOp::Relu, x).dtype() == d);
    CHECK_THROWS(B().unary(UnaryOp::Exp, x));
  }
  Tensor bl = T({2}, {1, 0}, DType::Bool);
  check_close(B().unary(UnaryOp::Not, bl), {2}, {0, 1}, 0);
  CHECK_THROWS(B().unary(UnaryOp::Not, T({1}, {1}, DType::F32)));
}

namespace {

double py_floordiv(double a, double b) {
  return std::floor(a / b);
}
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// Naive broadcast binary reference.
std::vector<double> naive_binary(BinaryOp op,
                                 const Tensor& a,
                                 const Tensor& b,
                                 const Shape& os) {
  std::vector<double> va = a.to_doubles(), vb = b.to_doubles(), out;
  for (int64_t i = 0; i < numel_of(os); ++i) {
    double x = va[bidx(a.shape(), os, i)], y = vb[bidx(b.shape(), os, i)];
    double r = 0;
    switch (op) {
      case BinaryOp::Add:
        r = x + y;
        break;
      case BinaryOp::Sub:
        r = x - y;
        break;
      case BinaryOp::Mul:
        r = x * y;
        break;
      case BinaryOp::Div:
        r = x / y;
        break;
      case BinaryOp::FloorDiv:
        r = py_floordiv(x, y);
        break;
      case BinaryOp::Mod:
        r = py_mod(x, y);
        break;
      case BinaryOp::Pow:
        r = std::pow(x, y);
        break;
      case BinaryOp::Maximum:
        r = std::max(x, y);
        break;
      case BinaryOp::Minimum:
        r = std::min(x, y);
        break;
      case BinaryOp::Eq:
        r = x == y;
        break;
      case BinaryOp::Ne:
        r = x != y;
        break;
      case BinaryOp::Lt:
        r = x < y;
        break;
      case BinaryOp::Le:
        r = x <= y;
        break;
      case BinaryOp::Gt:
        r = x > y;
        break;
      case BinaryOp::Ge:
        r = x >= y;
        break;
      case BinaryOp::And:
        r = x != 0 && y != 0;
        break;
      case BinaryOp::Or:
        r = x != 0 || y != 0;
        break;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("binary ops with broadcasting against a naive loop", "[cpu]") {
  std::vector<std::pair<Shape, Shape>> cases = {{{2, 3}, {2, 3}},
                                                {{2, 3}, {3}},
                                                {{3}, {2, 3}},
                                                {{2, 1}, {1, 3}},
                                                {{}, {2, 3}},
                                                {{2, 3}, {}},
                                                {{}, {}},
                                                {{2, 3, 4}, {3, 1}},
                                                {{4, 1, 3}, {1, 5, 1}},
                                                {{1, 3}, {2, 3}},
                                                {{64, 10}, {10}},
                                                {{2, 0}, {0}},
                                                {{4, 3}, {4, 1}},
                                                {{2, 1}, {2, 3}},
                                                {{2, 3, 4}, {2, 3, 1}}};
  std::vector<BinaryOp> ops = {BinaryOp::Add,
                               BinaryOp::Sub,
                               BinaryOp::Mul,
                               BinaryOp::Div,
                               BinaryOp::FloorDiv,
                               BinaryOp::Mod,
                               BinaryOp::Pow,
                               BinaryOp::Maximum,
                               BinaryOp::Minimum,
                               BinaryOp::Eq,
                               BinaryOp::Ne,
                               BinaryOp::Lt,
                               BinaryOp::Le,
                               BinaryOp::Gt,
                               BinaryOp::Ge,
                               BinaryOp::And,
                               BinaryOp::Or};
  int checked = 0;
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::I32, DType::I64})
    for (auto& [sa, sb] : cases)
      for (BinaryOp op : ops) {
        bool ints = d == DType::I32 || d == DType::I64;
        if (ints && op == BinaryOp::Div) continue;
        bool divides = op == BinaryOp::Div || op == BinaryOp::FloorDiv ||
                       op == BinaryOp::Mod;
        Tensor a = rnd(sa, d, 1), b = rnd(sb, d, 2, divides);
        if (op == BinaryOp::Pow) {  // small non-negative exponents
          std::vector<double> e = b.to_doubles();
          for (auto& v : e) v = std::fmod(std::abs(v), 3.0);
          if (ints)
            for (auto& v : e) v = std::floor(v);
          b = T(sb, e, d);
        }
        Shape os = sa.size() >= sb.size() ? sa : sb;
        for (size_t i = 0; i < os.size(); ++i) {
          size_t la = os.size() - sa.size(), lb = os.size() - sb.size();
          int64_t da = i >= la ? sa[i - la] : 1, db = i >= lb ? sb[i - lb] : 1;
          os[i] = da == 1 ? db : da;
        }
        INFO("op " << int(op) << " dtype " << ss::types::dtype_name(d) << " "
                   << shape_string(sa) << " " << shape_string(sb));
        Tensor y = B().binary(op, a, b);
        bool cmp = op >= BinaryOp::Eq;
        CHECK(y.dtype() == (cmp ? DType::Bool : d));
        std::vector<double> want = naive_binary(op, a, b, os);
        if (d == DType::BF16 && !cmp)  // the reference rounded like the result
          want = T(os, want, DType::BF16).to_doubles();
        check_close(y, os, want, d == DType::BF16 ? 1e-2 : tol_of(d));
        ++checked;
      }
  CHECK(checked > 900);
}

TEST_CASE("floored division, modulo and NaN-propagating max", "[cpu]") {
  for (DType d : {DType::I32, DType::I64, DType::F32, DType::F64}) {
    Tensor a = T({4}, {-7, 7, -7, 7}, d), b = T({4}, {2, -2, -2, 2}, d);
    check_close(B().binary(BinaryOp::FloorDiv, a, b), {4}, {-4, -4, 3, 3}, 0);
    check_close(B().binary(BinaryOp::Mod, a, b), {4}, {1, -1, -1, 1}, 0);
  }
  check_close(
      B().binary(BinaryOp::Mod, T({1}, {-7.5}), T({1}, {2})), {1}, {0.5}, 0);
  CHECK_THROWS(B().binary(
      BinaryOp::FloorDiv, T({1}, {1}, DType::I32), T({1}, {0}, DType::I32)));
  CHECK_THROWS(B().binary(
      BinaryOp::Div, T({1}, {1}, DType::I32), T({1}, {1}, DType::I32)));
  Tensor x = T({3}, {NAN, 1, 2}), y = T({3}, {1, NAN, 3});
  check_close(B().binary(BinaryOp::Maximum, x, y), {3}, {NAN, NAN, 3}, 0);
  check_close(B().binary(BinaryOp::Minimum, x, y), {3}, {NAN, NAN, 2}, 0);
  check_close(B().binary(BinaryOp::Pow,
                         T({2}, {2, 3}, DType::I64),
                         T({2}, {10, 3}, DType::I64)),
              {2},
              {1024, 27},
              0);
  Tensor p = T({4}, {1, 1, 0, 0}, DType::Bool),
         q = T({4}, {1, 0, 1, 0}, DType::Bool);
  check_close(B().binary(BinaryOp::And, p, q), {4}, {1, 0, 0, 0}, 0);
  check_close(B().binary(BinaryOp::Or, p, q), {4}, {1, 1, 1, 0}, 0);
  check_close(B().binary(BinaryOp::Eq, p, q), {4}, {1, 0, 0, 1}, 0);
  CHECK_THROWS(B().binary(BinaryOp::Add, T({1}, {1}), T({1}, {1}, DType::F32)));
}

TEST_CASE("where broadcasts", "[cpu]") {
  Tensor c = T({2, 1}, {1, 0}, DType::Bool);
  for (DType d : {DType::F32, DType::BF16, DType::I64}) {
    Tensor a = T({3}, {1, 2, 3}, d), b = T({}, {-1}, d);
    Tensor y = B().where(c, a, b);
    CHECK(y.dtype() == d);
    check_close(y, {2, 3}, {1, 2, 3, -1, -1, -1}, 0);
  }
  Tensor cc = T({3}, {1, 0, 1}, DType::Bool);
  check_close(
      B().where(cc, T({3}, {1, 2, 3}), T({3}, {4, 5, 6})), {3}, {1, 5, 3}, 0);
}

TEST_CASE("cast between every pair of dtypes", "[cpu]") {
  std::vector<DType> all = {DType::F32,
                            DType::F64,
                            DType::BF16,
                            DType::F16,
                            DType::I32,
                            DType::I64,
                            DType::Bool};
  for (DType from : all)
    for (DType to : all) {
      std::vector<double> v = from == DType::Bool
                                  ? std::vector<double>{0, 1, 1}
                                  : std::vector<double>{0, 1, -2};
      Tensor y = B().cast(T({3}, v, from), to);
      CHECK(y.dtype() == to);
      std::vector<double> want = v;
      if (to == DType::Bool)
        for (auto& x : want) x = x != 0;
      check_close(y, {3}, want, 0);
    }
  check_close(
      B().cast(T({3}, {2.7, -2.7, NAN}), DType::I32), {3}, {2, -2, 0}, 0);
  check_close(B().cast(T({1}, {1e20}), DType::I32), {1}, {2147483647}, 0);
  check_close(B().cast(T({2}, {0.5, NAN}), DType::Bool), {2}, {1, 1}, 0);
  CHECK(B().cast(T({1}, {1.0 / 3}), DType::BF16).data<uint16_t>()[0] ==
        float_to_bf16(1.0f / 3));
}

// ---------------------------------------------------------------- reductions

namespace {

std::vector<double> naive_reduce(ReduceOp op,
                                 const Tensor& x,
                                 const std::vector<int>& axes,
                                 Shape* os_out,
                                 bool keepdims) {
  const Shape& s = x.shape();
  Shape os, okeep;
  for (size_t d = 0; d < s.size(); ++d) {
    bool r = std::count(axes.begin(), axes.end(), int(d));
    okeep.push_back(r ? 1 : s[d]);
    if (!r) os.push_back(s[d]);
  }
  *os_out = keepdims ? okeep : os;
  int64_t on = numel_of(okeep);
  std::vector<double> acc(on), v = x.to_doubles();
  std::vector<bool> started(on, false);
  std::vector<int64_t> pos(on, 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rem = i, o = 0, mul = 1, along = 0;
    for (size_t d = s.size(); d-- > 0;) {
      int64_t id = rem % s[d];
      rem /= s[d];
      if (okeep[d] != 1 || s[d] == 1)
        o += id * mul;
      else
        along = id;
      mul *= okeep[d];
    }
    double a = v[i];
    if (!started[o]) {
      started[o] = true;
      acc[o] = (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) ? a : a;
      pos[o] = along;
      if (op == ReduceOp::Any || op == ReduceOp::All) acc[o] = a != 0;
      continue;
    }
    switch (op) {
      case ReduceOp::Sum:
        acc[o] += a;
        break;
      case ReduceOp::Prod:
        acc[o] *= a;
        break;
      case ReduceOp::Max:
        acc[o] = std::max(acc[o], a);
        break;
      case ReduceOp::Min:
        acc[o] = std::min(acc[o], a);
        break;
      case ReduceOp::ArgMax:
        if (a > acc[o]) acc[o] = a, pos[o] = along;
        break;
      case ReduceOp::ArgMin:
        if (a < acc[o]) acc[o] = a, pos[o] = along;
        break;
      case ReduceOp::Any:
        acc[o] = acc[o] || a != 0;
        break;
      case ReduceOp::All:
        acc[o] = acc[o] && a != 0;
        break;
    }
  }
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
    for (int64_t o = 0; o < on; ++o) acc[o] = double(pos[o]);
  return acc;
}

}  // namespace

TEST_CASE("reductions over every axis subset against a naive loop", "[cpu]") {
  std::vector<std::vector<int>> subsets = {
      {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  std::vector<Shape> shapes = {{2, 3, 4}, {3, 1, 5}, {1, 4, 2}};
  std::vector<ReduceOp> ops = {ReduceOp::Sum,
                               ReduceOp::Prod,
                               ReduceOp::Max,
                               ReduceOp::Min,
                               ReduceOp::Any,
                               ReduceOp::All};
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::I32, DType::I64})
    for (const Shape& s : shapes)
      for (const auto& axes : subsets)
        for (ReduceOp op : ops)
          for (bool keep : {false, true}) {
            Tensor x = rnd(s, d, 7);
            if (op == ReduceOp::Prod)  // keep products small and exact
              x = rnd(s, d, 7, true),
              x = B().binary(BinaryOp::Maximum,
                             B().binary(BinaryOp::Minimum, x, T({}, {2}, d)),
                             T({}, {-2}, d));
            Shape os;
            std::vector<double> want = naive_reduce(op, x, axes, &os, keep);
            INFO("op " << int(op) << " " << ss::types::dtype_name(d) << " "
                       << shape_string(s) << " axes " << axes.size() << " keep "
                       << keep);
            Tensor y = B().reduce(op, x, axes, keep);
            check_close(y, os, want, d == DType::BF16 ? 2e-2 : tol_of(d));
          }
  // Single-axis argmax/argmin, and ops on larger layouts.
  for (DType d : {DType::F32, DType::F64, DType::I32})
    for (int axis : {0, 1, 2})
      for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin}) {
        Tensor x = rnd({3, 4, 5}, d, 11);
        Shape os;
        std::vector<double> want = naive_reduce(op, x, {axis}, &os, false);
        Tensor y = B().reduce(op, x, {axis}, false);
        CHECK(y.dtype() == DType::I64);
        check_close(y, os, want, 0);
      }
  for (const Shape& s : std::vector<Shape>{{64, 256}, {64, 10}, {7, 300, 3}})
    for (int axis = 0; axis < int(s.size()); ++axis) {
      Tensor x = rnd(s, DType::F32, 5);
      Shape os;
      std::vector<double> want =
          naive_reduce(ReduceOp::Sum, x, {axis}, &os, true);
      check_close(B().reduce(ReduceOp::Sum, x, {axis}, true), os, want, 1e-5);
    }
  // A pattern that needs a permute: reduce axes 0 and 2 of [2 3 4 5].
  Tensor x4 = rnd({2, 3, 4, 5}, DType::F64, 9);
  Shape os4;
  std::vector<double> want4 =
      naive_reduce(ReduceOp::Max, x4, {0, 2}, &os4, false);
  check_close(B().reduce(ReduceOp::Max, x4, {0, 2}, false), os4, want4, 0);
}

TEST_CASE("reduction dtypes and edge cases", "[cpu]") {
  Tensor b = T({2, 3}, {1, 0, 1, 1, 1, 1}, DType::Bool);
  Tensor s = B().reduce(ReduceOp::Sum, b, {1}, false);
  CHECK(s.dtype() == DType::I64);
  check_close(s, {2}, {2, 3}, 0);
  check_close(B().reduce(ReduceOp::All, b, {1}, false), {2}, {0, 1}, 0);
  check_close(B().reduce(ReduceOp::Any, b, {0, 1}, false), {}, {1}, 0);
  // Ties: the first index; NaN is the extreme (the first NaN).
  Tensor t = T({6}, {1, 3, 3, -1, -1, 0}, DType::F32);
  check_close(B().reduce(ReduceOp::ArgMax, t, {0}, false), {}, {1}, 0);
  check_close(B().reduce(ReduceOp::ArgMin, t, {0}, true), {1}, {3}, 0);
  Tensor n = T({2, 4}, {1, NAN, 5, NAN, 2, 1, 0, 9});
  check_close(B().reduce(ReduceOp::ArgMax, n, {1}, false), {2}, {1, 3}, 0);
  check_close(B().reduce(ReduceOp::ArgMin, n, {1}, false), {2}, {1, 2}, 0);
  check_close(
      B().reduce(ReduceOp::ArgMax, n, {0}, false), {4}, {1, 0, 0, 0}, 0);
  check_close(B().reduce(ReduceOp::Max, n, {1}, false), {2}, {NAN, 9}, 0);
  check_close(
      B().reduce(ReduceOp::Min, n, {0}, false), {4}, {1, NAN, 0, NAN}, 0);
  // Empty axes: a copy; empty tensors: identities.
  check_close(B().reduce(ReduceOp::Sum, t, {}, false), {6}, t.to_doubles(), 0);
  check_close(
      B().reduce(ReduceOp::Sum, Tensor::zeros({0, 3}, DType::F32), {0}, false),
      {3},
      {0, 0, 0},
      0);
  check_close(
      B().reduce(ReduceOp::Prod, Tensor::zeros({2, 0}, DType::F32), {1}, false),
      {2},
      {1, 1},
      0);
  CHECK_THROWS(
      B().reduce(ReduceOp::Max, Tensor::zeros({0}, DType::F32), {0}, false));
  CHECK(B().reduce(ReduceOp::Sum, T({2}, {1, 2}, DType::I32), {0}, false)
            .dtype() == DType::I32);
}

TEST_CASE("cumsum and stable sort", "[cpu]") {
  for (DType d :
       {DType::F32, DType::F64, DType::I32, DType::I64, DType::BF16}) {
    Tensor x = T({2, 3}, {1, 2, 3, 4, 5, 6}, d);
    check_close(B().cumsum(x, 1, false), {2, 3}, {1, 3, 6, 4, 9, 15}, 0);
    check_close(B().cumsum(x, 1, true), {2, 3}, {6, 5, 3, 15, 11, 6}, 0);
    check_close(B().cumsum(x, 0, false), {2, 3}, {1, 2, 3, 5, 7, 9}, 0);
  }
  CHECK(B().cumsum(T({2}, {1, 1}, DType::Bool), 0, false).dtype() ==
        DType::I64);
  Tensor x = T({6}, {3, 1, 2, 1, NAN, 3}, DType::F32);
  auto [v, i] = B().sort(x, 0, false);
  check_close(v, {6}, {1, 1, 2, 3, 3, NAN}, 0);
  check_close(i, {6}, {1, 3, 2, 0, 5, 4}, 0);  // stable among ties
  auto [vd, id] = B().sort(x, 0, true);
  check_close(vd, {6}, {NAN, 3, 3, 2, 1, 1}, 0);
  check_close(id, {6}, {4, 0, 5, 2, 1, 3}, 0);
  // Along axis 0 of [3 2], with a half dtype (values stay bit-exact).
  Tensor y = T({3, 2}, {2, 0.1, 1, 0.3, 3, 0.2}, DType::BF16);
  auto [vy, iy] = B().sort(y, 0, false);
  CHECK(vy.dtype() == DType::BF16);
  check_close(iy, {3, 2}, {1, 0, 0, 2, 2, 1}, 0);
  check_close(vy,
              {3, 2},
              T({3, 2}, {1, 0.1, 2, 0.2, 3, 0.3}, DType::BF16).to_doubles(),
              0);
  auto [vi, ii] = B().sort(T({4}, {3, -1, 3, 0}, DType::I64), 0, true);
  check_close(vi, {4}, {3, 3, 0, -1}, 0);
  check_close(ii, {4}, {0, 2, 3, 1}, 0);
}

// ---------------------------------------------------------------- matmul

namespace {

std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, Shape* os) {
  Shape ba(a.shape().begin(), a.shape().end() - 2);
  Shape bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = ba.size() >= bb.size() ? ba : bb;
  for (size_t i = 0; i < batch.size(); ++i) {
    size_t la = batch.size() - ba.size(), lb = batch.size() - bb.size();
    int64_t da = i >= la ? ba[i - la] : 1, db = i >= lb ? bb[i - lb] : 1;
    batch[i] = da == 1 ? db : da;
  }
  int64_t n = a.shape()[a.rank() - 2], k = a.shape()[a.rank() - 1];
  int64_t m = b.shape()[b.rank() - 1];
  *os = batch;
  os->push_back(n);
  os->push_back(m);
  std::vector<double> va = a.to_doubles(), vb = b.to_doubles(), out;
  for (int64_t t = 0; t < numel_of(batch); ++t) {
    int64_t oa = bidx(ba, batch, t) * n * k, ob = bidx(bb, batch, t) * k * m;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += va[oa + i * k + p] * vb[ob + p * m + j];
        out.push_back(s);
      }
  }
  return out;
}

}  // namespace

TEST_CASE("matmul against a naive triple loop", "[cpu]") {
  std::vector<std::pair<Shape, Shape>> cases = {{{3, 4}, {4, 5}},
                                                {{2, 3, 4}, {2, 4, 5}},
                                                {{2, 3, 4}, {4, 5}},
                                                {{3, 4}, {2, 4, 5}},
                                                {{2, 1, 3, 4}, {3, 4, 5}},
                                                {{1, 1}, {1, 1}},
                                                {{5, 2, 3}, {1, 3, 2}},
                                                {{64, 784}, {784, 16}}};
  for (DType d : {DType::F32,
                  DType::F64,
                  DType::I32,
                  DType::I64,
                  DType::BF16,
                  DType::F16})
    for (auto& [sa, sb] : cases) {
      Tensor a = rnd(sa, d, 3), b = rnd(sb, d, 4);
      Shape os;
      std::vector<double> want = naive_matmul(a, b, &os);
      INFO(ss::types::dtype_name(d)
           << " " << shape_string(sa) << " @ " << shape_string(sb));
      Tensor y = B().matmul(a, b, false, false);
      CHECK(y.dtype() == d);
      double tol = d == DType::F32                         ? 1e-5
                   : d == DType::F64                       ? 1e-12
                   : (d == DType::BF16 || d == DType::F16) ? 1e-2
                                                           : 0;
      check_close(y, os, want, tol);
    }
  Tensor e = B().matmul(Tensor::zeros({2, 0}, DType::F32),
                        Tensor::zeros({0, 3}, DType::F32),
                        false,
                        false);
  check_close(e, {2, 3}, std::vector<double>(6, 0), 0);
  CHECK_THROWS(B().matmul(T({2, 3}, std::vector<double>(6, 1)),
                          T({2, 3}, std::vector<double>(6, 1)),
                          false,
                          false));
}

TEST_CASE("matmul reads transposed operands in place", "[cpu]") {
  // op(a) @ op(b) equals the product of explicit transposes, for every
  // flag combination, batched and not, in floats and ints.
  for (DType d : {DType::F32, DType::F64, DType::I64})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (Shape batch : {Shape{}, Shape{2}}) {
          Shape sa = batch, sb = batch;
          sa.insert(sa.end(),
                    ta ? std::initializer_list<int64_t>{4, 3}
                       : std::initializer_list<int64_t>{3, 4});
          sb.insert(sb.end(),
                    tb ? std::initializer_list<int64_t>{5, 4}
                       : std::initializer_list<int64_t>{4, 5});
          Tensor a = rnd(sa, d, 11), b = rnd(sb, d, 12);
          auto swap = [&](const Tensor& t) {
            std::vector<int> p;
            for (size_t i = 0; i < t.rank(); ++i) p.push_back(int(i));
            std::swap(p[p.size() - 1], p[p.size() - 2]);
            return B().permute(t, p);
          };
          Tensor want =
              B().matmul(ta ? swap(a) : a, tb ? swap(b) : b, false, false);
          Tensor got = B().matmul(a, b, ta, tb);
          INFO(ss::types::dtype_name(d) << " ta=" << ta << " tb=" << tb);
          CHECK(got.shape() == want.shape());
          std::vector<double> gv = got.to_doubles(), wv = want.to_doubles();
          for (size_t i = 0; i < gv.size(); ++i)
            CHECK(gv[i] == Approx(wv[i]).epsilon(1e-5).margin(1e-6));
        }
}

// ---------------------------------------------------------------- shape ops

TEST_CASE("permute, broadcast_to, slice, concat, pad", "[cpu]") {
  Tensor x = rnd({2, 3, 4}, DType::F32, 8);
  std::vector<double> v = x.to_doubles();
  for (std::vector<int> perm : std::vector<std::vector<int>>{
           {2, 0, 1}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}, {0, 1, 2}}) {
    Shape os = {x.shape()[perm[0]], x.shape()[perm[1]], x.shape()[perm[2]]};
    std::vector<double> want;
    for (int64_t i = 0; i < os[0]; ++i)
      for (int64_t j = 0; j < os[1]; ++j)
        for (int64_t k = 0; k < os[2]; ++k) {
          int64_t idx[3];
          idx[perm[0]] = i, idx[perm[1]] = j, idx[perm[2]] = k;
          want.push_back(v[(idx[0] * 3 + idx[1]) * 4 + idx[2]]);
        }
    check_close(B().permute(x, perm), os, want, 0);
  }
  for (DType d : {DType::F64, DType::F16, DType::Bool}) {
    Tensor m = rnd({37, 41}, d, 2);
    std::vector<double> mv = m.to_doubles(), want;
    for (int64_t j = 0; j < 41; ++j)
      for (int64_t i = 0; i < 37; ++i) want.push_back(mv[i * 41 + j]);
    check_close(B().permute(m, {1, 0}), {41, 37}, want, 0);
  }
  for (auto& [from, to] :
       std::vector<std::pair<Shape, Shape>>{{{3}, {2, 3}},
                                            {{2, 1}, {2, 3}},
                                            {{}, {2, 2}},
                                            {{1, 3}, {4, 2, 3}}}) {
    Tensor s = rnd(from, DType::BF16, 1);
    std::vector<double> sv = s.to_doubles(), want;
    for (int64_t i = 0; i < numel_of(to); ++i)
      want.push_back(sv[bidx(from, to, i)]);
    check_close(B().broadcast_to(s, to), to, want, 0);
  }
  Tensor r = T({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::I32);
  check_close(B().slice(r, 1, 1, 5, 2), {2, 2}, {1, 3, 6, 8}, 0);
  check_close(B().slice(r, 1, 1, 4, 1), {2, 3}, {1, 2, 3, 6, 7, 8}, 0);
  check_close(B().slice(r, 0, 1, 2, 1), {1, 5}, {5, 6, 7, 8, 9}, 0);
  check_close(B().slice(r, 1, 4, 4, 1), {2, 0}, {}, 0);
  check_close(B().slice(r, 1, 0, 5, 3), {2, 2}, {0, 3, 5, 8}, 0);
  Tensor c1 = T({2, 1}, {1, 2}), c2 = T({2, 2}, {3, 4, 5, 6});
  check_close(B().concat({c1, c2}, 1), {2, 3}, {1, 3, 4, 2, 5, 6}, 0);
  check_close(B().concat({c2, c2}, 0), {4, 2}, {3, 4, 5, 6, 3, 4, 5, 6}, 0);
  check_close(B().pad(c2, 1, 1, 2, -1),
              {2, 5},
              {-1, 3, 4, -1, -1, -1, 5, 6, -1, -1},
              0);
  check_close(
      B().pad(T({2}, {1, 2}, DType::BF16), 0, 1, 0, 0.5), {3}, {0.5, 1, 2}, 0);
}

// ---------------------------------------------------------------- indexing

TEST_CASE("take, take_add, gather, scatter_add", "[cpu]") {
  Tensor emb = T({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}, DType::F32);
  Tensor idx = T({2, 2}, {3, 0, 1, 3}, DType::I64);
  check_close(
      B().take(emb, idx, 0), {2, 2, 2}, {30, 31, 0, 1, 10, 11, 30, 31}, 0);
  check_close(B().take(emb, T({3}, {1, 1, 0}, DType::I64), 1),
              {4, 3},
              {1, 1, 0, 11, 11, 10, 21, 21, 20, 31, 31, 30},
              0);
  // take_add is take's transpose: <take(x), v> == <x, take_add(v)>.
  for (DType d : {DType::F64, DType::F32, DType::I64, DType::BF16}) {
    Tensor g = T({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, d);
    check_close(
        B().take_add(g, idx, 0, 4), {4, 2}, {3, 4, 5, 6, 0, 0, 8, 10}, 0);
  }
  Tensor v2 = T({4, 3}, std::vector<double>(12, 1));
  check_close(B().take_add(v2, T({3}, {1, 1, 0}, DType::I64), 1, 2),
              {4, 2},
              {1, 2, 1, 2, 1, 2, 1, 2},
              0);
  // gather = take_along_axis, naive.
  Tensor x = rnd({3, 4}, DType::F64, 12);
  Tensor gi = T({3, 2}, {3, 0, 1, 1, 0, 2}, DType::I64);
  std::vector<double> xv = x.to_doubles();
  check_close(B().gather(x, gi, 1),
              {3, 2},
              {xv[3], xv[0], xv[5], xv[5], xv[8], xv[10]},
              0);
  Tensor gi0 = T({2, 4}, {2, 0, 1, 2, 0, 0, 2, 1}, DType::I64);
  check_close(B().gather(x, gi0, 0),
              {2, 4},
              {xv[8], xv[1], xv[6], xv[11], xv[0], xv[1], xv[10], xv[7]},
              0);
  // scatter_add: repeated indices add up.
  Tensor sv = T({3, 2}, {1, 2, 3, 4, 5, 6});
  check_close(B().scatter_add({3, 4}, gi, sv, 1),
              {3, 4},
              {2, 0, 0, 1, 0, 7, 0, 0, 5, 0, 6, 0},
              0);
  check_close(
      B().scatter_add({3, 4}, gi0, T({2, 4}, std::vector<double>(8, 1)), 0),
      {3, 4},
      {1, 2, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1},
      0);
}

// ---------------------------------------------------------------- random

TEST_CASE("random draws are counter-based", "[cpu]") {
  for (bool normal : {false, true})
    for (DType d : kAllFloats) {
      Tensor a = B().random({10}, d, 42, 7, 0, normal);
      Tensor b = B().random({10}, d, 42, 7, 0, normal);
      CHECK(a.dtype() == d);
      CHECK(a.to_doubles() == b.to_doubles());
      Tensor shifted = B().random({7}, d, 42, 7, 3, normal);
      std::vector<double> av = a.to_doubles();
      CHECK(std::vector<double>(av.begin() + 3, av.end()) ==
            shifted.to_doubles());
      CHECK(B().random({10}, d, 43, 7, 0, normal).to_doubles() != av);
      CHECK(B().random({10}, d, 42, 8, 0, normal).to_doubles() != av);
    }
  // Exactly the contract: element i is philox(key, (offset + i, stream)).
  Tensor u = B().random({2, 3}, DType::F64, 5, 1, 100, false);
  Tensor z = B().random({4}, DType::F32, 5, 1, 100, true);
  for (int i = 0; i < 4; ++i) {
    auto blk = philox::draw(5, 100 + i, 1);
    if (i < 6) CHECK(u.at(i) == double(philox::to_uniform(blk[0])));
    CHECK(z.at(i) == double(float(philox::to_normal(blk))));
  }
  CHECK_THROWS(B().random({2}, DType::I32, 1, 1, 0, false));
}

TEST_CASE("random statistics over 100k draws", "[cpu]") {
  const int64_t n = 100000;
  // sigma / sqrt(n): uniform 0.289 / 316 = 0.0009, normal 1 / 316 = 0.003.
  for (DType d : kFloats) {
    std::vector<double> u = B().random({n}, d, 123, 0, 0, false).to_doubles();
    double mean = 0, lo = 1, hi = 0;
    for (double x : u) mean += x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean /= n;
    CHECK(std::abs(mean - 0.5) < 0.005);
    CHECK(lo >= 0);
    CHECK(hi < 1);
    std::vector<double> g = B().random({n}, d, 123, 1, 0, true).to_doubles();
    double m = 0, sq = 0;
    for (double x : g) m += x;
    m /= n;
    for (double x : g) sq += (x - m) * (x - m);
    double sd = std::sqrt(sq / (n - 1));
    CHECK(std::abs(m) < 0.015);
    CHECK(std::abs(sd - 1) < 0.01);
  }
  for (DType d : {DType::BF16, DType::F16}) {
    std::vector<double> u = B().random({n}, d, 9, 0, 0, false).to_doubles();
    CHECK(*std::max_element(u.begin(), u.end()) < 1.0);
    CHECK(*std::min_element(u.begin(), u.end()) >= 0.0);
  }
}

// ---------------------------------------------------------------- conv2d

namespace {

struct ConvCase {
  Shape x, k;
  int stride, padding;
};

std::vector<double> naive_conv(
    const Tensor& x, const Tensor& k, int s, int p, Shape* os) {
  int64_t Bn = x.shape()[0], C = x.shape()[1], H = x.shape()[2],
          W = x.shape()[3];
  int64_t O = k.shape()[0], kh = k.shape()[2], kw = k.shape()[3];
  int64_t H2 = (H + 2 * p - kh) / s + 1, W2 = (W + 2 * p - kw) / s + 1;
  *os = {Bn, O, H2, W2};
  std::vector<double> xv = x.to_doubles(), kv = k.to_doubles(), out;
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < H2; ++i)
        for (int64_t j = 0; j < W2; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t w = 0; w < kw; ++w) {
                int64_t iy = i * s - p + u, ix = j * s - p + w;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += xv[((b * C + c) * H + iy) * W + ix] *
                       kv[((o * C + c) * kh + u) * kw + w];
              }
          out.push_back(acc);
        }
  return out;
}

const std::vector<ConvCase> kConvCases = {{{2, 3, 5, 5}, {4, 3, 3, 3}, 1, 0},
                                          {{1, 2, 6, 7}, {3, 2, 3, 2}, 2, 1},
                                          {{2, 1, 4, 4}, {2, 1, 1, 1}, 1, 0},
                                          {{1, 2, 5, 4}, {2, 2, 3, 3}, 2, 2}};

}  // namespace

TEST_CASE("conv2d against a naive loop", "[cpu]") {
  for (DType d : {DType::F32, DType::F64, DType::BF16})
    for (const ConvCase& c : kConvCases) {
      Tensor x = rnd(c.x, d, 21), k = rnd(c.k, d, 22);
      Shape os;
      std::vector<double> want = naive_conv(x, k, c.stride, c.padding, &os);
      Tensor y = B().conv2d(x, k, c.stride, c.padding);
      CHECK(y.dtype() == d);
      check_close(y, os, want, d == DType::BF16 ? 1e-2 : tol_of(d));
    }
}

TEST_CASE("conv2d grads against finite differences (f64)", "[cpu]") {
  for (const ConvCase& c : kConvCases) {
    Tensor x = rnd(c.x, DType::F64, 31), k = rnd(c.k, DType::F64, 32);
    Tensor y = B().conv2d(x, k, c.stride, c.padding);
    Tensor w = rnd(y.shape(), DType::F64, 33);  // L = sum(y * w)
    auto loss = [&](const Tensor& xx, const Tensor& kk) {
      std::vector<double> yv =
          B().conv2d(xx, kk, c.stride, c.padding).to_doubles();
      std::vector<double> wv = w.to_doubles();
      double s = 0;
      for (size_t i = 0; i < yv.size(); ++i) s += yv[i] * wv[i];
      return s;
    };
    Tensor gx = B().conv2d_grad_input(w, k, c.x, c.stride, c.padding);
    Tensor gk = B().conv2d_grad_kernel(w, x, c.k, c.stride, c.padding);
    REQUIRE(gx.shape() == c.x);
    REQUIRE(gk.shape() == c.k);
    const double h = 1e-4;
    for (int64_t i = 0; i < x.numel(); ++i) {
      Tensor xp = x.clone(), xm = x.clone();
      xp.set(i, x.at(i) + h);
      xm.set(i, x.at(i) - h);
      double fd = (loss(xp, k) - loss(xm, k)) / (2 * h);
      INFO("dx " << i);
      CHECK(std::abs(fd - gx.at(i)) < 1e-6 * std::max(1.0, std::abs(fd)));
    }
    for (int64_t i = 0; i < k.numel(); ++i) {
      Tensor kp = k.clone(), km = k.clone();
      kp.set(i, k.at(i) + h);
      km.set(i, k.at(i) - h);
      double fd = (loss(x, kp) - loss(x, km)) / (2 * h);
      INFO("dk " << i);
      CHECK(std::abs(fd - gk.at(i)) < 1e-6 * std::max(1.0, std::abs(fd)));
    }
  }
}

// ---------------------------------------------------------------- dispatch

TEST_CASE("backend_for picks the CPU backend; CUDA is a stub", "[cpu]") {
  CHECK(std::string(backend_for(Device{}).name()) == "cpu");
  CHECK(&backend_for(Device{}) == &cpu_backend());
  try {
    backend_for(Device{Device::Kind::Cuda, 0});
    FAIL("expected a throw");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("built without CUDA") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(Tensor::empty({2}, DType::F32, Device{Device::Kind::Cuda, 0}),
                  std::runtime_error);
}
