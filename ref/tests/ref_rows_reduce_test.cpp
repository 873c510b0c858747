// Reference rows of matmul, the reductions and the along-an-axis ops
// (ref_table.h).
#include <catch2/catch.hpp>

#include "ref/tests/ref_table.h"

namespace ref_table {

void matmul_rows(std::vector<Row>& rows) {
  auto add = [&](std::string label, Tensor a, Tensor b, double rtol = kElem) {
    rows.push_back(
        {"matmul",
         "matmul " + label,
         rtol,
         {a, b},
         one([](const Ts& in) {
           return FakeFwd("matmul").t("a", in[0]).t("b", in[1]).run1();
         }),
         one([](const Ts& in) { return ref::matmul(in[0], in[1]); })});
  };
  add("2-d", R({5, 7}, 300), R({7, 3}, 301));
  add("1-d @ 2-d", R({7}, 302), R({7, 3}, 303));
  add("2-d @ 1-d", R({5, 7}, 304), R({7}, 305));
  add("1-d @ 1-d", R({7}, 306), R({7}, 307));
  add("batch broadcast", R({2, 1, 4, 6}, 308), R({3, 6, 5}, 309));
  add("batch @ 2-d", R({3, 4, 6}, 310), R({6, 2}, 311));
  add("1-d @ batch", R({6}, 312), R({2, 6, 3}, 313));
  add("K = 2048", R({4, 2048}, 314), R({2048, 3}, 315), kBig);
  add("i64", Ri({2, 3}, 316, -5, 5), Ri({3, 2}, 317, -5, 5));
  rows.push_back(
      {"linear",
       "linear [5 3]",
       kElem,
       {R({5, 3}, 318), R({3, 4}, 319), R({4}, 320)},
       one([](const Ts& in) {
         Model l = {{"w", in[1]}, {"b", in[2]}};
         return FakeFwd("linear").model("l", &l).t("x", in[0]).run1();
       }),
       one([](const Ts& in) { return ref::linear(in[0], in[1], in[2]); })});
  rows.push_back(
      {"linear",
       "linear [2 3 3]",
       kElem,
       {R({2, 3, 3}, 321), R({3, 2}, 322), R({2}, 323)},
       one([](const Ts& in) {
         Model l = {{"w", in[1]}, {"b", in[2]}};
         return FakeFwd("linear").model("l", &l).t("x", in[0]).run1();
       }),
       one([](const Ts& in) { return ref::linear(in[0], in[1], in[2]); })});
}

void reduction_rows(std::vector<Row>& rows) {
  using RF = Tensor (*)(const Tensor&, const std::vector<int>&);
  struct Red {
    const char* op;
    RF f;
    int kind;  // 0: any floats, 1: positive (prod), 2: distinct, 3: bools
  };
  const Red reds[] = {
      {"sum", ref::sum, 0},
      {"mean", ref::mean, 0},
      {"max", ref::max, 2},
      {"min", ref::min, 2},
      {"prod", ref::prod, 1},
      {"std", ref::std, 0},
      {"var", ref::var, 0},
      {"logsumexp", ref::logsumexp, 0},
      {"norm", ref::norm, 0},
      {"argmax", ref::argmax, 2},
      {"argmin", ref::argmin, 2},
      {"any", ref::any, 3},
      {"all", ref::all, 3},
  };
  uint64_t seed = 400;
  auto input = [&](int kind, const Shape& s) {
    ++seed;
    if (kind == 1) return R(s, seed, 0.6, 1.5);
    if (kind == 2) return Distinct(s);
    if (kind == 3) return Ri(s, seed, 0, 1, DType::Bool);
    return R(s, seed, -2, 2);
  };
  for (const Red& r : reds) {
    const char* op = r.op;
    auto add = [&](std::string label,
                   Tensor x,
                   std::optional<std::vector<int>> over,
                   double rtol) {
      rows.push_back({op,
                      std::string(op) + " " + label,
                      rtol,
                      {x},
                      one([op, over](const Ts& in) {
                        FakeFwd f(op);
                        f.t("x", in[0]);
                        if (over) f.over(*over);
                        return f.run1();
                      }),
                      one([f = r.f, over](const Ts& in) {
                        return f(in[0], over ? *over : std::vector<int>{});
                      })});
    };
    add("all axes", input(r.kind, {3, 4, 5}), std::nullopt, kElem);
    add("over -1", input(r.kind, {3, 4, 5}), std::vector<int>{-1}, kElem);
    add("over 0 2", input(r.kind, {3, 4, 5}), std::vector<int>{0, 2}, kElem);
    add("over 1 of [2 3]", input(r.kind, {2, 3}), std::vector<int>{1}, kElem);
    if (r.kind != 1) {
      add("4096 values", input(r.kind, {4096}), std::nullopt, kBig);
      add("[4 3000] over 1",
          input(r.kind, {4, 3000}),
          std::vector<int>{1},
          kBig);
    }
  }
  // Ints: sum and prod give i64, max keeps the dtype, mean gives f32.
  for (auto [op, f] : {std::make_pair("sum", ref::sum),
                       std::make_pair("prod", ref::prod),
                       std::make_pair("max", ref::max),
                       std::make_pair("mean", ref::mean),
                       std::make_pair("argmax", ref::argmax)})
    rows.push_back({op,
                    std::string(op) + " i64",
                    kElem,
                    {Ri({3, 4}, 450, -4, 4)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).over({1}).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0], {1}); })});
  for (const char* op : {"argmax", "argmin"})
    rows.push_back({op,
                    std::string(op) + " ties (the first)",
                    0,
                    {Ri({3, 6}, 455, 0, 1, DType::F64)},
                    one([op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).over({1}).run1();
                    }),
                    one([op](const Ts& in) {
                      return std::string(op) == "argmax"
                                 ? ref::argmax(in[0], {1})
                                 : ref::argmin(in[0], {1});
                    })});
  rows.push_back({"argmax",
                  "argmax over 2 0 (order written)",
                  0,
                  {Distinct({3, 2, 4})},
                  one([](const Ts& in) {
                    return FakeFwd("argmax").t("x", in[0]).over({2, 0}).run1();
                  }),
                  one([](const Ts& in) {
                    return ref::argmax(in[0], {2, 0});
                  })});
  rows.push_back(
      {"sum",
       "sum bool",
       kElem,
       {Bools({3, 4}, 451)},
       one([](const Ts& in) { return FakeFwd("sum").t("x", in[0]).run1(); }),
       one([](const Ts& in) { return ref::sum(in[0]); })});
  // max / min of two values: elementwise, broadcasting.
  for (auto [op, f] : {std::make_pair("max", ref::maximum),
                       std::make_pair("min", ref::minimum)})
    rows.push_back({op,
                    std::string(op) + " of two",
                    kElem,
                    {R({2, 3}, 452), R({3}, 453)},
                    one([op = op](const Ts& in) {
                      return FakeFwd(op).t("x", in[0]).t("y", in[1]).run1();
                    }),
                    one([f = f](const Ts& in) { return f(in[0], in[1]); })});
  for (const char* with : {"", "sum", "max", "min", "prod", "mean"})
    rows.push_back({"reduce",
                    std::string("reduce with=") + with,
                    kElem,
                    {R({3, 4, 2}, 454, 0.6, 1.5)},
                    one([with](const Ts& in) {
                      FakeFwd f("reduce");
                      f.t("x", in[0]).over({0, -1});
                      if (*with) f.str("with", with);
                      return f.run1();
                    }),
                    one([with](const Ts& in) {
                      return ref::reduce(in[0], {0, -1}, *with ? with : "sum");
                    })});
  // A fully masked row: logsumexp is -inf.
  rows.push_back(
      {"logsumexp",
       "logsumexp -inf row",
       kElem,
       {Tensor::from_doubles({2, 2}, {-INFINITY, -INFINITY, 1, 2}, DType::F64)},
       one([](const Ts& in) {
         return FakeFwd("logsumexp").t("x", in[0]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::logsumexp(in[0], {1}); })});
}

void along_rows(std::vector<Row>& rows) {
  for (auto [op, f, rtol] :
       {std::make_tuple("softmax", ref::softmax, kElem),
        std::make_tuple("log_softmax", ref::log_softmax, kBig),
        std::make_tuple("cumsum", ref::cumsum, kElem)}) {
    auto add = [&, op = op, f = f](
                   std::string label, Tensor x, int axis, double tol) {
      rows.push_back({op,
                      std::string(op) + " " + label,
                      tol,
                      {x},
                      one([op, axis](const Ts& in) {
                        return FakeFwd(op).t("x", in[0]).over({axis}).run1();
                      }),
                      one([f, axis](const Ts& in) { return f(in[0], axis); })});
    };
    add("over 1", R({3, 5}, 500, -3, 3), 1, rtol);
    add("over 0", R({3, 5}, 501, -3, 3), 0, rtol);
    add("over -2 of [2 3 4]", R({2, 3, 4}, 502, -3, 3), -2, rtol);
    add("[4 3000] over 1", R({4, 3000}, 503, -3, 3), 1, kBig);
  }
  rows.push_back({"softmax",
                  "softmax -inf",
                  kElem,
                  {Tensor::from_doubles(
                      {2, 3}, {1000, 1000, -INFINITY, 0, 1, 2}, DType::F64)},
                  one([](const Ts& in) {
                    return FakeFwd("softmax").t("x", in[0]).over({1}).run1();
                  }),
                  one([](const Ts& in) { return ref::softmax(in[0], 1); })});
  rows.push_back({"cumsum",
                  "cumsum i64",
                  0,
                  {Ri({3, 4}, 504, -5, 5)},
                  one([](const Ts& in) {
                    return FakeFwd("cumsum").t("x", in[0]).over({1}).run1();
                  }),
                  one([](const Ts& in) { return ref::cumsum(in[0], 1); })});
  for (int axis : {1, 0, -1})
    rows.push_back({"sort",
                    "sort over " + std::to_string(axis),
                    kElem,
                    {Distinct({4, 6})},
                    [axis](const Ts& in) {
                      return FakeFwd("sort").t("x", in[0]).over({axis}).run();
                    },
                    [axis](const Ts& in) {
                      auto [v, i] = ref::sort(in[0], axis);
                      return Ts{v, i};
                    }});
  for (auto [k, axis] :
       {std::make_pair(3, -1), std::make_pair(1, 0), std::make_pair(0, 1)})
    rows.push_back({"topk",
                    "topk k=" + std::to_string(k),
                    kElem,
                    {Distinct({4, 6})},
                    [k = k, axis = axis](const Ts& in) {
                      return FakeFwd("topk")
                          .t("x", in[0])
                          .integer("k", k)
                          .over({axis})
                          .run();
                    },
                    [k = k, axis = axis](const Ts& in) {
                      auto [v, i] = ref::topk(in[0], k, axis);
                      return Ts{v, i};
                    }});
  rows.push_back(
      {"gather",
       "gather over 1",
       kElem,
       {R({3, 4}, 505), Ri({3, 6}, 506, 0, 3)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 1); })});
  rows.push_back(
      {"gather",
       "gather over 0, smaller idx",
       kElem,
       {R({3, 4}, 507), Ri({5, 2}, 508, 0, 2)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 0); })});
  rows.push_back(
      {"gather",
       "gather over 0",
       kElem,
       {R({3, 4}, 513), Ri({5, 4}, 514, 0, 2)},
       one([](const Ts& in) {
         return FakeFwd("gather")
             .t("x", in[0])
             .t("idx", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::gather(in[0], in[1], 0); })});
  rows.push_back({"sort",
                  "sort ties (stable)",
                  kElem,
                  {Ri({3, 8}, 515, 0, 2, DType::F64)},
                  [](const Ts& in) {
                    return FakeFwd("sort").t("x", in[0]).over({1}).run();
                  },
                  [](const Ts& in) {
                    auto [v, i] = ref::sort(in[0], 1);
                    return Ts{v, i};
                  }});
  rows.push_back(
      {"scatter",
       "scatter duplicate indices",
       kElem,
       {R({2, 4}, 516), I({2, 2}, {1, 1, 3, 3}), R({2, 2}, 517)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 1); })});
  // Distinct indices per row (torch leaves duplicates unspecified).
  Tensor sidx = I({3, 2}, {3, 0, 1, 2, 0, 3});
  rows.push_back(
      {"scatter",
       "scatter over 1",
       kElem,
       {R({3, 4}, 509), sidx, R({3, 2}, 510)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 1); })});
  rows.push_back(
      {"scatter",
       "scatter 0-d value over 0",
       kElem,
       {R({3, 4}, 511), I({1, 4}, {2, 0, 1, 2}), R({}, 512)},
       one([](const Ts& in) {
         return FakeFwd("scatter")
             .t("x", in[0])
             .t("idx", in[1])
             .t("v", in[2])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::scatter(in[0], in[1], in[2], 0); })});
}

}  // namespace ref_table
