// The checker's attention pass (Note [The attention written out] in
// interp/check/fusion.cpp): which bodies it runs as one
// scaled_dot_product_attention, and that a fused body computes what the
// same body run op by op computes, values and gradients, in f64 on shapes
// that are not multiples of the kernel's blocks (n = 70 rows, t = 70 or 45
// keys). The op by op twin is the body with one more read of p, which the
// pass must refuse. Tolerance: 1e-12 absolute on values of order 1 (two
// orders of summation over <= 70 terms, ~1e-15 each); the kernel against
// ref/ is ops/tests/attention_test.cpp, against torch tests/torch.

#include <catch2/catch.hpp>
#include <string>

#include "interp/tests/eval_helpers.h"

namespace {

/// A program whose fn `attend` has [body]; main prints, in f64, the
/// largest difference between attend and its op by op twin (the body
/// with `let again = sum(p)` after it, when [twin]), for the output and
/// for the gradients of sum(out * w) by q, k and v.
std::string program(const std::string& body, bool twin, int64_t t = 70) {
  std::string twin_body = body;
  // Before the body's last line (its return).
  size_t last = twin_body.rfind("\n    ", twin_body.size() - 2);
  twin_body.insert(last + 1, "    let again = sum(p)\n");
  auto fn = [](const std::string& name, const std::string& b) {
    return "fn " + name +
           "(q: [b H n Dh] f64, k: [b H t Dh] f64, v: [b H t Dh] f64) -> "
           "[b H n Dh] f64:\n" +
           b;
  };
  return "dim H = 2\ndim Dh = 5\ndim N = 70\ndim T = " + std::to_string(t) +
         "\n\n"
         "model In:\n"
         "    q: [3 H N Dh] f64 = normal(std=1.0)\n"
         "    k: [3 H T Dh] f64 = normal(std=1.0)\n"
         "    v: [3 H T Dh] f64 = normal(std=1.0)\n"
         "    buffer w: [3 H N Dh] f64 = normal(std=1.0)\n\n" +
         fn("attend", body) + "\n" + fn("plain", twin ? twin_body : body) +
         "\n"
         "fn loss(m: In) -> f64:\n"
         "    return sum(attend(m.q, m.k, m.v) * m.w)\n\n"
         "fn loss_plain(m: In) -> f64:\n"
         "    return sum(plain(m.q, m.k, m.v) * m.w)\n\n"
         "fn main():\n"
         "    let m = init(In, seed=3)\n"
         "    let d = max(abs(attend(m.q, m.k, m.v) - plain(m.q, m.k, m.v)))\n"
         "    let l1, g1 = value_and_grad(loss, m)\n"
         "    let l2, g2 = value_and_grad(loss_plain, m)\n"
         "    let dq = max(abs(g1.q - g2.q))\n"
         "    let dk = max(abs(g1.k - g2.k))\n"
         "    let dv = max(abs(g1.v - g2.v))\n"
         "    print(f\"{float(max(max(d, dq), max(dk, dv))):.3e}\")\n";
}

const char* kSpec =
    "    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)\n"
    "    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)\n"
    "    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)\n"
    "    return o\n";

size_t fused_count(const std::string& text) {
  auto r = ss::testing::run_program(text, false);
  INFO(r->error);
  REQUIRE(r->prog);
  return r->prog->fused().size();
}

double largest_difference(const std::string& text) {
  auto r = ss::testing::run_program(text);
  INFO(r->error);
  REQUIRE(r->error.empty());
  return std::stod(r->out.str());
}

}  // namespace

TEST_CASE("attention written out runs fused, as op by op", "[attention]") {
  struct Fused {
    const char* what;
    std::string body;
    int64_t t;
  };
  const Fused cases[] = {
      {"the spec's causal attention", kSpec, 70},
      {"causal, fewer keys than rows", kSpec, 45},
      {"all keys, scaled by * c",
       "    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) * 0.3\n"
       "    let p = softmax(s, over=t)\n"
       "    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)\n"
       "    return o\n",
       45},
      {"not scaled, the product in the return",
       "    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t)\n"
       "    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)\n"
       "    return einsum(p, v, b H n t, b H t Dh -> b H n Dh) * 2.0\n",
       70},
  };
  for (const Fused& c : cases) {
    INFO(c.what);
    // Fused once in attend; its twin `plain` is refused (p read again).
    CHECK(fused_count(program(c.body, true, c.t)) == 1);
    CHECK(largest_difference(program(c.body, true, c.t)) <= 1e-12);
  }
}

TEST_CASE("attention not written as the pattern runs op by op", "[attention]") {
  auto body = [](const std::string& from, const std::string& to) {
    std::string b = kSpec;
    b.replace(b.find(from), from.size(), to);
    return b;
  };
  const std::pair<const char*, std::string> refused[] = {
      {"s read again", body("    return o\n", "    return o + sum(s)\n")},
      {"a statement between",
       body("    let p =", "    let z = 1\n    let p =")},
      {"s assigned again",
       body("    return o\n", "    s = s * 2.0\n    return o\n")},
      {"a fill that is not -inf", body("-inf", "-1e9")},
      {"q computed in the product", body("einsum(q, k,", "einsum(q * 2.0, k,")},
      {"softmax over n", body("over=t", "over=n")},
      {"a mask of other axes",
       body("not causal(n, t)", "not causal(n, t) and causal(n, t)")},
  };
  for (const auto& [what, b] : refused) {
    INFO(what);
    // Neither attend nor its twin.
    CHECK(fused_count(program(b, false)) == 0);
  }
}
