// The CPU backend against naive loops: reductions, cumsum, sort and matmul.

#include <catch2/catch.hpp>

#include "ops/tests/cpu_test_util.h"

using namespace ss::ops;
using namespace cpu_test;

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
