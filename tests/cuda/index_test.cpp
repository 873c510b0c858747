// The CUDA indexing primitives (take, take_add, gather, scatter_add)
// against the CPU backend, bit for bit: the sums of take_add and
// scatter_add add in the CPU's order, without atomics (Note
// [Deterministic index sums] in ops/cuda/cuda_index_ops.cu).

#include <random>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

namespace {

const DType kAll[] = {DType::F32,
                      DType::F64,
                      DType::I32,
                      DType::I64,
                      DType::Bool,
                      DType::BF16,
                      DType::F16};

/// Indices in [0, n) of [shape] (i64, or i32 where [i32]): few distinct
/// values, so repeated indices add up.
Tensor indices(const Shape& shape, int64_t n, uint64_t seed, bool i32 = false) {
  std::mt19937_64 g(seed);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (auto& e : v) e = static_cast<double>(g() % n);
  return Tensor::from_doubles(shape, v, i32 ? DType::I32 : DType::I64);
}

std::string name(const std::string& what, const Shape& s, int axis, DType d) {
  return what + " " + shape_string(s) + " axis " + std::to_string(axis) + " " +
         types::dtype_name(d);
}

}  // namespace

TEST_CASE("cuda take and take_add: every dtype and axis", "[cuda]") {
  const Shape xs = {5, 7, 3};
  const std::vector<Shape> idx_shapes = {{4}, {2, 3}, {}, {1000}};
  uint64_t seed = 1000;
  for (DType d : kAll)
    for (int axis = 0; axis < 3; ++axis)
      for (const Shape& is : idx_shapes)
        for (bool i32 : {false, true}) {
          Tensor x = rand(xs, d, seed++);
          Tensor idx = indices(is, xs[axis], seed++, i32);
          Tensor want = CPU().take(x, idx, axis);
          require_same_bits(want,
                            GPU().take(to_gpu(x), to_gpu(idx), axis),
                            name("take", is, axis, d));
          // take_add: v shaped like take's output.
          Tensor v = rand(want.shape(), d, seed++);
          require_same_bits(
              CPU().take_add(v, idx, axis, xs[axis]),
              GPU().take_add(to_gpu(v), to_gpu(idx), axis, xs[axis]),
              name("take_add", is, axis, d));
        }
}

TEST_CASE("cuda take_add: an embedding's gradient", "[cuda]") {
  // 3000 token ids into a table of 50 rows of 33: many repeats per row.
  for (DType d : {DType::F32, DType::F64, DType::BF16}) {
    Tensor idx = indices({30, 100}, 50, 7);
    Tensor g = rand({30, 100, 33}, d, 8);
    require_same_bits(CPU().take_add(g, idx, 0, 50),
                      GPU().take_add(to_gpu(g), to_gpu(idx), 0, 50),
                      name("embedding", {30, 100, 33}, 0, d));
    // Rows no index hits are zeros.
    require_same_bits(CPU().take_add(g, idx, 0, 60),
                      GPU().take_add(to_gpu(g), to_gpu(idx), 0, 60),
                      "unhit rows");
  }
}

TEST_CASE("cuda gather and scatter_add: every dtype and axis", "[cuda]") {
  const Shape xs = {5, 7, 3};
  uint64_t seed = 2000;
  for (DType d : kAll)
    for (int axis = 0; axis < 3; ++axis)
      for (int64_t m : {int64_t{1}, int64_t{4}, int64_t{9}}) {
        // idx: x's shape, smaller off the axis too, m along it.
        Shape is = {4, 6, 3};
        is[axis] = m;
        for (bool i32 : {false, true}) {
          Tensor x = rand(xs, d, seed++);
          Tensor idx = indices(is, xs[axis], seed++, i32);
          require_same_bits(CPU().gather(x, idx, axis),
                            GPU().gather(to_gpu(x), to_gpu(idx), axis),
                            name("gather", is, axis, d));
          Tensor v = rand(is, d, seed++);
          require_same_bits(CPU().scatter_add(xs, idx, v, axis),
                            GPU().scatter_add(xs, to_gpu(idx), to_gpu(v), axis),
                            name("scatter_add", is, axis, d));
        }
      }
}

TEST_CASE("cuda scatter_add: long columns and a sort's VJP", "[cuda]") {
  for (DType d : {DType::F32, DType::F64, DType::I64}) {
    // One column of 100003 indices into 17 slots: one long ordered sum.
    Tensor idx = indices({100003}, 17, 3);
    Tensor v = rand({100003}, d, 4);
    require_same_bits(CPU().scatter_add({17}, idx, v, 0),
                      GPU().scatter_add({17}, to_gpu(idx), to_gpu(v), 0),
                      name("long column", {100003}, 0, d));
    // A permutation per row (sort's indices) scattered back.
    Tensor x = rand({6, 301}, d, 5);
    Tensor perm = CPU().sort(x, 1, false).second;
    Tensor g = rand({6, 301}, d, 6);
    require_same_bits(CPU().scatter_add({6, 301}, perm, g, 1),
                      GPU().scatter_add({6, 301}, to_gpu(perm), to_gpu(g), 1),
                      name("sort vjp", {6, 301}, 1, d));
  }
}

TEST_CASE("cuda index ops: an index out of range is an error", "[cuda]") {
  // Callers check indices on the host; a kernel that meets a bad one
  // skips it and raises the device error, reported at the next copy.
  Tensor x = to_gpu(rand({5, 3}, DType::F32, 1));
  Tensor bad = to_gpu(Tensor::from_doubles({2}, {1, 5}, DType::I64));
  REQUIRE_THROWS(to_cpu(GPU().take(x, bad, 0)));
  Tensor v = to_gpu(rand({2, 3}, DType::F32, 2));
  REQUIRE_THROWS(to_cpu(GPU().take_add(v, bad, 0, 5)));
  Tensor bad2 = to_gpu(Tensor::from_doubles({2, 1}, {0, -1}, DType::I64));
  REQUIRE_THROWS(to_cpu(GPU().gather(x, bad2, 1)));
  Tensor v2 = to_gpu(rand({2, 1}, DType::F32, 3));
  REQUIRE_THROWS(to_cpu(GPU().scatter_add({5, 3}, bad2, v2, 1)));
  // The error is reported once: the device is usable afterwards.
  require_same_bits(CPU().reduce(ReduceOp::Sum, to_cpu(x), {0}, false),
                    GPU().reduce(ReduceOp::Sum, x, {0}, false),
                    "after the error");
}
