// Note [Two sizes of one name] (ops/core/type.h; issue 25, defect 4): two
// different size variables that print alike are told apart in a message,
// and each is traced to the call that made it.
#include <catch2/catch.hpp>

#include "interp/tests/check_test_util.h"

using ss::testing::check_text;

TEST_CASE("a conv's and a pool's result sizes print apart in E0301",
          "[check][shapes]") {
  // A strided conv2d's h2 w2 and max_pool2d's h2 w2 are four variables
  // (a size variable is not divided in a type: Note [Divided dims]):
  // nothing says the two results agree, so the sum is E0301. The message
  // used to read "[b C h2 w2] with [b C h2 w2]: w2 vs w2" (line 4 is the
  // conv, line 5 the pool, line 6 the sum).
  auto c = check_text(R"(dim C = 3

fn block(x: [b C h w], k: [C C 3 3]) -> f32:
    let y = conv2d(x, k, padding=1, stride=2)
    let p = max_pool2d(x, 2)
    return sum(y + p)
)");
  REQUIRE_FALSE(c->prog);
  REQUIRE(c->codes() == std::vector<std::string>{"E0301@6:16"});
  const std::string text = c->rendered();
  INFO(text);
  CHECK(text.find("cannot broadcast [b C h2 w2] with [b C h2' w2']") !=
        std::string::npos);
  CHECK((text.find(": w2 vs w2'") != std::string::npos ||
         text.find(": h2 vs h2'") != std::string::npos));
  // Each name says which call made it, at that call's line.
  for (const char* note : {"`h2` is the size `conv2d` gives here",
                           "`w2` is the size `conv2d` gives here",
                           "`h2'` is the size `max_pool2d` gives here",
                           "`w2'` is the size `max_pool2d` gives here"})
    CHECK(text.find(note) != std::string::npos);
  CHECK(text.find("test.ss:4:") != std::string::npos);
  CHECK(text.find("test.ss:5:") != std::string::npos);
}

TEST_CASE("sizes of one variable, or of different names, print as before",
          "[check][shapes]") {
  auto c = check_text(R"(dim C = 3
dim D = 4

fn f(x: [b C], y: [b D]) -> f32:
    return sum(x + y)
)");
  REQUIRE_FALSE(c->prog);
  const std::string text = c->rendered();
  INFO(text);
  CHECK(text.find("cannot broadcast [b C] with [b D]: C (3) vs D (4)") !=
        std::string::npos);
  CHECK(text.find("'") == std::string::npos);
}

TEST_CASE("two run-time sizes named n print apart in E0307 and E0303",
          "[check][shapes]") {
  // Both sizes come from an int known at run time, and both print as `n`:
  // "size variable `b` is n and n in one call" and "[n], but arange(z) is
  // [n]" said nothing (the runtime fuzzer's programs met them).
  auto call = check_text(R"(fn f(x: [b 3], y: [b] i64):
    print(cross_entropy(x, y))

fn main():
    let z = len(range(0))
    f(full([z, 3], 1.0), arange(z))
)");
  REQUIRE_FALSE(call->prog);
  REQUIRE(call->codes() == std::vector<std::string>{"E0307@6:26"});
  std::string text = call->rendered();
  INFO(text);
  CHECK(text.find("size variable `b` is n and n' in one call") !=
        std::string::npos);
  CHECK(text.find("`n` is the size `z` gives here") != std::string::npos);
  CHECK(text.find("`n'` is the size `arange` gives here") != std::string::npos);
  auto loss = check_text(R"(fn main():
    let z = len(range(0))
    print(cross_entropy(full([z, 3], 1.0), arange(z)))
)");
  REQUIRE_FALSE(loss->prog);
  REQUIRE(loss->codes() == std::vector<std::string>{"E0303@3:11"});
  text = loss->rendered();
  INFO(text);
  CHECK(text.find("class axis 3, [n], but arange(z) is [n']") !=
        std::string::npos);
  CHECK(text.find("`n'` is the size `arange` gives here") != std::string::npos);
}
