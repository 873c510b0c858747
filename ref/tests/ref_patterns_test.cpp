// The pattern reference (ref/ref_patterns.h) on tiny cases computed by
// hand, so the oracle of the pattern property test is itself checked
// against arithmetic. Values compare to 1e-12 (the reference computes in
// double and these sums are of a few small integers: exact).

#include "ref/ref_patterns.h"

#include <catch2/catch.hpp>
#include <stdexcept>

#include "ref/tests/hand_values.h"

namespace {

using namespace ss::ref::hand;
namespace ref = ss::ref;

}  // namespace

TEST_CASE("ref patterns: parse and print", "[ref][patterns]") {
  for (const char* s : {"b n (3 H Dh) -> b H n Dh",
                        "n d, t d -> n t",
                        "n d -> ",
                        ", n -> n 1",
                        "(a (b 1) c) -> c 1 b a"}) {
    INFO(s);
    CHECK(ref::pattern_str(ref::parse_pattern(s)) == s);
  }
  CHECK_THROWS_AS(ref::parse_pattern("(a b -> a"), std::invalid_argument);
  CHECK_THROWS_AS(ref::parse_pattern("a b"), std::invalid_argument);
}

TEST_CASE("ref patterns: einsum by hand", "[ref][patterns]") {
  // Issue 10's case: a = [[0 1 2 3] [4 5 6 7]], c = a / 2; out[n t] =
  // sum_d a[n d] c[t d]: row sums of squares / 2 ((0+1+4+9)/2 = 7, ...).
  Tensor a = F({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor c = F({2, 4}, {0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5});
  is(ref::einsum({a, c}, "n d, t d -> n t"), {2, 2}, {7, 19, 19, 63});
  // Summed alone (d of a only), and a 0-d result.
  is(ref::einsum({a}, "n d -> n"), {2}, {6, 22});
  is(ref::einsum({a}, "n d -> "), {}, {28});
  is(ref::einsum({a, c}, "n d, t d -> "), {}, {108});
  // Kept on both sides (batch): out[n d] = a[n d] c[n d].
  is(ref::einsum({a, c}, "n d, n d -> d n"),
     {4, 2},
     {0, 8, 0.5, 12.5, 2, 18, 4.5, 24.5});
  // Three operands, a literal 1 inserted, a group in the output:
  // out[n 1 (t u)] = sum_d a[n d] c[t d] w[u], w = [1 -1].
  Tensor w = F({2}, {1, -1});
  is(ref::einsum({a, c, w}, "n d, t d, u -> n 1 (t u)"),
     {2, 1, 4},
     {7, -7, 19, -19, 19, -19, 63, -63});
  // A group in an input cut by a known size: a as [(h e)] with h = 2.
  is(ref::einsum({F({8}, {0, 1, 2, 3, 4, 5, 6, 7})}, "(h e) -> e", {{"h", 2}}),
     {4},
     {4, 6, 8, 10});
  CHECK_THROWS_AS(ref::einsum({a}, "n d -> n t"), std::invalid_argument);
  CHECK_THROWS_AS(ref::einsum({a, c}, "n d, t n -> n"), std::invalid_argument);
}

TEST_CASE("ref patterns: rearrange and split by hand", "[ref][patterns]") {
  Tensor x = F({2, 3}, {0, 1, 2, 3, 4, 5});
  is(ref::rearrange(x, "a b -> b a"), {3, 2}, {0, 3, 1, 4, 2, 5});
  is(ref::rearrange(x, "a b -> (b a) 1"), {6, 1}, {0, 3, 1, 4, 2, 5});
  is(ref::rearrange(F({6}, {0, 1, 2, 3, 4, 5}), "(a b) -> b a", {{"a", 2}}),
     {3, 2},
     {0, 3, 1, 4, 2, 5});
  is(ref::rearrange(F({1, 2}, {7, 8}), "1 a -> a"), {2}, {7, 8});
  CHECK_THROWS_AS(ref::rearrange(x, "a b -> a"), std::invalid_argument);
  // split(x, (3 D) -> D) on [6]: D = 2, parts [0 1] [2 3] [4 5].
  auto parts = ref::split(F({6}, {0, 1, 2, 3, 4, 5}), "(3 D) -> D");
  REQUIRE(parts.size() == 3);
  is(parts[0], {2}, {0, 1});
  is(parts[2], {2}, {4, 5});
  // The literal inner: (D 2) takes every other element.
  parts = ref::split(F({6}, {0, 1, 2, 3, 4, 5}), "(D 2) -> 1 D");
  is(parts[1], {1, 3}, {1, 3, 5});
}

TEST_CASE("ref patterns: VJPs by hand", "[ref][patterns]") {
  // d/da sum(ct * (a c^T)) = ct c; d/dc = ct^T a.
  Tensor a = F({2, 2}, {1, 2, 3, 4});
  Tensor c = F({2, 2}, {5, 6, 7, 8});
  Tensor ct = F({2, 2}, {1, 0, 0, 2});
  auto g = ref::einsum_vjp({a, c}, "n d, t d -> n t", ct);
  is(g[0], {2, 2}, {5, 6, 14, 16});
  is(g[1], {2, 2}, {1, 2, 6, 8});
  // Summed alone broadcasts back: d/da sum_d a[n d] ct[n] = ct[n].
  g = ref::einsum_vjp({a}, "n d -> n", F({2}, {3, -1}));
  is(g[0], {2, 2}, {3, 3, -1, -1});
  is(ref::rearrange_vjp(F({2, 3}, {0, 0, 0, 0, 0, 0}),
                        "a b -> b a",
                        F({3, 2}, {0, 3, 1, 4, 2, 5})),
     {2, 3},
     {0, 1, 2, 3, 4, 5});
  is(ref::split_vjp(
         F({4}, {0, 0, 0, 0}), "(2 D) -> D", {F({2}, {1, 2}), F({2}, {3, 4})}),
     {4},
     {1, 2, 3, 4});
}
