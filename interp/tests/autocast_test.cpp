// Note [Autocast] (interp/eval/autocast.cpp): autocast(f, bf16) runs f's
// products in bf16, its losses in f32, and keeps f's signature.
#include <catch2/catch.hpp>

#include "interp/tests/check_test_util.h"
#include "interp/tests/eval_helpers.h"

using ss::testing::check_text;
using ss::testing::run_program;

TEST_CASE("autocast's instance types each op in the dtype it runs in",
          "[check][autocast]") {
  auto c = check_text(R"(dim D = 3
dim C = 2

model Net:
    l: Linear[D C]

fn logits(m: Net, x: [b D]) -> [b C] = gelu(linear(m.l, x))

fn loss(m: Net, x: [b D], y: [b] i64) -> f32:
    let z = logits(m, x)
    return cross_entropy(z @ ones([C C]), y)

fn main():
    let m = Net.init(seed=0)
    let l, g = value_and_grad(autocast(loss, bf16), m, ones([2 D]), zeros([2] i64))
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  const ss::check::FnInfo* f = c->prog->fn("loss");
  REQUIRE(f);
  REQUIRE(f->autocast_instances.count("bf16"));
  const ss::check::FnInfo* inst = c->prog->fn("loss[autocast=bf16]");
  REQUIRE(inst);
  CHECK(inst->autocast == ss::types::DType::BF16);
  CHECK(inst->instance_of == "loss");
  // The fn it calls runs as its own autocast instance; its signature keeps
  // its declared dtypes.
  const ss::check::FnInfo* callee = c->prog->fn("logits[autocast=bf16]");
  REQUIRE(callee);
  CHECK(callee->result.str() == "[b C]");
  // In the instance: `z` is f32 (logits' declared result), the product
  // bf16, cross_entropy f32 (torch's CPU lists).
  const auto& body = inst->decl->body;
  const ss::ast::Expr& ce = *body[1]->value;
  const ss::ast::Expr& product = *ce.args[0].value;
  const ss::check::ExprInfo* pi = c->prog->info(&product);
  REQUIRE(pi);
  CHECK(pi->autocast == ss::types::DType::BF16);
  CHECK(pi->type.str() == "[b C] bf16");
  const ss::check::ExprInfo* ci = c->prog->info(&ce);
  REQUIRE(ci);
  CHECK(ci->autocast == ss::types::DType::F32);
  CHECK(ci->type.str() == "f32");
  // The fn itself is unchanged.
  const ss::ast::Expr& plain = *f->decl->body[1]->value->args[0].value;
  CHECK(c->prog->info(&plain)->type.str() == "[b C]");
  CHECK_FALSE(c->prog->info(&plain)->autocast);
}

TEST_CASE("autocast rounds a product to bf16 and returns the declared dtype",
          "[eval][autocast]") {
  // x @ w with x = [1 1 1] and w's column 0.1: in f32 0.3 (0.30000001); in
  // bf16, 0.1 is 0.10009765625, the sum 0.30029296875 lies halfway between
  // bf16's 0.2998046875 (307/1024) and 0.30078125 (308/1024), and rounds to
  // the even 308/1024. The result is f32 (dot's declared type), holding
  // the bf16 value exactly. The gradient of sum(x @ w) by w is x, f32.
  auto r = run_program(R"(dim D = 3
model M:
    w: [D 1] = constant(0.1)

fn dot(m: M, x: [b D]) -> [b 1] = x @ m.w

fn total(m: M, x: [b D]) -> f32 = sum(dot(m, x))

fn main():
    let m = M.init(seed=0)
    let x = ones([1 D])
    print(float(sum(dot(m, x))) == 0.30000001192092896)
    let f = autocast(dot, bf16)
    let y = f(m, x)
    print(y)
    print(float(sum(y)) == 0.30078125)
    let l, g = value_and_grad(autocast(total, bf16), m, x)
    print(g.w)
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str() ==
        "true\n[1 1] f32\n[[0.3008]]\ntrue\n[3 1] f32\n[[1]\n [1]\n [1]]\n");
}

TEST_CASE("autocast refuses what it cannot run", "[check][autocast]") {
  auto c = check_text(R"(dim D = 3
fn twice(x: [b D] T) -> [b D] T = x + x
fn main():
    let f = autocast(twice, bf16)
    let g = autocast(sum, bf16)
)");
  REQUIRE_FALSE(c->prog);
  CHECK(c->codes() == std::vector<std::string>{"E0303@4:22", "E0303@5:22"});
  const std::string text = c->rendered();
  CHECK(text.find("autocast of `twice`, which is generic over a dtype") !=
        std::string::npos);
  CHECK(text.find("autocast takes a fn declared in the program") !=
        std::string::npos);
}
