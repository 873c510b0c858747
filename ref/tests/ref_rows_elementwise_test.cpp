// Reference rows of the elementwise ops: unary and binary (ref_table.h).
#include <catch2/catch.hpp>

#include "ref/tests/ref_table.h"

namespace ref_table {

void unary_rows(std::vector<Row>& rows) {
  struct U {
    const char* op;
    Tensor (*ref)(const Tensor&);
    double lo, hi, rtol;
  };
  const U us[] = {
      {"abs", ref::abs, -2, 2, kElem},
      {"sign", ref::sign, -2, 2, kElem},
      {"neg", ref::neg, -2, 2, kElem},
      {"relu", ref::relu, -2, 2, kElem},
      {"exp", ref::exp, -3, 3, kElem},
      {"expm1", ref::expm1, -3, 3, kElem},
      {"log", ref::log, 0.05, 4, kElem},
      {"log1p", ref::log1p, -0.5, 3, kElem},
      {"sqrt", ref::sqrt, 0, 4, kElem},
      {"rsqrt", ref::rsqrt, 0.1, 4, kElem},
      {"sin", ref::sin, -4, 4, kElem},
      {"cos", ref::cos, -4, 4, kElem},
      {"tanh", ref::tanh, -3, 3, kElem},
      {"sigmoid", ref::sigmoid, -8, 8, kElem},
      {"silu", ref::silu, -8, 8, kBig},
      {"softplus", ref::softplus, -20, 20, kBig},
      {"gelu", [](const Tensor& x) { return ref::gelu(x); }, -5, 5, kBig},
  };
  uint64_t seed = 100;
  for (const U& u : us) {
    const char* op = u.op;
    rows.push_back(
        {op,
         op,
         u.rtol,
         {R({3, 17}, seed++, u.lo, u.hi)},
         one([op](const Ts& in) { return FakeFwd(op).t("x", in[0]).run1(); }),
         one([f = u.ref](const Ts& in) { return f(in[0]); })});
  }
  rows.push_back(
      {"gelu",
       "gelu tanh",
       kBig,
       {R({4, 9}, 120, -5, 5)},
       one([](const Ts& in) {
         return FakeFwd("gelu").t("x", in[0]).str("approximate", "tanh").run1();
       }),
       one([](const Ts& in) { return ref::gelu(in[0], "tanh"); })});
  // Ints: abs, sign, neg, relu keep them; the others give f32.
  for (auto [op, f] : {std::make_pair("abs", ref::abs),
                       std::make_pair("sign", ref::sign),
                       std::make_pair("neg", ref::neg),
                       std::make_pair("relu", ref::relu),
                       std::make_pair("exp", ref::exp),
                       std::make_pair("expm1", ref::expm1),
                       std::make_pair("sigmoid", ref::sigmoid)}) {
    rows.push_back({op,
                    std::string(op) + " i64",
                    kElem,
                    {Ri({2, 5}, 121, -3, 3)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0]); })});
  }
  Tensor odd = Tensor::from_doubles(
      {6}, {1.5, NAN, INFINITY, -INFINITY, 0, -2}, DType::F64);
  for (auto [op, f] : {std::make_pair("isnan", ref::isnan),
                       std::make_pair("isfinite", ref::isfinite)})
    rows.push_back({op,
                    op,
                    0,
                    {odd},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0]); })});
  rows.push_back({"logical_not",
                  "logical_not",
                  0,
                  {Bools({3, 4}, 122)},
                  one([](const Ts& in) {
                    return FakeFwd("logical_not").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::logical_not(in[0]); })});
}

void binary_rows(std::vector<Row>& rows) {
  using BF = Tensor (*)(const Tensor&, const Tensor&);
  auto add = [&](const char* op,
                 BF f,
                 std::string label,
                 Tensor a,
                 Tensor b,
                 double rtol = kElem) {
    rows.push_back({op,
                    op + (" " + label),
                    rtol,
                    {a, b},
                    one([op](const Ts& in) {
                      return FakeFwd(op).t("a", in[0]).t("b", in[1]).run1();
                    }),
                    one([f](const Ts& in) { return f(in[0], in[1]); })});
  };
  struct B {
    const char* op;
    BF f;
    double alo, ahi, blo, bhi;
  };
  const B bs[] = {
      {"add", ref::add, -2, 2, -2, 2},
      {"sub", ref::sub, -2, 2, -2, 2},
      {"mul", ref::mul, -2, 2, -2, 2},
      {"div", ref::div, -2, 2, 0.25, 2},
      {"pow", ref::pow, 0.25, 3, -2, 2},
      {"maximum", ref::maximum, -1, 1, -1, 1},
      {"minimum", ref::minimum, -1, 1, -1, 1},
      {"floordiv", ref::floordiv, -5, 5, 0.3, 2},
      {"mod", ref::mod, -5, 5, 0.3, 2},
  };
  uint64_t seed = 200;
  for (const B& b : bs) {
    // [2 1 4] with [3 1] -> [2 3 4]; [4] with a 0-d; negative divisors for
    // floordiv and mod come from the second row.
    add(b.op,
        b.f,
        "[2 1 4] [3 1]",
        R({2, 1, 4}, seed, b.alo, b.ahi),
        R({3, 1}, seed + 1, b.blo, b.bhi));
    add(b.op,
        b.f,
        "0-d",
        R({}, seed + 2, b.alo, b.ahi),
        R({4}, seed + 3, b.blo, b.bhi));
    seed += 4;
  }
  add("floordiv",
      ref::floordiv,
      "negative divisor",
      R({3, 4}, 240, -5, 5),
      R({4}, 241, -2, -0.3));
  add("mod",
      ref::mod,
      "negative divisor",
      R({3, 4}, 242, -5, 5),
      R({4}, 243, -2, -0.3));
  // Ints: exact, Python's floored // and %.
  for (auto [op, f] : {std::make_pair("add", ref::add),
                       std::make_pair("sub", ref::sub),
                       std::make_pair("mul", ref::mul),
                       std::make_pair("maximum", ref::maximum),
                       std::make_pair("div", ref::div)})
    add(op, f, "i64", Ri({3, 4}, 250, -9, 9), Ri({4}, 251, 1, 5));
  add("floordiv",
      ref::floordiv,
      "i64",
      Ri({3, 4}, 252, -9, 9),
      Tensor::from_doubles({4}, {3, -3, 2, -5}, DType::I64));
  add("mod",
      ref::mod,
      "i64",
      Ri({3, 4}, 253, -9, 9),
      Tensor::from_doubles({4}, {3, -3, 2, -5}, DType::I64));
  add("pow", ref::pow, "i64", Ri({3, 4}, 254, -3, 3), Ri({4}, 255, 0, 3));
  add("add", ref::add, "i64 + f64", Ri({2, 3}, 256, -9, 9), R({3}, 257));
  // Comparisons on small integers (as floats), so that ties occur.
  for (auto [op, f] : {std::make_pair("eq", ref::eq),
                       std::make_pair("ne", ref::ne),
                       std::make_pair("lt", ref::lt),
                       std::make_pair("le", ref::le),
                       std::make_pair("gt", ref::gt),
                       std::make_pair("ge", ref::ge)}) {
    add(op,
        f,
        "ties",
        Ri({2, 1, 5}, 260, 0, 2, DType::F64),
        Ri({3, 1}, 261, 0, 2, DType::F64));
    add(op,
        f,
        "i64 with f64",
        Ri({4}, 262, 0, 2),
        Ri({2, 4}, 263, 0, 2, DType::F64));
  }
  for (auto [op, f] : {std::make_pair("logical_and", ref::logical_and),
                       std::make_pair("logical_or", ref::logical_or)})
    add(op, f, "bool", Bools({2, 1, 4}, 270), Bools({3, 4}, 271));
  // A host number: the weak scalar takes x's dtype.
  rows.push_back({"sub",
                  "sub host number",
                  kElem,
                  {R({2, 3}, 280)},
                  one([](const Ts& in) {
                    return FakeFwd("sub").t("a", in[0]).num("b", 0.75).run1();
                  }),
                  one([](const Ts& in) {
                    return ref::sub(in[0], Tensor::scalar(0.75, in[0].dtype()));
                  })});
  rows.push_back(
      {"where",
       "where [2 3] [3] [2 1]",
       kElem,
       {Bools({2, 3}, 281), R({3}, 282), R({2, 1}, 283)},
       one([](const Ts& in) {
         return FakeFwd("where")
             .t("c", in[0])
             .t("a", in[1])
             .t("b", in[2])
             .run1();
       }),
       one([](const Ts& in) { return ref::where(in[0], in[1], in[2]); })});
  rows.push_back(
      {"clip",
       "clip",
       kElem,
       {R({2, 5}, 284, -2, 2), R({}, 285, -1, 0), R({5}, 286, 0, 1)},
       one([](const Ts& in) {
         return FakeFwd("clip")
             .t("x", in[0])
             .t("lo", in[1])
             .t("hi", in[2])
             .run1();
       }),
       one([](const Ts& in) { return ref::clip(in[0], in[1], in[2]); })});
  for (double v : {-2.5, -double(INFINITY)})
    rows.push_back(
        {"masked_fill",
         "masked_fill " + std::to_string(v),
         kElem,
         {R({3, 4}, 287), Bools({1, 4}, 288)},
         one([v](const Ts& in) {
           return FakeFwd("masked_fill")
               .t("x", in[0])
               .t("mask", in[1])
               .num("v", v)
               .run1();
         }),
         one([v](const Ts& in) { return ref::masked_fill(in[0], in[1], v); })});
}

}  // namespace ref_table
