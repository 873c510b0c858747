// The CPU kernels' broadcast walk (Note [Broadcast without materialising]):
// binary ops, where and broadcast_to on every broadcast pattern, each dtype,
// against a naive loop that reads each operand at its broadcast index
// (bidx, from the output's multi-index; no strides, no coalescing). The
// rows are long and odd (37, 67, 131) so the vectorised loops' tails run.
// The values are exact in every dtype (multiples of 0.25 in [-3, 3], or
// small ints) and add, mul and maximum round once, so results must match
// the double-precision loop rounded to the dtype exactly (tolerance 0).

#include <catch2/catch.hpp>

#include "ops/tests/cpu_test_util.h"

using namespace cpu_test;

namespace {

struct Pattern {
  const char* name;
  Shape a, b;
};

// Every way an operand is broadcast: a scalar, a row, a column, a middle
// axis, both sides at once, the attention mask [n t] under [b H n t], and
// the reductions' keepdims shapes on each side.
const std::vector<Pattern> kPatterns = {
    {"same", {5, 67}, {5, 67}},
    {"scalar right", {3, 67}, {}},
    {"scalar left", {}, {3, 67}},
    {"size-1 scalar", {3, 67}, {1, 1}},
    {"row", {4, 3, 67}, {67}},
    {"row left", {67}, {4, 3, 67}},
    {"row with leading 1s", {4, 67}, {1, 1, 67}},
    {"column", {6, 37}, {6, 1}},
    {"column left", {6, 1}, {6, 37}},
    {"keepdims column, rank 3", {2, 3, 37}, {2, 3, 1}},
    {"middle axis", {3, 5, 37}, {3, 1, 37}},
    {"middle axis left", {3, 1, 37}, {3, 5, 37}},
    {"middle of rank 4", {2, 3, 4, 37}, {2, 1, 4, 37}},
    {"both sides", {7, 1}, {1, 67}},
    {"both sides, rank 3", {4, 1, 37}, {1, 5, 1}},
    {"outer and inner", {1, 5, 1}, {3, 5, 37}},
    {"mask under heads", {2, 3, 9, 9}, {9, 9}},
    {"first axis", {1, 131}, {3, 131}},
    {"zero size", {2, 0, 3}, {0, 1}},
};

Shape out_shape(const Shape& a, const Shape& b) {
  Shape o(std::max(a.size(), b.size()));
  for (size_t i = 0; i < o.size(); ++i) {
    size_t la = o.size() - a.size(), lb = o.size() - b.size();
    int64_t da = i >= la ? a[i - la] : 1, db = i >= lb ? b[i - lb] : 1;
    o[i] = da == 1 ? db : da;
  }
  return o;
}

double apply(BinaryOp op, double x, double y) {
  switch (op) {
    case BinaryOp::Add:
      return x + y;
    case BinaryOp::Mul:
      return x * y;
    case BinaryOp::Maximum:
      return std::max(x, y);
    case BinaryOp::Lt:
      return x < y;
    default:
      return x - y;
  }
}

}  // namespace

TEST_CASE("binary ops walk every broadcast pattern by strides", "[cpu]") {
  int checked = 0;
  for (DType d : kAllDTypes)
    for (const Pattern& p : kPatterns)
      for (BinaryOp op : {BinaryOp::Add,
                          BinaryOp::Sub,
                          BinaryOp::Mul,
                          BinaryOp::Maximum,
                          BinaryOp::Lt}) {
        bool boolean = d == DType::Bool;
        if (boolean && op != BinaryOp::Maximum && op != BinaryOp::Lt)
          continue;  // arithmetic on bools is computed in i64 by the API
        INFO(p.name << ", op " << int(op) << ", " << ss::types::dtype_name(d));
        Tensor a = rnd(p.a, d, 3), b = rnd(p.b, d, 4);
        if (boolean) a = B().cast(a, DType::Bool), b = B().cast(b, DType::Bool);
        Shape os = out_shape(p.a, p.b);
        std::vector<double> va = a.to_doubles(), vb = b.to_doubles(), want;
        for (int64_t i = 0; i < numel_of(os); ++i)
          want.push_back(apply(op, va[bidx(p.a, os, i)], vb[bidx(p.b, os, i)]));
        bool cmp = op == BinaryOp::Lt;
        if (!cmp)  // the loop's result rounded to the dtype, as the kernel's
          want = T(os, want, d).to_doubles();
        Tensor y = B().binary(op, a, b);
        CHECK(y.dtype() == (cmp ? DType::Bool : d));
        check_close(y, os, want, 0);
        ++checked;
      }
  CHECK(checked == 6 * 19 * 5 + 19 * 2);
}

TEST_CASE("where walks each operand's broadcast by strides", "[cpu]") {
  struct Case {
    const char* name;
    Shape c, a, b;
  };
  // masked_fill's (mask [n t], scores [b H n t], a scalar fill) first, then
  // each operand broadcast on its own and all three at once.
  const std::vector<Case> cases = {
      {"masked_fill", {9, 9}, {2, 3, 9, 9}, {}},
      {"all full", {4, 37}, {4, 37}, {4, 37}},
      {"scalar a", {4, 37}, {}, {4, 37}},
      {"two scalars", {4, 37}, {}, {}},
      {"row condition", {37}, {4, 37}, {4, 37}},
      {"column condition", {4, 1}, {4, 37}, {}},
      {"column condition, scalar a", {4, 1}, {}, {4, 37}},
      {"middle axis", {3, 1, 37}, {3, 5, 37}, {1, 5, 1}},
      {"each its own axis", {5, 1, 1}, {1, 6, 1}, {1, 1, 37}},
      {"zero size", {0, 3}, {3}, {}},
  };
  // f32 and i32 take the vector row (Note [Vector row kernels]).
  for (DType d : {DType::F32, DType::I32, DType::F64, DType::BF16, DType::I64})
    for (const Case& k : cases) {
      INFO(k.name << ", " << ss::types::dtype_name(d));
      Tensor c = B().cast(rnd(k.c, DType::F32, 5), DType::Bool);
      Tensor a = rnd(k.a, d, 6), b = rnd(k.b, d, 7);
      Shape os = out_shape(out_shape(k.c, k.a), k.b);
      std::vector<double> vc = c.to_doubles(), va = a.to_doubles(),
                          vb = b.to_doubles(), want;
      for (int64_t i = 0; i < numel_of(os); ++i)
        want.push_back(vc[bidx(k.c, os, i)] != 0 ? va[bidx(k.a, os, i)]
                                                 : vb[bidx(k.b, os, i)]);
      Tensor y = B().where(c, a, b);
      CHECK(y.dtype() == d);
      check_close(y, os, want, 0);
    }
}

TEST_CASE("broadcast_to copies runs and fills repeats", "[cpu]") {
  const std::vector<std::pair<Shape, Shape>> cases = {{{67}, {3, 67}},
                                                      {{5, 1}, {5, 37}},
                                                      {{3, 1, 37}, {3, 4, 37}},
                                                      {{1, 5, 1}, {2, 5, 37}},
                                                      {{}, {4, 9}},
                                                      {{1, 1}, {3, 1, 4}},
                                                      {{4, 1, 1}, {4, 6, 7}},
                                                      {{2, 3}, {2, 3}},
                                                      {{0, 1}, {2, 0, 5}}};
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::I32, DType::Bool})
    for (auto& [from, to] : cases) {
      INFO(shape_string(from)
           << " to " << shape_string(to) << ", " << ss::types::dtype_name(d));
      Tensor x = rnd(from, d == DType::Bool ? DType::F32 : d, 8);
      if (d == DType::Bool) x = B().cast(x, DType::Bool);
      std::vector<double> v = x.to_doubles(), want;
      for (int64_t i = 0; i < numel_of(to); ++i)
        want.push_back(v[bidx(from, to, i)]);
      check_close(B().broadcast_to(x, to), to, want, 0);
    }
}
