// The checker's layer pass (Note [Layers run as one product] in
// interp/check/fusion_layers.cpp): which expressions it runs as one
// fused_linear, and that a fused layer computes what the same layer run op
// by op computes, values and the gradients of every param, in f64 on 70
// rows of 37 features into 20 (not multiples of the kernel's 16-row
// blocks). The op by op twin is the layer with its product bound by a
// `let` first, which the pass does not look through. Tolerance: 1e-12
// absolute on values of order 10 (the same product, then the same
// elementwise steps; only the bias's sum over 70 rows and the `/ c` as a
// product by 1 / c differ in rounding, ~1e-15 each); the kernel against
// ref/ is ops/tests/epilogue_test.cpp, against torch tests/torch.

#include <catch2/catch.hpp>
#include <string>

#include "interp/tests/eval_helpers.h"

namespace {

const char* kModel =
    "dim D = 37\ndim H = 20\n\n"
    "model M:\n"
    "    w: [D H] f64 = normal(std=0.3)\n"
    "    b: [H] f64 = normal(std=0.3)\n"
    "    w2: [H H] f64 = normal(std=0.3)\n"
    "    r: [H] f64 = normal(std=1.0)\n"
    "    l: Linear[D H] f64\n\n";

/// A program whose fn `layer` returns [fused] and fn `plain` runs [body]
/// (its op by op twin); main prints, in f64, the largest difference of
/// their outputs and of the gradients of sum(out * out) by each param.
std::string program(const std::string& fused, const std::string& body) {
  auto fn = [](const std::string& name, const std::string& b) {
    return "fn " + name + "(m: M, x: [n D] f64) -> [n H] f64:\n" + b + "\n";
  };
  return std::string(kModel) + fn("layer", "    return " + fused) +
         fn("plain", body) +
         "fn loss(m: M, x: [n D] f64) -> f64:\n"
         "    let y = layer(m, x)\n"
         "    return sum(y * y)\n\n"
         "fn loss_plain(m: M, x: [n D] f64) -> f64:\n"
         "    let y = plain(m, x)\n"
         "    return sum(y * y)\n\n"
         "fn main():\n"
         "    let m = init(M, seed=3)\n"
         "    let x = randn([70 D] f64, seed=4)\n"
         "    let d = max(abs(layer(m, x) - plain(m, x)))\n"
         "    let l1, g1 = value_and_grad(loss, m, x)\n"
         "    let l2, g2 = value_and_grad(loss_plain, m, x)\n"
         "    let dg = max(max(max(abs(g1.w - g2.w)), max(abs(g1.b - g2.b))),\n"
         "                 max(max(abs(g1.w2 - g2.w2)), max(abs(g1.r - "
         "g2.r))))\n"
         "    let dl = max(max(abs(g1.l.w - g2.l.w)), max(abs(g1.l.b - "
         "g2.l.b)))\n"
         "    print(f\"{float(max(max(d, dg), dl)):.3e}\")\n";
}

std::unique_ptr<ss::testing::Run> checked(const std::string& text) {
  auto r = ss::testing::run_program(text, false);
  INFO(r->error);
  REQUIRE(r->prog);
  return r;
}

double largest_difference(const std::string& text) {
  auto r = ss::testing::run_program(text);
  INFO(r->error);
  REQUIRE(r->error.empty());
  return std::stod(r->out.str());
}

/// Whether a fused layer of [r] has act= [act].
bool has_act(const ss::testing::Run& r, const std::string& act) {
  for (const auto& [e, l] : r.prog->fused_layers())
    if (l.act == act) return true;
  return false;
}

}  // namespace

TEST_CASE("layers written out run fused, as op by op", "[fusion]") {
  struct Fused {
    const char* layer;
    const char* plain;  // the same with the product in a let first
    const char* act;
  };
  const Fused cases[] = {
      {"relu(x @ m.w + m.b)",
       "    let p = x @ m.w\n    return relu(p + m.b)",
       "relu"},
      {"gelu(linear(m.l, x))",
       "    let p = x @ m.l.w\n    return gelu(p + m.l.b)",
       "gelu"},
      {"gelu(x @ m.w + m.b, approximate=\"tanh\")",
       "    let p = x @ m.w\n    return gelu(p + m.b, approximate=\"tanh\")",
       "gelu_tanh"},
      {"m.r + linear(m.l, x)",
       "    let p = x @ m.l.w\n    return m.r + (p + m.l.b)",
       "none"},
      {"relu(x @ m.w) + relu(x @ m.w + m.b) @ m.w2",
       "    let p = x @ m.w\n    let q = relu(p + m.b) @ m.w2\n"
       "    return relu(p) + q",
       "relu"},
      {"(x @ m.w) / 3.0 + m.b",
       "    let p = x @ m.w\n    return p / 3.0 + m.b",
       "none"},
      {"x @ m.w * 0.5", "    let p = x @ m.w\n    return p * 0.5", "none"},
      {"relu(relu(x @ m.w + m.b) @ m.w2)",
       "    let p = x @ m.w\n    let h = relu(p + m.b)\n"
       "    let q = h @ m.w2\n    return relu(q)",
       "relu"},
  };
  for (const Fused& c : cases) {
    INFO(c.layer);
    const std::string text = program(c.layer, c.plain);
    auto r = checked(text);
    // Every layer is in `layer`: the twin's lets keep each product apart
    // from what follows it (a `relu(p + m.b)` has no product inside).
    CHECK(r->prog->fused_layers().size() >= 1);
    CHECK(has_act(*r, c.act));
    CHECK(largest_difference(text) < 1e-12);
  }
}

TEST_CASE("the layer pass leaves alone what it cannot run as one product",
          "[fusion]") {
  const std::pair<const char*, size_t> bodies[] = {
      {"    return x @ m.w", 0},
      // A bias that is not the output's last axis alone: broadcast.
      {"    return relu(x @ m.w + zeros([1 H] f64))", 0},
      // Promotion: an f32 weight into an f64 layer.
      {"    return relu(x @ to(m.w, f32) + m.b)", 0},
      // The product in a let: nothing follows it in one expression.
      {"    let p = x @ m.w\n    return relu(p)", 0},
      // `-` is not an epilogue; the relu inside it still fuses.
      {"    return relu(x @ m.w + m.b) - 1.0", 1},
  };
  for (const auto& [body, want] : bodies) {
    INFO(body);
    const std::string text =
        std::string(kModel) + "fn layer(m: M, x: [n D] f64) -> [n H] f64:\n" +
        body +
        "\n\nfn main():\n"
        "    let m = init(M, seed=3)\n"
        "    print(sum(layer(m, randn([4 D] f64, seed=4))))\n";
    auto r = checked(text);
    CHECK(r->prog->fused_layers().size() == want);
  }
}

TEST_CASE("a layer in autocast runs as written", "[fusion]") {
  // In bf16 the ops written out round after each step (torch 1.13's
  // autocast); a fused layer would round once. The autocast instance of
  // `layer` must give the bits of its twin's, which the pass cannot fuse.
  const std::string text =
      "dim D = 8\ndim H = 4\n\n"
      "model M:\n"
      "    w: [D H] = normal(std=0.3)\n"
      "    b: [H] = normal(std=0.3)\n\n"
      "fn layer(m: M, x: [n D]) -> [n H]:\n"
      "    return relu(x @ m.w + m.b)\n\n"
      "fn plain(m: M, x: [n D]) -> [n H]:\n"
      "    let p = x @ m.w\n"
      "    return relu(p + m.b)\n\n"
      "fn main():\n"
      "    let m = init(M, seed=3)\n"
      "    let x = randn([64 D], seed=4)\n"
      "    let a = autocast(layer, bf16)(m, x)\n"
      "    let b = autocast(plain, bf16)(m, x)\n"
      "    print(f\"{float(max(abs(to(a, f32) - to(b, f32)))):.3e}\")\n"
      "    print(f\"{float(max(abs(layer(m, x) - plain(m, x)))):.3e}\")\n";
  auto r = ss::testing::run_program(text);
  INFO(r->error);
  REQUIRE(r->error.empty());
  CHECK(r->out.str().substr(0, 10) == "0.000e+00\n");
  CHECK(has_act(*r, "relu"));  // the f32 fn itself fuses
}
