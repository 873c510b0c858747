// The reference collectives on cases computed by hand: the shard_map
// tutorial's printed examples (x = [3 1 4 1 5 9 2 6 5 3 5 8 9 7 1 2] on four
// instances, f1, f4-f7, f9) and 2-D blocks worked out on paper. Exact
// values: sums of small integers in double (tolerance 1e-12, the default).
#include "ref/ref_collectives.h"

#include <catch2/catch.hpp>

#include "ref/tests/hand_values.h"

using namespace ss::ref;
using namespace ss::ref::hand;

namespace {

// The tutorial's x, cut into the four instances' blocks (in_specs=P('i')).
Blocks tutorial_blocks() {
  return {F({4}, {3, 1, 4, 1}),
          F({4}, {5, 9, 2, 6}),
          F({4}, {5, 3, 5, 8}),
          F({4}, {9, 7, 1, 2})};
}

}  // namespace

TEST_CASE(
    "ref collectives: psum, pmean, pmax, pmin give every instance one value",
    "[ref][collectives]") {
  Blocks xs = tutorial_blocks();
  Blocks s = psum(xs);  // f1: 3+5+5+9, 1+9+3+7, 4+2+5+1, 1+6+8+2
  REQUIRE(s.size() == 4);
  for (const auto& t : s) is(t, {4}, {22, 20, 12, 17});
  for (const auto& t : pmean(xs)) is(t, {4}, {5.5, 5, 3, 4.25});
  for (const auto& t : pmax(xs)) is(t, {4}, {9, 9, 5, 8});
  for (const auto& t : pmin(xs)) is(t, {4}, {3, 1, 1, 1});
  Blocks v = pvary(xs);
  for (size_t i = 0; i < 4; ++i) is(v[i], {4}, xs[i].to_doubles());
  // The mean of ints is a float (the checker's float_result).
  Blocks m = pmean({I({1}, {1}), I({1}, {2})});
  CHECK(m[0].dtype() == DType::F32);
  is(m[0], {1}, {1.5});
}

TEST_CASE("ref collectives: all_gather tiled and stacked",
          "[ref][collectives]") {
  // f4/f5: x = [3 9 5 2], one element per instance.
  Blocks xs{F({1}, {3}), F({1}, {9}), F({1}, {5}), F({1}, {2})};
  for (const auto& t : all_gather(xs, 0, true)) is(t, {4}, {3, 9, 5, 2});
  for (const auto& t : all_gather(xs, 0, false)) is(t, {4, 1}, {3, 9, 5, 2});
  // 2-D blocks joined along their second axis.
  Blocks ys{F({2, 2}, {1, 2, 3, 4}), F({2, 2}, {5, 6, 7, 8})};
  for (const auto& t : all_gather(ys, 1, true))
    is(t, {2, 4}, {1, 2, 5, 6, 3, 4, 7, 8});
  for (const auto& t : all_gather(ys, 0, true))
    is(t, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("ref collectives: psum_scatter keeps instance i's piece of the sum",
          "[ref][collectives]") {
  // f6: the sum [22 20 12 17], one element to each instance.
  Blocks r = psum_scatter(tutorial_blocks(), 0, true);
  is(r[0], {1}, {22});
  is(r[1], {1}, {20});
  is(r[2], {1}, {12});
  is(r[3], {1}, {17});
  // Along axis 1: sum [[11 22 33 44] [55 66 77 88]], halves of each row.
  Blocks ys{F({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}),
            F({2, 4}, {10, 20, 30, 40, 50, 60, 70, 80})};
  Blocks c = psum_scatter(ys, 1, true);
  is(c[0], {2, 2}, {11, 22, 55, 66});
  is(c[1], {2, 2}, {33, 44, 77, 88});
  // Untiled: the leading axis has one entry per instance and goes.
  Blocks u = psum_scatter({F({2, 1}, {1, 2}), F({2, 1}, {3, 4})}, 0, false);
  is(u[0], {1}, {4});
  is(u[1], {1}, {6});
  CHECK_THROWS_AS(psum_scatter({F({3}, {1, 2, 3}), F({3}, {1, 2, 3})}, 0, true),
                  std::invalid_argument);
}

TEST_CASE("ref collectives: ppermute sends, and zeros where nothing arrives",
          "[ref][collectives]") {
  // f7: arange(8) on four instances, i -> i+1: [6 7 0 1 2 3 4 5].
  Blocks xs{F({2}, {0, 1}), F({2}, {2, 3}), F({2}, {4, 5}), F({2}, {6, 7})};
  Blocks r = ppermute(xs, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  is(r[0], {2}, {6, 7});
  is(r[1], {2}, {0, 1});
  is(r[2], {2}, {2, 3});
  is(r[3], {2}, {4, 5});
  Blocks one = ppermute(xs, {{0, 2}});
  is(one[0], {2}, {0, 0});
  is(one[1], {2}, {0, 0});
  is(one[2], {2}, {0, 1});
  is(one[3], {2}, {0, 0});
}

TEST_CASE("ref collectives: all_to_all is a block transpose",
          "[ref][collectives]") {
  // f9: instance i gets element i of every block.
  Blocks r = all_to_all(tutorial_blocks(), 0, 0, true);
  is(r[0], {4}, {3, 5, 5, 9});
  is(r[1], {4}, {1, 9, 3, 7});
  is(r[2], {4}, {4, 2, 5, 1});
  is(r[3], {4}, {1, 6, 8, 2});
  // Cut along axis 1, joined along axis 0.
  Blocks ys{F({1, 4}, {1, 2, 3, 4}), F({1, 4}, {5, 6, 7, 8})};
  Blocks t = all_to_all(ys, 1, 0, true);
  is(t[0], {2, 2}, {1, 2, 5, 6});
  is(t[1], {2, 2}, {3, 4, 7, 8});
  // Untiled: row i of every block, stacked.
  Blocks zs{F({2, 3}, {1, 2, 3, 4, 5, 6}), F({2, 3}, {7, 8, 9, 10, 11, 12})};
  Blocks u = all_to_all(zs, 0, 0, false);
  is(u[0], {2, 3}, {1, 2, 3, 7, 8, 9});
  is(u[1], {2, 3}, {4, 5, 6, 10, 11, 12});
  // ... stacked as a new last axis: u1[k][j] = block j's row 1, entry k.
  Blocks w = all_to_all(zs, 0, 1, false);
  is(w[1], {3, 2}, {4, 10, 5, 11, 6, 12});
}
