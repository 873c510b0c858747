// The CPU backend against naive loops written here (or hand-computed
// values), primitive by primitive: tensors, dtypes and elementwise ops.

#include <catch2/catch.hpp>
#include <cstring>

#include "ops/tests/cpu_test_util.h"

using namespace ss::ops;
using namespace cpu_test;

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
      {UnaryOp::Expm1, [](double v) { return std::expm1(v); }, false},
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
  const std::vector<DType>& all = kAllDTypes;
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

// ---------------------------------------------------------------- optimizers

// The fused steps in every float dtype against torch.optim's rules computed
// here in f64
// (https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html,
// .../torch.optim.SGD.html). Tolerance per dtype: f64 1e-12 (a few roundings),
// f32 1e-5 (float arithmetic over 3 steps), bf16 1e-2 (8-bit mantissa, each
// step rounds params and moments) plus, in bf16, 2 ulps of the largest
// param (|p| <= 2.5, ulp 2^-6: each of the 3 steps rounds the params by up
// to half an ulp), which small params see as a large relative error. 37 params:
// the f32 step's vector loop (Note [Vector AdamW]) runs four batches of eight
// and a tail.
TEST_CASE("fused adamw and sgd follow torch.optim in f64, f32, bf16",
          "[cpu][optim]") {
  using ss::types::DType;
  const int n = 37;
  std::vector<double> p0(n), g0(n);
  for (int i = 0; i < n; ++i) {
    p0[i] = 2.0 - 0.125 * i;
    g0[i] = (i % 3 ? 0.3 : -1.2) * (1 + 0.05 * i);
  }
  for (auto [dt, tol] : {std::pair{DType::F64, 1e-12},
                         std::pair{DType::F32, 1e-5},
                         std::pair{DType::BF16, 1e-2}}) {
    INFO(ss::types::dtype_name(dt));
    const double margin = dt == DType::BF16 ? 2 * 0.015625 : 0.0;
    Tensor p = Tensor::from_doubles({n}, p0, dt);
    Tensor g = Tensor::from_doubles({n}, g0, dt);
    Tensor m = Tensor::zeros({n}, dt), v = Tensor::zeros({n}, dt);
    Tensor sp = p.clone(), sb = Tensor::zeros({n}, dt);
    std::vector<double> w = p0, mm(n, 0), vv(n, 0), sw = p0, buf(n, 0);
    const double lr = 0.05, b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.1;
    const double mu = 0.9;
    for (int t = 1; t <= 3; ++t) {
      B().adamw_update(p, g, m, v, lr, b1, b2, eps, wd, t);
      B().sgd_update(sp, g, &sb, lr, mu, wd, /*nesterov=*/true, t == 1);
      for (int i = 0; i < n; ++i) {
        double gi = g.at(i);  // the gradient as the dtype holds it
        w[i] *= 1 - lr * wd;
        mm[i] = b1 * mm[i] + (1 - b1) * gi;
        vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
        double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
        w[i] -= lr / bc1 * mm[i] / (std::sqrt(vv[i]) / std::sqrt(bc2) + eps);
        double d = gi + wd * sw[i];
        buf[i] = t == 1 ? d : mu * buf[i] + d;
        sw[i] -= lr * (d + mu * buf[i]);
        CHECK(p.at(i) == Approx(w[i]).epsilon(tol).margin(margin));
        CHECK(sp.at(i) == Approx(sw[i]).epsilon(tol).margin(margin));
      }
    }
  }
}

// Note [Vector AdamW]: the f32 step (eight lanes on an AVX2 CPU) rounds
// each operation as torch's rule is written, with no fused multiply-add:
// bit for bit what this loop of f32 operations gives (built for plain
// x86-64, where nothing contracts).
TEST_CASE("the f32 adamw step rounds each operation as written",
          "[cpu][optim]") {
  const int n = 37;
  std::vector<float> w(n), g(n), mm(n, 0), vv(n, 0);
  std::vector<double> p0(n), g0(n);
  for (int i = 0; i < n; ++i) {
    p0[i] = w[i] = 1.0f + 0.37f * static_cast<float>(i % 7) - 0.11f * i;
    g0[i] = g[i] = (i % 3 ? 0.3f : -1.2f) * (1 + 0.05f * i);
  }
  Tensor p = Tensor::from_doubles({n}, p0, DType::F32);
  Tensor gt = Tensor::from_doubles({n}, g0, DType::F32);
  Tensor m = Tensor::zeros({n}, DType::F32), v = Tensor::zeros({n}, DType::F32);
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  for (int t = 1; t <= 5; ++t) {
    B().adamw_update(p, gt, m, v, lr, b1, b2, eps, wd, t);
    const float step = float(lr / (1 - std::pow(b1, t)));
    const float inv = float(1 / std::sqrt(1 - std::pow(b2, t)));
    for (int i = 0; i < n; ++i) {
      float pi = w[i] * float(1 - lr * wd);
      float a = float(b1) * mm[i], b = float(1 - b1) * g[i];
      mm[i] = a + b;
      float c = float(b2) * vv[i], d = float(1 - b2) * g[i];
      d = d * g[i];
      vv[i] = c + d;
      float den = std::sqrt(vv[i]) * inv;
      den = den + float(eps);
      float upd = step * mm[i];
      w[i] = pi - upd / den;
      INFO("step " << t << ", element " << i);
      CHECK(p.data<float>()[i] == w[i]);
    }
  }
}

TEST_CASE("scale_in_place: binary Mul's bits by a 0-d scale, in place",
          "[cpu_backend]") {
  // Values whose products round: thirds, not quarters.
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back((i - 500) / 3.0 + 1e-3 * i);
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    INFO(ss::types::dtype_name(d));
    for (double s : {1.0 / 3.0, 0.125, -7.1}) {
      Tensor x = T({1000}, v, d);
      Tensor want = B().binary(BinaryOp::Mul, x, Tensor::full({}, s, d));
      const void* buffer = x.raw();
      B().scale_in_place(x, s);
      CHECK(x.raw() == buffer);
      CHECK(std::memcmp(x.raw(), want.raw(), 1000 * ss::types::dtype_size(d)) ==
            0);
    }
  }
}
