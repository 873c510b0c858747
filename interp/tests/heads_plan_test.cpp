// `split H`'s plan of an op from its types (Note [Split heads] in
// interp/check/plan/heads_plan.cpp): which axis a type splits, and each
// kind of op's step, against the cases devices.md item 9 names (the
// attention example's lines, an op along H, a sum over H, a whole value
// with H after another axis).
#include "interp/check/plan/heads_plan.h"

#include <catch2/catch.hpp>

namespace {

using ss::check::HeadsSite;
using ss::check::HeadsStep;
using ss::types::Axis;
using ss::types::Type;
using R = ss::ops::DeviceRule::Heads;

Axis H() {
  return Axis::dim("H", 12);
}
Axis Dh() {
  return Axis::dim("Dh", 64);
}
Axis D() {
  return Axis::dim("D", 768);
}
Axis var(const char* name, uint32_t id) {
  return Axis::variable(id, name);
}
Axis b() {
  return var("b", 1);
}
Axis n() {
  return var("n", 2);
}
Axis t() {
  return var("t", 3);
}

Type heads4() {
  return Type::tensor({b(), H(), n(), Dh()});
}  // q, k, v, o

HeadsStep plan(R rule,
               std::vector<Type> operands,
               Type result,
               std::vector<int> over = {},
               bool reduces_all = false) {
  HeadsSite s;
  s.rule = rule;
  s.operands = std::move(operands);
  s.result = std::move(result);
  s.over = std::move(over);
  s.reduces_all = reduces_all;
  return ss::check::plan_heads(s, "H");
}

}  // namespace

TEST_CASE("heads plan: the split axis of a type", "[devices]") {
  using ss::check::heads_axis;
  CHECK(heads_axis(heads4(), "H") == 1);
  // A group that starts with H: blocks of whole heads.
  CHECK(heads_axis(Type::tensor({Axis::group({H(), Dh()}), D()}), "H") == 0);
  // H after another axis in a group, twice, or absent: whole.
  CHECK(heads_axis(Type::tensor({D(), Axis::group({Axis::lit(3), H(), Dh()})}),
                   "H") == -1);
  CHECK(heads_axis(Type::tensor({H(), H()}), "H") == -1);
  CHECK(heads_axis(Type::tensor({b(), n(), D()}), "H") == -1);
  CHECK(heads_axis(Type::of(Type::Kind::Int), "H") == -1);
}

TEST_CASE("heads plan: the attention example's lines", "[devices]") {
  const Type qkv =
      Type::tensor({b(), n(), Axis::group({Axis::lit(3), H(), Dh()})});
  const Type whole = Type::tensor({b(), n(), D()});
  // x @ m.w_qkv: whole operands, a whole result (H after 3): nothing.
  CHECK(
      plan(R::Sums,
           {whole, Type::tensor({D(), Axis::group({Axis::lit(3), H(), Dh()})})},
           qkv) == HeadsStep::None);
  // split(..., b n (3 H Dh) -> b H n Dh): cut to each device's heads.
  CHECK(plan(R::PerHead, {qkv}, Type::tuple({heads4(), heads4(), heads4()})) ==
        HeadsStep::Cut);
  // einsum(q, k, b H n Dh, b H t Dh -> b H n t): per head.
  const Type s = Type::tensor({b(), H(), n(), t()});
  CHECK(plan(R::Sums, {heads4(), Type::tensor({b(), H(), t(), Dh()})}, s) ==
        HeadsStep::Local);
  // masked_fill(s, mask [n t], -inf) and softmax(over=t): per head.
  CHECK(plan(R::PerHead,
             {s, Type::tensor({n(), t()}, ss::types::DType::Bool)},
             s) == HeadsStep::Local);
  CHECK(plan(R::PerHead, {s}, s, {3}) == HeadsStep::Local);
  // rearrange(o, b H n Dh -> b n (H Dh)): per head.
  const Type flat = Type::tensor({b(), n(), Axis::group({H(), Dh()})});
  CHECK(plan(R::PerHead, {heads4()}, flat) == HeadsStep::Local);
  // ... @ m.w_o: H summed away, each device's partial product all-reduced.
  CHECK(plan(R::Sums,
             {flat, Type::tensor({Axis::group({H(), Dh()}), D()})},
             whole) == HeadsStep::Partial);
}

TEST_CASE("heads plan: ops along H, sums over H, whole values with H",
          "[devices]") {
  const Type s = Type::tensor({b(), H(), n(), t()});
  const Type no_h = Type::tensor({b(), n(), t()});
  // softmax over=H: along the split axis, gathered.
  CHECK(plan(R::PerHead, {s}, s, {1}) == HeadsStep::Gather);
  // sum over H: partial sums; mean over H: gathered.
  CHECK(plan(R::Sums, {s}, no_h, {1}) == HeadsStep::Partial);
  CHECK(plan(R::PerHead, {s}, no_h, {1}) == HeadsStep::Gather);
  // sum(x) over every axis: partial sums; over another axis: per head.
  CHECK(plan(R::Sums, {s}, Type::scalar(ss::types::DType::F32), {}, true) ==
        HeadsStep::Partial);
  CHECK(plan(R::Sums, {s}, Type::tensor({b(), H(), n()}), {3}) ==
        HeadsStep::Local);
  // A result with H after another axis is whole: gathered.
  CHECK(plan(R::PerHead,
             {Type::tensor({b(), H(), n(), Dh()})},
             Type::tensor({b(), n(), Axis::group({Dh(), H()})})) ==
        HeadsStep::Gather);
  // An op the table does not know to be per head (dropout's draws).
  CHECK(plan(R::Gathers, {s}, s) == HeadsStep::Gather);
  // A split operand with a whole one that has H: gathered.
  CHECK(plan(R::PerHead, {s, Type::tensor({H(), H()})}, s) ==
        HeadsStep::Gather);
}
