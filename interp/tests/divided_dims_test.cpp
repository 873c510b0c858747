// Note [Divided dims] (ops/core/divided_dim.h): a size-keeping conv keeps
// its axis, and a stride that divides a dim gives S/stride.
#include <catch2/catch.hpp>

#include "interp/tests/check_test_util.h"

using ss::testing::check_text;

namespace {

// The type of each `let` in fn [fn], in order.
std::vector<std::string> local_types(const ss::check::Program& p,
                                     const std::string& fn) {
  std::vector<std::string> out;
  for (const auto& [name, t] : p.fn(fn)->locals) out.push_back(t.str());
  return out;
}

}  // namespace

TEST_CASE("convolutions and pools type their sizes from the dims",
          "[check][shapes]") {
  auto c = check_text(R"(dim C = 4
dim S = 8

fn f(x: [b C S S], k: [C C 3 3], k1: [C C 1 1], v: [b C h w]):
    let same = conv2d(x, k, padding=1)
    let dilated = conv2d(x, k, padding=2, dilation=2)
    let strided = conv2d(x, k, padding=1, stride=2)
    let shortcut = conv2d(x, k1, stride=2)
    let pooled = max_pool2d(x, 2)
    let quarter = avg_pool2d(pooled, 2)
    let odd = max_pool2d(x, 3)
    let var_same = conv2d(v, k, padding=1)
    let var_strided = conv2d(v, k, padding=1, stride=2)
    let flat = rearrange(pooled, b C h2 w2 -> b (C h2 w2))
)");
  INFO(c->rendered());
  REQUIRE(c->prog);
  std::vector<std::string> t = local_types(*c->prog, "f");
  REQUIRE(t.size() == 10);
  CHECK(t[0] == "[b C S S]");
  CHECK(t[1] == "[b C S S]");
  CHECK(t[2] == "[b C S/2 S/2]");
  CHECK(t[3] == "[b C S/2 S/2]");
  CHECK(t[4] == "[b C S/2 S/2]");
  CHECK(t[5] == "[b C S/4 S/4]");
  // (8 - 3) / 3 + 1 = 2: not S/3 (3 does not divide 8), a literal.
  CHECK(t[6] == "[b C 2 2]");
  CHECK(t[7] == "[b C h w]");
  // A size variable's size is known at run time only: fresh sizes.
  CHECK(t[8].find("[b C h w]") == std::string::npos);
  CHECK(t[9] == "[b (C h2 w2)]");
}

TEST_CASE("S/k written in a type is the divided dim", "[check][shapes]") {
  auto ok = check_text(R"(dim C = 4
dim S = 8
dim O = 3
model Head:
    w: [(C S/2 S/2) O] = normal(std=0.1)
fn head(m: Head, x: [b C S S]) -> [b O]:
    return rearrange(max_pool2d(x, 2), b C h w -> b (C h w)) @ m.w
)");
  INFO(ok->rendered());
  CHECK(ok->prog);
  auto bad = check_text(R"(dim S = 8
fn f(x: [b S/3], y: [b h/2]) -> f32 = sum(x)
)");
  REQUIRE_FALSE(bad->prog);
  CHECK(bad->codes() == std::vector<std::string>{"E0303@2:12", "E0303@2:24"});
  const std::string text = bad->rendered();
  CHECK(text.find("`S` is 8, which 3 does not divide") != std::string::npos);
  CHECK(text.find("only a dim can be divided in a type") != std::string::npos);
}
