// Reference rows of the shape ops (ref_table.h).
#include <catch2/catch.hpp>

#include "ref/tests/ref_table.h"

namespace ref_table {

void shape_rows(std::vector<Row>& rows) {
  for (int axis : {1, -1, 0}) {
    Ts xs = axis == 0 ? Ts{R({2, 3}, 600), R({1, 3}, 601), R({3, 3}, 602)}
                      : Ts{R({2, 3}, 600), R({2, 1}, 601), R({2, 2}, 602)};
    rows.push_back(
        {"concat",
         "concat over " + std::to_string(axis),
         kElem,
         xs,
         one([axis](const Ts& in) {
           return FakeFwd("concat").list("xs", in).over({axis}).run1();
         }),
         one([axis](const Ts& in) { return ref::concat(in, axis); })});
  }
  rows.push_back(
      {"stack",
       "stack 3",
       kElem,
       {R({2, 3}, 603), R({2, 3}, 604), R({2, 3}, 605)},
       one([](const Ts& in) {
         return FakeFwd("stack").list("xs", in).integer("new", 3).run1();
       }),
       one([](const Ts& in) { return ref::stack(in, 0); })});
  for (auto [i, axis] :
       {std::make_pair(1, 0), std::make_pair(-1, -1), std::make_pair(2, 1)})
    rows.push_back({"take",
                    "take int " + std::to_string(i),
                    kElem,
                    {R({3, 4, 2}, 606)},
                    one([i = i, axis = axis](const Ts& in) {
                      return FakeFwd("take")
                          .t("x", in[0])
                          .integer("i", i)
                          .over({axis})
                          .run1();
                    }),
                    one([i = i, axis = axis](const Ts& in) {
                      return ref::take(in[0], i, axis);
                    })});
  rows.push_back(
      {"take",
       "take index tensor",
       kElem,
       {R({3, 4, 2}, 607), I({2, 3}, {3, 0, -1, 1, 1, 2})},
       one([](const Ts& in) {
         return FakeFwd("take").t("x", in[0]).t("i", in[1]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::take(in[0], in[1], 1); })});
  rows.push_back(
      {"take",
       "take index tensor, non-negative",
       kElem,
       {R({3, 4, 2}, 607), I({2, 3}, {3, 0, 2, 1, 1, 2})},
       one([](const Ts& in) {
         return FakeFwd("take").t("x", in[0]).t("i", in[1]).over({1}).run1();
       }),
       one([](const Ts& in) { return ref::take(in[0], in[1], 1); })});
  rows.push_back(
      {"put",
       "put int",
       kElem,
       {R({3, 4}, 608), R({3}, 609)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .integer("i", -2)
             .t("v", in[1])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], -2, in[1], 1); })});
  rows.push_back(
      {"put",
       "put int, broadcast value",
       kElem,
       {R({3, 4}, 610), R({}, 611)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .integer("i", 0)
             .t("v", in[1])
             .over({0})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], 0, in[1], 0); })});
  rows.push_back(
      {"put",
       "put index tensor",
       kElem,
       {R({3, 4}, 612), I({2}, {3, -4}), R({3, 2}, 613)},
       one([](const Ts& in) {
         return FakeFwd("put")
             .t("x", in[0])
             .t("i", in[1])
             .t("v", in[2])
             .over({1})
             .run1();
       }),
       one([](const Ts& in) { return ref::put(in[0], in[1], in[2], 1); })});
  for (int k : {2, -3, 7, 0})
    rows.push_back(
        {"roll",
         "roll " + std::to_string(k),
         kElem,
         {R({3, 5}, 614)},
         one([k](const Ts& in) {
           return FakeFwd("roll")
               .t("x", in[0])
               .integer("k", k)
               .over({-1})
               .run1();
         }),
         one([k](const Ts& in) { return ref::roll(in[0], k, -1); })});
  rows.push_back(
      {"pad",
       "pad",
       kElem,
       {R({2, 3}, 615)},
       one([](const Ts& in) {
         return FakeFwd("pad")
             .t("x", in[0])
             .over({0})
             .integer("to", 4)
             .num("value", -1.5)
             .run1();
       }),
       one([](const Ts& in) { return ref::pad(in[0], 0, 4, -1.5); })});
  rows.push_back(
      {"pad",
       "pad default",
       kElem,
       {R({2, 3}, 616)},
       one([](const Ts& in) {
         return FakeFwd("pad").t("x", in[0]).over({1}).integer("to", 3).run1();
       }),
       one([](const Ts& in) { return ref::pad(in[0], 1, 3); })});
  rows.push_back(
      {"reshape",
       "reshape",
       kElem,
       {R({2, 3, 4}, 617)},
       one([](const Ts& in) {
         return FakeFwd("reshape").t("x", in[0]).type("sizes", {4, 6}).run1();
       }),
       one([](const Ts& in) {
         return ref::reshape(in[0], {4, 6});
       })});
  for (DType d : {DType::I64, DType::I32, DType::Bool, DType::F64, DType::F32})
    rows.push_back(
        {"to",
         std::string("to ") + ss::types::dtype_name(d),
         kElem,
         {R({2, 5}, 618, -4, 4)},
         one([d](const Ts& in) {
           return FakeFwd("to").t("x", in[0]).type("dtype", {}, d).run1();
         }),
         one([d](const Ts& in) { return ref::to(in[0], d); })});
  rows.push_back(
      {"to",
       "to f32 from i64",
       kElem,
       {Ri({4}, 619, -9, 9)},
       one([](const Ts& in) {
         return FakeFwd("to")
             .t("x", in[0])
             .type("dtype", {}, DType::F32)
             .run1();
       }),
       one([](const Ts& in) { return ref::to(in[0], DType::F32); })});
  // Makers: no float inputs; the dtype is the type argument's.
  for (DType d : {DType::F32, DType::F64, DType::I64}) {
    std::string n = ss::types::dtype_name(d);
    rows.push_back({"zeros",
                    "zeros " + n,
                    0,
                    {},
                    one([d](const Ts&) {
                      return FakeFwd("zeros").type("type", {2, 3}, d).run1();
                    }),
                    one([d](const Ts&) {
                      return ref::zeros({2, 3}, d);
                    })});
    rows.push_back({"ones",
                    "ones " + n,
                    0,
                    {},
                    one([d](const Ts&) {
                      return FakeFwd("ones").type("type", {3}, d).run1();
                    }),
                    one([d](const Ts&) { return ref::ones({3}, d); })});
    rows.push_back(
        {"full",
         "full " + n,
         0,
         {},
         one([d](const Ts&) {
           return FakeFwd("full").type("type", {2, 2}, d).num("v", 2.5).run1();
         }),
         one([d](const Ts&) {
           return ref::full({2, 2}, 2.5, d);
         })});
  }
  rows.push_back(
      {"arange",
       "arange",
       0,
       {},
       one([](const Ts&) { return FakeFwd("arange").integer("n", 7).run1(); }),
       one([](const Ts&) { return ref::arange(7); })});
  rows.push_back(
      {"causal",
       "causal",
       0,
       {},
       one([](const Ts&) {
         return FakeFwd("causal").integer("n", 4).integer("m", 6).run1();
       }),
       one([](const Ts&) { return ref::causal(4, 6); })});
  rows.push_back({"zeros_like",
                  "zeros_like",
                  0,
                  {R({2, 3}, 620)},
                  one([](const Ts& in) {
                    return FakeFwd("zeros_like").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::zeros_like(in[0]); })});
  rows.push_back({"ones_like",
                  "ones_like",
                  0,
                  {Ri({2, 3}, 621, 0, 3)},
                  one([](const Ts& in) {
                    return FakeFwd("ones_like").t("x", in[0]).run1();
                  }),
                  one([](const Ts& in) { return ref::ones_like(in[0]); })});
  rows.push_back(
      {"tensor",
       "tensor rows",
       kElem,
       {R({3}, 622), R({3}, 623)},
       one([](const Ts& in) {
         return FakeFwd("tensor")
             .list("values", in)
             .type("dtype", {}, DType::F64)
             .run1();
       }),
       one([](const Ts& in) { return ref::tensor(in, DType::F64); })});
  rows.push_back({"tensor",
                  "tensor of ints",
                  0,
                  {},
                  one([](const Ts&) {
                    return FakeFwd("tensor")
                        .list("values",
                              {Tensor::scalar(3, DType::I64),
                               Tensor::scalar(-1, DType::I64)})
                        .result(DType::I64)
                        .run1();
                  }),
                  one([](const Ts&) {
                    return ref::tensor({Tensor::scalar(3, DType::I64),
                                        Tensor::scalar(-1, DType::I64)},
                                       DType::I64);
                  })});
  // Random draws: the fake ctx hands out the stream given with mode().
  for (const char* op : {"rand", "randn"})
    for (DType d : {DType::F32, DType::F64})
      rows.push_back({op,
                      std::string(op) + " " + ss::types::dtype_name(d),
                      kElem,
                      {},
                      one([op, d](const Ts&) {
                        FakeFwd f(op);
                        f.type("type", {5, 40}, d).integer("seed", 1);
                        f.mode("seed", false, RandomStream{987654321, 3, 17});
                        return f.run1();
                      }),
                      one([op, d](const Ts&) {
                        return std::string(op) == "rand"
                                   ? ref::rand({5, 40}, d, 987654321, 3, 17)
                                   : ref::randn({5, 40}, d, 987654321, 3, 17);
                      })});
}

}  // namespace ref_table
