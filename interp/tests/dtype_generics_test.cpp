// Note [Dtype variables] (interp/check/generics.cpp): fns and models
// generic over a float dtype, checked once per dtype as instances.
#include <catch2/catch.hpp>

#include "interp/tests/check_test_util.h"
#include "interp/tests/eval_helpers.h"

using ss::testing::check_text;
using ss::testing::run_program;

namespace {

// The user fn a call of [callee] in main resolves to, in source order.
std::vector<std::string> calls_of(const ss::check::Program& p,
                                  const std::string& callee) {
  std::vector<std::string> out;
  const ss::check::FnInfo* main = p.fn("main");
  REQUIRE(main);
  std::function<void(const ss::ast::Expr&)> walk = [&](const ss::ast::Expr& e) {
    if (e.kind == ss::ast::Expr::Kind::Call && e.callee &&
        e.callee->name == callee)
      if (const auto* in = p.info(&e); in && in->resolution.fn)
        out.push_back(in->resolution.fn->name);
    for (const auto& a : e.args)
      if (a.value) walk(*a.value);
  };
  for (const auto& s : main->decl->body)
    if (s && s->value) walk(*s->value);
  return out;
}

}  // namespace

TEST_CASE("a generic fn has an instance per float dtype, and calls pick one",
          "[check][generics]") {
  auto c = check_text(R"(dim D = 4

fn scale(x: [b D] T, k: T) -> [b D] T = x * k

fn main():
    let a = scale(ones([2 D]), 2.0)
    let b = scale(ones([2 D] f64), to(ones([]), f64))
    let h = scale(ones([2 D] bf16), 0.5)
    let g = scale(ones([2 D] f16), 0.5)
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  const ss::check::FnInfo* f = c->prog->fn("scale");
  REQUIRE(f);
  CHECK(f->dtype_vars == std::vector<std::string>{"T"});
  CHECK(f->instances.size() == 3);
  for (const char* n : {"scale[T=f64]", "scale[T=bf16]", "scale[T=f16]"}) {
    const ss::check::FnInfo* inst = c->prog->fn(n);
    REQUIRE(inst);
    CHECK(inst->instance_of == "scale");
    CHECK(inst->source_name() == "scale");
  }
  CHECK(c->prog->fn("scale[T=f64]")->result.str() == "[b D] f64");
  CHECK(calls_of(*c->prog, "scale") ==
        std::vector<std::string>{
            "scale", "scale[T=f64]", "scale[T=bf16]", "scale[T=f16]"});
}

TEST_CASE("a generic fn passed as a value names the instance it binds",
          "[check][generics]") {
  auto c = check_text(R"(dim D = 3
model M T:
    w: [D] T = normal(std=1.0)

fn loss(m: M T, x: [b D] T) -> T = sum(x * m.w)

fn main():
    let m = M.init(seed=0, dtype=f64)
    let l, g = value_and_grad(loss, m, ones([2 D] f64))
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  bool seen = false;
  const auto& body = c->prog->fn("main")->decl->body;
  const ss::ast::Expr& vag = *body[1]->value;
  REQUIRE(vag.args.size() == 3);
  const ss::types::Type& t = c->prog->type_of(vag.args[0].value.get());
  CHECK(t.fn_name == "loss[T=f64]");
  seen = true;
  CHECK(seen);
  // The model's type carries its dtype, and its field follows it.
  const ss::types::Type& mt = c->prog->type_of(vag.args[1].value.get());
  CHECK(mt.str() == "M f64");
  CHECK(ss::types::model_field_type(mt, mt.model->fields[0]).str() ==
        "[D] f64");
}

TEST_CASE("the stdlib's models take a dtype, f32 by default",
          "[check][generics]") {
  auto c = check_text(R"(dim D = 3
dim H = 2
model Net:
    a: Linear[D H] f64
    b: LayerNorm[H]
    c: [2] Embedding[D H] bf16
    d: BatchNorm[H] f16
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  const ss::types::ModelInfo* net = c->prog->model("Net");
  REQUIRE(net);
  auto field = [&](const char* name) {
    ss::types::Type m = ss::types::Type::of(ss::types::Type::Kind::Model);
    m.model = net;
    const ss::types::Type ft =
        ss::types::model_field_type(m, *net->field(name));
    REQUIRE(ft.kind == ss::types::Type::Kind::Model);
    std::vector<std::string> out = {ft.str()};
    for (const auto& f : ft.model->fields)
      out.push_back(ss::types::model_field_type(ft, f).str());
    return out;
  };
  CHECK(field("a") ==
        std::vector<std::string>{"Linear[D H] f64", "[D H] f64", "[H] f64"});
  CHECK(field("b") == std::vector<std::string>{"LayerNorm[H]", "[H]", "[H]"});
  CHECK(field("c") ==
        std::vector<std::string>{"[2] Embedding[D H] bf16", "[2 D H] bf16"});
  CHECK(field("d") ==
        std::vector<std::string>{
            "BatchNorm[H] f16", "[H] f16", "[H] f16", "[H] f16", "[H] f16"});
}

TEST_CASE("an error in one instance names it, once", "[check][generics]") {
  auto c = check_text(R"(dim D = 4

fn shift(x: [b D] T) -> [b D] T:
    return x + ones([D])
)");
  REQUIRE_FALSE(c->prog);
  // f32 and f64 keep T; bf16 + f32 is f32 (torch.result_type); f16 is not
  // checked once bf16 failed.
  CHECK(c->codes() == std::vector<std::string>{"E0304@4:12"});
  const std::string text = c->rendered();
  INFO(text);
  CHECK(text.find("the result of `shift[T=bf16]` must be bf16, found f32") !=
        std::string::npos);
  CHECK(text.find("in `shift[T=bf16]`, the instance of `shift` with these "
                  "dtypes") != std::string::npos);
}

TEST_CASE("generic fns and models run in the dtype they are given",
          "[eval][generics]") {
  // Hand values: w is drawn, so the product is checked through a second
  // generic fn of the same values: dot(x, m) == sum(x * w) in each dtype.
  auto r = run_program(R"(dim D = 3
model M T:
    w: [D] T = constant(0.5)

fn scale(x: [b D] T, k: T) -> [b D] T = x * k

fn dot(m: M T, x: [b D] T) -> [b] T = sum(x * m.w, over=D)

fn main():
    let m = M.init(seed=0, dtype=f64)
    let x = reshape(tensor([1.0, 2.0, 3.0], dtype=f64), [1 D])
    print(scale(x, to(tensor(2.0), f64)))
    print(dot(m, x))
    let l, g = value_and_grad(fn_sum, m, x)
    print(g.w)
    print(dot(M.init(seed=0, dtype=bf16), to(x, bf16)))

fn fn_sum(m: M T, x: [b D] T) -> T = sum(dot(m, x) * dot(m, x))
)");
  INFO(r->error);
  REQUIRE(r->error.empty());
  // dot = 0.5 * (1 + 2 + 3) = 3; d/dw sum(dot^2) = 2 * dot * x = [6 12 18].
  CHECK(r->out.str() ==
        "[1 3] f64\n[[2 4 6]]\n[1] f64\n[3]\n[3] f64\n[6 12 18]\n"
        "[1] bf16\n[3]\n");
}
