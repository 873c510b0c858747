// The mid blocks' cache of a host language's process (Note [Mid blocks] in
// ops/core/mid_blocks.cpp): a block freed is handed out again for its exact
// size, aligned, and the cache counts what it holds. Oracles: the sizes
// and addresses given here.

#include "ops/core/mid_blocks.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

namespace {

using namespace ss::ops;

TEST_CASE("mid blocks: a freed block comes back for its size", "[tensor]") {
  const size_t n = kMidBlockBytes + 64 * 7;
  const size_t before = mid_blocks_cached();
  void* a = mid_alloc(n);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  std::memset(a, 1, n);  // all of it is ours
  mid_free(a, n);
  CHECK(mid_blocks_cached() == before + n);
  // Another size does not take it; its own size does.
  void* b = mid_alloc(n + 64);
  CHECK(b != a);
  void* c = mid_alloc(n);
  CHECK(c == a);
  CHECK(mid_blocks_cached() == before);
  mid_free(b, n + 64);
  mid_free(c, n);
  CHECK(mid_blocks_cached() == before + 2 * n + 64);
}

}  // namespace
