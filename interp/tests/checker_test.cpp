// The checker: types, shapes, calls, patterns, and its diagnostics.
#include <catch2/catch.hpp>

#include "interp/tests/check_test_util.h"

using ss::testing::check_text;
using ss::testing::read_source_file;
using Codes = std::vector<std::string>;

namespace {

const char* kPrelude = R"(dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

)";  // 12 lines: a program's own lines start at 13

std::unique_ptr<ss::testing::Checked> with_prelude(const std::string& body) {
  return check_text(std::string(kPrelude) + body);
}

}  // namespace

TEST_CASE("the spec's README and attention examples check clean", "[check]") {
  for (const char* f : {"examples/readme_mlp.ss",
                        "examples/attention.ss",
                        "examples/transformer_block.ss",
                        "conformance/spec/spmd_matmul_basic.ss"}) {
    INFO(f);
    auto c = check_text(read_source_file(f));
    INFO(c->rendered());
    CHECK(c->diags.empty());
    CHECK(c->prog != nullptr);
  }
}

TEST_CASE("check --types prints inferred signatures, logs fields and aliases",
          "[check]") {
  auto c = check_text(read_source_file("examples/readme_mlp.ss"));
  REQUIRE(c->prog);
  std::string t = ss::check::describe_types(*c->prog);
  CHECK_THAT(t, Catch::Contains("fn forward(m: Mlp, x: [b D]) -> [b C]"));
  CHECK_THAT(t,
             Catch::Contains("fn evaluate(m: Mlp, batch: [b] Digit) -> "
                             "Logs{loss: f32, acc: f32}"));
  CHECK_THAT(t, Catch::Contains("    g: Grads[Mlp]"));
  auto a = check_text(read_source_file("examples/attention.ss"));
  REQUIRE(a->prog);
  std::string at = ss::check::describe_types(*a->prog);
  // t is an alias of n bound by the einsum pattern; it prints as written.
  CHECK_THAT(at, Catch::Contains("    s: [b H n t]"));
  CHECK_THAT(at, Catch::Contains("    q: [b H n Dh]"));
}

TEST_CASE("E0302 prints as errors.md shows, with the field suggestion",
          "[check]") {
  auto c = with_prelude(R"(fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w2) @ m.w2
)");
  CHECK(c->codes() == Codes{"E0302@14:17"});
  std::string r = c->rendered();
  CHECK_THAT(r,
             Catch::Contains("test.ss:14:17: error[E0302]: matmul "
                             "contracts D (784) with Hd (256)"));
  CHECK_THAT(r, Catch::Contains("14 |     return relu(x @ m.w2) @ m.w2\n"));
  CHECK_THAT(r,
             Catch::Contains("   |                 ^^^^^^^^ x: [b D], "
                             "m.w2: [Hd C]\n"));
  CHECK_THAT(r,
             Catch::Contains("   = help: did you mean m.w1, which is [D Hd]?"));
}

TEST_CASE("every error is reported at once, sorted by location", "[check]") {
  auto c = with_prelude(R"(fn f(x: [b D]) -> [b D]:
    let y = x + undefined_name
    return x @ x

fn g(x: [b C]) -> [b C]:
    return softmax(x, over=D)
)");
  CHECK(c->codes() == Codes{"E0201@14:17", "E0302@15:12", "E0308@18:28"});
}

TEST_CASE("a dim and a literal of the same size are different axes",
          "[check]") {
  auto c = with_prelude(R"(fn f(x: [b D]) -> [b D] = x
fn g(x: [b 784]) -> [b D] = f(x)
)");
  CHECK(c->codes() == Codes{"E0303@14:31"});
  CHECK_THAT(c->rendered(), Catch::Contains("write the dim's name"));
}

TEST_CASE("size variables bind per call, and E0307 names both sizes",
          "[check]") {
  auto c = with_prelude(R"(fn pair(x: [b D], y: [b C]) -> [b D] = x
fn ok(x: [n D], y: [n C]) -> [n D] = pair(x, y)
fn bad(x: [n D], y: [m C]) -> [n D] = pair(x, y)
)");
  CHECK(c->codes() == Codes{"E0307@15:47"});
  CHECK_THAT(c->rendered(),
             Catch::Contains("size variable `b` is n and m in one call"));
}

TEST_CASE("results are checked at return, where result-only variables bind",
          "[check]") {
  auto c = with_prelude(R"(fn f(x: [b D]) -> [b Hd]:
    return x
fn g(x: [b D]) -> [r]:
    return sum(x, over=D)
)");
  CHECK(c->codes() == Codes{"E0303@14:12"});
}

TEST_CASE("only dtypes differing is E0304", "[check]") {
  auto c = with_prelude(R"(fn f(x: [b D] f64) -> [b D] f64 = x
fn g(x: [b D]) -> [b D] f64 = f(x)
)");
  CHECK(c->codes() == Codes{"E0304@14:33"});
}

TEST_CASE("broadcasting aligns from the right", "[check]") {
  auto ok = with_prelude(R"(fn f(x: [b Hd], v: [Hd], s: [b 1]) -> [b Hd]:
    return x + v * s + 1.0
)");
  CHECK(ok->codes().empty());
  auto bad = with_prelude(R"(fn f(x: [b Hd], v: [D]) -> [b Hd]:
    return x + v
)");
  CHECK(bad->codes() == Codes{"E0301@14:12"});
}

TEST_CASE("dtypes follow torch.result_type", "[check]") {
  auto c = check_text(R"(dim D = 4
fn f(a: [D] i32, b: [D] i64, h: [D] bf16, x: [D], d: [D] f64):
    let s = a + b
    let t = h + x
    let u = x + d
    let v = a * 0.5
    let w = a / a
    let n = sum(a > 0)
    let m = mean(a > 0)
)");
  REQUIRE(c->prog);
  const auto* f = c->prog->fn("f");
  std::map<std::string, std::string> t;
  for (const auto& [n, ty] : f->locals) t[n] = ty.str();
  CHECK(t["s"] == "[D] i64");
  CHECK(t["t"] == "[D]");
  CHECK(t["u"] == "[D] f64");
  CHECK(t["v"] == "[D]");
  CHECK(t["w"] == "[D]");
  CHECK(t["n"] == "i64");
  CHECK(t["m"] == "f32");
}

TEST_CASE("over= by name, group, tuple and position, else E0308", "[check]") {
  auto ok = check_text(R"(dim F = 8
dim H = 2
dim Dh = 4
fn f(x: [b n (H Dh)], y: [F F]) -> [b]:
    let a = sum(x, over=(H Dh))
    let c = sum(y, over=0)
    let d = sum(y, over=-1)
    return sum(x, over=(n, (H Dh)))
)");
  CHECK(ok->codes().empty());
  auto bad = check_text(R"(dim F = 8
dim D = 3
fn f(y: [F F], z: [b D]):
    let a = sum(y, over=F)
    let c = sum(z, over=F)
    let d = sum(z, over=2)
)");
  CHECK(bad->codes() == Codes{"E0308@4:25", "E0308@5:25", "E0308@6:25"});
}

TEST_CASE("patterns bind aliases, and groups cut and join axes", "[check]") {
  auto c = check_text(R"(dim K = 4
dim D = 8
dim H = 2
dim Dh = 4
fn micro(x: [b D]) -> [b D]:
    let y = rearrange(x, (K m) D -> K m D)
    let z = rearrange(y, K m D -> (K m) D)
    return z
fn heads(x: [b n D]) -> [b n D]:
    let h = rearrange(x, b n (H Dh) -> b H n Dh)
    return rearrange(h, b H n Dh -> b n (H Dh))
)");
  INFO(c->rendered());
  // (H Dh) cut out of D joins back into D; (K m) out of b back into b.
  CHECK(c->codes().empty());
}

TEST_CASE("pattern errors are E0306", "[check]") {
  auto c = check_text(R"(dim D = 8
dim K = 3
fn f(x: [b n D]):
    let a = rearrange(x, b D -> D b)
    let c = rearrange(x, b n D -> b q)
    let d = rearrange(x, b n (K m) -> b n K m)
    let e = split(x, b n D -> b n D)
)");
  CHECK(c->codes() ==
        Codes{"E0306@4:26", "E0306@5:37", "E0306@6:30", "E0306@7:22"});
}

TEST_CASE("mut guards models passed on or changed", "[check]") {
  auto c = with_prelude(R"(fn step(m: Mlp, mut opt: AdamW[Mlp], g: Grads[Mlp]):
    update(m, opt, g)
fn set(m: Mlp, w: [D Hd]):
    m.w1 = w
fn ok(mut m: Mlp, mut opt: AdamW[Mlp], g: Grads[Mlp]):
    update(m, opt, g)
    let k = copy(m)
    k.w1 = m.w1 * 2.0
)");
  CHECK(c->codes() == Codes{"E0401@14:12", "E0401@16:5"});
}

TEST_CASE("assigning a model field another type is E0402", "[check]") {
  auto c = with_prelude(R"(fn f(mut m: Mlp, w: [Hd D]):
    m.w1 = w
)");
  CHECK(c->codes() == Codes{"E0402@14:12"});
}

TEST_CASE("data domains must fit their dtype (E0501)", "[check]") {
  auto c = check_text(R"(data R:
    a: i64 in 0.0..1.5
    b: bool in 0..1
    c: [4] i32 in 0..3000000000
    d: [4] in 1.0..=0.5
    e: i64 in 0..10
)");
  CHECK(c->codes() ==
        Codes{"E0501@2:12", "E0501@3:13", "E0501@4:16", "E0501@5:12"});
}

TEST_CASE("value_and_grad needs a 0-d float (E0309)", "[check]") {
  auto c = with_prelude(R"(fn per_example(m: Mlp, x: [b D]) -> [b Hd] = x @ m.w1
fn f(m: Mlp, x: [b D]):
    let l, g = value_and_grad(per_example, m, x)
)");
  CHECK(c->codes() == Codes{"E0309@15:31"});
}

TEST_CASE("externs: unknown modules E0204, missing VJP E0310", "[check]") {
  auto c = with_prelude(R"(extern fn nope(x: [*s d]) -> [*s d] = "nosuchmod.f"
extern fn fdiv(a: [*s], b: [*s]) -> [*s] = "nn.floordiv"
fn loss(m: Mlp, x: [b D]) -> f32:
    let h = x @ m.w1
    let q = fdiv(h, ones_like(h))
    return mean(q)
fn ste(m: Mlp, x: [b D]) -> f32:
    let h = x @ m.w1
    let q = fdiv(h, ones_like(h))
    return mean(h + stop_grad(q - h))
fn f(m: Mlp, x: [b D]):
    let l, g = value_and_grad(loss, m, x)
    let l2, g2 = value_and_grad(ste, m, x)
)");
  // The straight-through form (stop_grad) is fine; the plain one is not.
  CHECK(c->codes() == Codes{"E0204@13:39", "E0310@24:16"});
}

TEST_CASE("user declarations shadow the standard library", "[check]") {
  auto c = check_text(R"(dim D = 4
model Linear:
    w: [D D] = zeros()
fn f(l: Linear, x: [b D]) -> [b D] = x @ l.w
fn g(n: LayerNorm[D], x: [b D]) -> [b D] = layer_norm(x, over=D)
)");
  INFO(c->rendered());
  CHECK(c->codes().empty());
}

TEST_CASE("imports bring declarations, and a missing one is reported",
          "[check]") {
  auto c = check_text(
      "import \"does_not_exist.ss\"\nfn main():\n    "
      "print(1)\n");
  CHECK(c->codes() == Codes{"E0204@1:1"});
}

TEST_CASE("a -D option overrides a dim", "[check]") {
  ss::check::Options o;
  o.dim_overrides["D"] = 16;
  auto c = check_text("dim D = 784\nfn f(x: [b D]) -> [b 16] = x\n", o);
  CHECK(c->codes() == Codes{"E0303@2:28"});  // D (16) is still not 16
}
