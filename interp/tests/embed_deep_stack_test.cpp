// embed::DeepStack (Note [Switching to the deep stack] in
// interp/embed/deep_stack.cpp): a body runs on the caller's own thread,
// with a stack far deeper than the test runner's 8 MiB, and what it throws
// comes back to the caller.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "interp/embed/embed.h"

namespace {

// Uses about 1 KiB of stack a level; the compiler cannot drop the array.
int64_t depth_sum(int64_t n) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(n);
  if (n == 0) return pad[0];
  return depth_sum(n - 1) + 1 + pad[0] - static_cast<char>(n);
}

}  // namespace

TEST_CASE("a deep stack holds what the thread's own cannot",
          "[embed][deep_stack]") {
  ss::embed::DeepStack deep;
  // 64 Ki levels of 1 KiB: 64 MiB, eight times the runner's stack (a
  // SIGSEGV there, as the evaluator's 2,000 calls were on Python's main
  // thread before the deep stack).
  int64_t got = -1;
  deep.run([&] { got = depth_sum(int64_t{1} << 16); });
  CHECK(got == (int64_t{1} << 16));
}

TEST_CASE("a deep stack runs its body on the caller's thread",
          "[embed][deep_stack]") {
  ss::embed::DeepStack deep;
  std::thread::id inside;
  int runs = 0;
  for (int i = 0; i < 1000; ++i)
    deep.run([&] {
      inside = std::this_thread::get_id();
      ++runs;
    });
  CHECK(inside == std::this_thread::get_id());
  CHECK(runs == 1000);
}

TEST_CASE("what a body on the deep stack throws reaches the caller",
          "[embed][deep_stack]") {
  ss::embed::DeepStack deep;
  CHECK_THROWS_WITH(deep.run([] { throw std::runtime_error("from below"); }),
                    "from below");
  // And the stack is usable again, nested runs inline.
  int inner = 0;
  deep.run([&] {
    deep.run([&] { inner = 7; });
    CHECK_THROWS_AS(deep.run([] { throw std::out_of_range("x"); }),
                    std::out_of_range);
  });
  CHECK(inner == 7);
}
