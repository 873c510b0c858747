// ops::matmul_transposed (Note [Transposes read in place] in
// ops/api_shape.cpp): op(a) @ op(b) with either operand read transposed,
// batched and broadcast, its value and both gradients against the
// reference's einsum loops (ref::einsum, ref::einsum_vjp: sums over every
// assignment of the labels, no BLAS), each flag combination written as the
// einsum it is. The broadcast cases reach the VJP's two other paths: a
// weight without batch axes (its gradient one folded product) and a
// batched cotangent summed back to an unbatched operand.

#include <catch2/catch.hpp>
#include <cmath>

#include "ops/api.h"
#include "ops/tests/tensor_close.h"
#include "ref/ref_patterns.h"

namespace {

using namespace ss::ops;
using ss::types::DType;

using ss::ops::test::require_close;

struct Case {
  Shape a, b;
  bool ta, tb;
  const char* einsum;  // the same product for the reference
};

}  // namespace

TEST_CASE("matmul_transposed: every flag, batched and broadcast, and VJPs",
          "[api][matmul]") {
  const Case cases[] = {
      {{2, 4, 5}, {2, 5, 3}, false, false, "b n k, b k m -> b n m"},
      {{2, 5, 4}, {2, 5, 3}, true, false, "b k n, b k m -> b n m"},
      {{2, 4, 5}, {2, 3, 5}, false, true, "b n k, b m k -> b n m"},
      {{2, 5, 4}, {2, 3, 5}, true, true, "b k n, b m k -> b n m"},
      // A weight without batch axes, read transposed ([out in]).
      {{2, 3, 4, 5}, {6, 5}, false, true, "x y n k, m k -> x y n m"},
      {{2, 3, 4, 5}, {5, 6}, false, false, "x y n k, k m -> x y n m"},
      // The unbatched side read transposed, each way round.
      {{5, 4}, {2, 5, 3}, true, false, "k n, b k m -> b n m"},
      {{2, 5, 4}, {5, 3}, true, false, "b k n, k m -> b n m"},
      {{2, 5, 4}, {3, 5}, true, true, "b k n, m k -> b n m"},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    INFO(c.einsum);
    Tensor a = requires_grad(random_normal(c.a, DType::F64, seed, 0));
    Tensor b = requires_grad(random_normal(c.b, DType::F64, seed, 1));
    Tensor y = matmul_transposed(a, b, c.ta, c.tb);
    // f64, sums of 5 products of size ~1 (and up to 6 cotangent terms in
    // the gradients) in BLAS's order: ~1e-15 apart from the loops; a
    // wrong flag is off by O(1).
    require_close(y, ss::ref::einsum({a, b}, c.einsum), 1e-12);
    Tensor ct = random_normal(y.shape(), DType::F64, seed, 2);
    std::vector<Tensor> g = backward(sum(mul(y, ct)), {a, b});
    std::vector<Tensor> want = ss::ref::einsum_vjp({a, b}, c.einsum, ct);
    require_close(g[0], want[0], 1e-12);
    require_close(g[1], want[1], 1e-12);
    ++seed;
  }
}

TEST_CASE("matmul_transposed: ints exactly, and its shape errors",
          "[api][matmul]") {
  // [[1 2] [3 4]]ᵀ @ [[1 0] [1 1]] = [[1 3] [2 4]] @ [[1 0] [1 1]] =
  // [[4 3] [6 4]], by hand.
  Tensor a = Tensor::from_doubles({2, 2}, {1, 2, 3, 4}, DType::I64);
  Tensor b = Tensor::from_doubles({2, 2}, {1, 0, 1, 1}, DType::I64);
  Tensor y = matmul_transposed(a, b, true, false);
  CHECK(y.dtype() == DType::I64);
  CHECK(y.to_doubles() == std::vector<double>{4, 3, 6, 4});
  Tensor f = Tensor::zeros({3, 4}, DType::F32);
  // [3 4] @ [3 4] does not fit (4 vs 3); with either read transposed it
  // does: [4 3] @ [3 4] and [3 4] @ [4 3].
  CHECK_THROWS_AS(matmul_transposed(f, f, false, false), OpError);
  CHECK(matmul_transposed(f, f, true, false).shape() == Shape{4, 4});
  CHECK(matmul_transposed(f, f, false, true).shape() == Shape{3, 3});
  CHECK_THROWS_WITH(
      matmul_transposed(Tensor::zeros({4}, DType::F32), f, false, false),
      Catch::Contains("rank >= 2"));
}
