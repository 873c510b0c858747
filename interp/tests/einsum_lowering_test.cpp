// einsum's lowering (Note [einsum as batched matmuls] in
// interp/eval/einsum_lowering.cpp) on the shapes attention and linear
// layers use: each case is a fn of a program, run by the interpreter with
// operands that need gradients; its result and the gradients backward()
// gives are compared with the reference loops of ref/ref_patterns.h
// (ref::einsum, ref::einsum_vjp: a sum over every assignment of the
// labels, no matmul). Then the recorded graph of the result is counted:
// the permutes and matmuls (and sums) the plan promises, hand-derived in
// each case's comment, so a change that brings a copy back fails here even
// though the numbers stay right.

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "interp/tests/eval_helpers.h"
#include "ops/api.h"
#include "ops/tests/tensor_close.h"
#include "ref/ref_patterns.h"

namespace {

using ss::eval::Value;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::types::DType;
namespace ref = ss::ref;

struct Case {
  const char* fn;       // the program's fn, named f
  const char* pattern;  // the same einsum for the reference
  std::vector<Shape> shapes;
  int permutes, matmuls, sums;
  int64_t largest_product = 0;  // of a matmul's results; 0: not checked
};

using ss::ops::test::require_close;

// How many nodes of each name the graph that made [y] holds, and the most
// elements a matmul node made ("largest product").
std::map<std::string, int64_t> count_nodes(const Tensor& y) {
  std::map<std::string, int64_t> n;
  std::set<const ss::ops::Node*> seen;
  std::vector<const ss::ops::Node*> todo;
  auto push = [&](const Tensor& t) {
    if (t.autograd() && t.autograd()->grad_fn &&
        seen.insert(t.autograd()->grad_fn.get()).second) {
      todo.push_back(t.autograd()->grad_fn.get());
      if (std::string(todo.back()->name) == "matmul")
        n["largest product"] = std::max(n["largest product"], t.numel());
    }
  };
  push(y);
  while (!todo.empty()) {
    const ss::ops::Node* node = todo.back();
    todo.pop_back();
    ++n[node->name];
    for (const Tensor& t : node->inputs) push(t);
  }
  return n;
}

void run_case(const Case& c, uint64_t seed) {
  INFO(c.fn);
  auto r = ss::testing::run_program(
      std::string("dim H = 3\n\n") + c.fn + "\n\nfn main():\n    print(0)\n",
      false);
  INFO(r->error);
  REQUIRE(r->prog);
  std::vector<Tensor> xs;
  std::vector<Value> args;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    xs.push_back(ss::ops::requires_grad(
        ss::ops::random_normal(c.shapes[i], DType::F64, seed, i)));
    args.push_back(Value::tensor(xs.back()));
  }
  Tensor y = r->in->call(*r->prog->fn("f"), args, {}).t;
  ref::LabelSizes known{{"H", 3}};
  // f64, sums of at most 7 x 5 terms of size ~1 in another order than the
  // reference's: differences ~1e-15; 1e-12 still sees any wrong
  // contraction, which is off by O(1).
  require_close(y, ref::einsum(xs, c.pattern, known), 1e-12);
  Tensor ct = ss::ops::random_normal(y.shape(), DType::F64, seed, 99);
  std::vector<Tensor> g =
      ss::ops::backward(ss::ops::sum(ss::ops::mul(y, ct)), xs);
  std::vector<Tensor> want = ref::einsum_vjp(xs, c.pattern, ct, known);
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("the gradient of operand " << i);
    require_close(g[i], want[i], 1e-12);
  }
  std::map<std::string, int64_t> n = count_nodes(y);
  CHECK(n["permute"] == c.permutes);
  CHECK(n["matmul"] == c.matmuls);
  CHECK(n["sum"] == c.sums);
  if (c.largest_product) CHECK(n["largest product"] == c.largest_product);
}

}  // namespace

TEST_CASE("einsum on attention's shapes copies nothing and matches the ref",
          "[eval][patterns][einsum]") {
  const Case cases[] = {
      // q kᵀ: batch b h, left n, contracted d; k is read transposed.
      {"fn f(q: [b h n d] f64, k: [b h m d] f64) -> [b h n m] f64:\n"
       "    return einsum(q, k, b h n d, b h m d -> b h n m)",
       "b h n d, b h m d -> b h n m",
       {{2, 3, 4, 5}, {2, 3, 6, 5}},
       0,
       1,
       0},
      // p v: both as they lie.
      {"fn f(p: [b h n m] f64, v: [b h m d] f64) -> [b h n d] f64:\n"
       "    return einsum(p, v, b h n m, b h m d -> b h n d)",
       "b h n m, b h m d -> b h n d",
       {{2, 3, 4, 6}, {2, 3, 6, 5}},
       0,
       1,
       0},
      // A linear layer, and one with the weight stored [out in].
      {"fn f(x: [b n D] f64, w: [D F] f64) -> [b n F] f64:\n"
       "    return einsum(x, w, b n D, D F -> b n F)",
       "b n D, D F -> b n F",
       {{2, 4, 5}, {5, 3}},
       0,
       1,
       0},
      {"fn f(x: [b n D] f64, w: [F D] f64) -> [b n F] f64:\n"
       "    return einsum(x, w, b n D, F D -> b n F)",
       "b n D, F D -> b n F",
       {{2, 4, 5}, {3, 5}},
       0,
       1,
       0},
      // The result transposed: computed as bᵀ aᵀ, no permute.
      {"fn f(a: [i k] f64, c: [k j] f64) -> [j i] f64:\n"
       "    return einsum(a, c, i k, k j -> j i)",
       "i k, k j -> j i",
       {{4, 5}, {5, 3}},
       0,
       1,
       0},
      // Heads in a group `(H d)`: the batch b H is not leading in either
      // operand, so each is permuted once; the result is in order.
      {"fn f(q: [b n E] f64, k: [b m E] f64) -> [b H n m] f64:\n"
       "    return einsum(q, k, b n (H d), b m (H d) -> b H n m)",
       "b n (H d), b m (H d) -> b H n m",
       {{2, 4, 6}, {2, 5, 6}},
       2,
       1,
       0},
      // Back to the group: v permuted once, the result once.
      {"fn f(p: [b H n m] f64, v: [b m E] f64) -> [b n E] f64:\n"
       "    return einsum(p, v, b H n m, b m (H d) -> b n (H d))",
       "b H n m, b m (H d) -> b n (H d)",
       {{2, 3, 4, 5}, {2, 5, 6}},
       2,
       1,
       0},
      // m is summed in k alone before the product (one sum), never with q.
      {"fn f(q: [b n d] f64, k: [b m d] f64) -> [b n] f64:\n"
       "    return einsum(q, k, b n d, b m d -> b n)",
       "b n d, b m d -> b n",
       {{2, 4, 5}, {2, 6, 5}},
       0,
       1,
       1},
      // A literal 1 of an input is dropped by a view, not a sum.
      {"fn f(x: [b 1 n] f64, w: [n m] f64) -> [b m] f64:\n"
       "    return einsum(x, w, b 1 n, n m -> b m)",
       "b 1 n, n m -> b m",
       {{3, 1, 4}, {4, 5}},
       0,
       1,
       0},
      // Three operands: j k l (28 multiply-adds) goes first, before i j k
      // (84); then [i j] @ [j l]. Two matmuls, nothing copied, the larger
      // result [i l] = 12 elements (left to right would make [i k], 42).
      {"fn f(a: [i j] f64, c: [j k] f64, e: [k l] f64) -> [i l] f64:\n"
       "    return einsum(a, c, e, i j, j k, k l -> i l)",
       "i j, j k, k l -> i l",
       {{6, 2}, {2, 7}, {7, 2}},
       0,
       2,
       0,
       12},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) run_case(c, seed++);
}
