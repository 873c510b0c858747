// The CUDA reductions, cumsum and sort against the CPU backend, bit for
// bit: they fold in the CPU's order (Note [One fold order for every
// backend] in ops/core/fold_order.h), so even float sums agree exactly,
// and sort is stable on both.

#include <cmath>
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

struct Case {
  Shape shape;
  std::vector<int> axes;
};

/// Odd shapes over every plan of a reduction: rows, columns, interleaved
/// axes (permuted), all axes, none, size-1 axes, and sizes that cross
/// the chunk boundaries (one long row, few columns over many rows).
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{3, 5, 7}, {0}},
      {{3, 5, 7}, {1, 2}},
      {{3, 5, 7}, {}},
      {{3, 5, 7}, {0, 2}},
      {{3, 5, 7}, {1}},
      {{3, 5, 7}, {0, 1, 2}},
      {{9, 1, 11}, {1}},
      {{2, 3, 4, 5}, {1, 3}},
      {{100003}, {0}},
      {{40001, 3}, {0}},
      {{3, 40001}, {1}},
      {{1500, 70}, {0}},
      {{5000, 1100}, {0}},
      {{2, 40000, 3}, {1}},
      {{}, {}},
  };
  return c;
}

std::string name(const Shape& s,
                 const std::vector<int>& axes,
                 DType d,
                 const std::string& what) {
  std::string a;
  for (int x : axes) a += std::to_string(x) + " ";
  return what + " " + shape_string(s) + " axes {" + a + "} " +
         types::dtype_name(d);
}

/// [x] with about one element in 50 set to NaN (float dtypes only).
Tensor with_nans(const Tensor& x, uint64_t seed) {
  if (x.dtype() != DType::F32 && x.dtype() != DType::F64) return x;
  std::vector<double> v = x.to_doubles();
  std::mt19937_64 g(seed);
  for (auto& e : v)
    if (g() % 50 == 0) e = std::nan("");
  return Tensor::from_doubles(x.shape(), v, x.dtype());
}

}  // namespace

TEST_CASE("cuda reduce: every op and dtype, bit for bit", "[cuda]") {
  const ReduceOp ops[] = {ReduceOp::Sum,
                          ReduceOp::Prod,
                          ReduceOp::Max,
                          ReduceOp::Min,
                          ReduceOp::Any,
                          ReduceOp::All};
  uint64_t seed = 100;
  for (const Case& c : cases())
    for (DType d : kAll) {
      Tensor x = rand(c.shape, d, seed++);
      Tensor gx = to_gpu(x);
      for (ReduceOp op : ops)
        for (bool keep : {false, true})
          require_same_bits(
              CPU().reduce(op, x, c.axes, keep),
              GPU().reduce(op, gx, c.axes, keep),
              name(c.shape,
                   c.axes,
                   d,
                   "reduce op " + std::to_string(static_cast<int>(op)) +
                       (keep ? " keepdims" : "")));
      if (c.axes.size() == 1)
        for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin})
          for (bool keep : {false, true})
            require_same_bits(CPU().reduce(op, x, c.axes, keep),
                              GPU().reduce(op, gx, c.axes, keep),
                              name(c.shape, c.axes, d, "arg"));
    }
}

TEST_CASE("cuda reduce: NaN rules and first-index ties", "[cuda]") {
  uint64_t seed = 300;
  for (const Case& c : cases())
    for (DType d : {DType::F32, DType::F64}) {
      Tensor x = with_nans(rand(c.shape, d, seed), seed);
      ++seed;
      Tensor gx = to_gpu(x);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min})
        require_same_bits(CPU().reduce(op, x, c.axes, false),
                          GPU().reduce(op, gx, c.axes, false),
                          name(c.shape, c.axes, d, "nan"));
      if (c.axes.size() == 1)
        for (ReduceOp op : {ReduceOp::ArgMax, ReduceOp::ArgMin})
          require_same_bits(CPU().reduce(op, x, c.axes, false),
                            GPU().reduce(op, gx, c.axes, false),
                            name(c.shape, c.axes, d, "nan arg"));
    }
  // Ties: ints in [-5, 5] over long axes hold many equal extremes.
  Tensor t = rand({7, 300}, DType::I32, 9);
  for (int axis : {0, 1})
    require_same_bits(CPU().reduce(ReduceOp::ArgMax, t, {axis}, false),
                      GPU().reduce(ReduceOp::ArgMax, to_gpu(t), {axis}, false),
                      "ties");
}

TEST_CASE("cuda reduce: empty inputs", "[cuda]") {
  for (DType d : {DType::F32, DType::I64, DType::Bool}) {
    Tensor x = rand({3, 0, 4}, d, 1);
    for (ReduceOp op :
         {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Any, ReduceOp::All})
      require_same_bits(CPU().reduce(op, x, {1}, false),
                        GPU().reduce(op, to_gpu(x), {1}, false),
                        name(x.shape(), {1}, d, "empty"));
    require_same_bits(CPU().reduce(ReduceOp::Max, x, {0}, false),
                      GPU().reduce(ReduceOp::Max, to_gpu(x), {0}, false),
                      "empty max of a kept empty axis");
  }
}

TEST_CASE("cuda cumsum: every dtype and axis, bit for bit", "[cuda]") {
  const std::vector<Shape> shapes = {{3, 5, 7}, {100003}, {2, 3001, 5}, {}};
  uint64_t seed = 500;
  for (const Shape& s : shapes)
    for (DType d : kAll) {
      Tensor x = rand(s, d, seed++);
      for (int axis = 0; axis < static_cast<int>(s.size()); ++axis)
        for (bool rev : {false, true})
          require_same_bits(CPU().cumsum(x, axis, rev),
                            GPU().cumsum(to_gpu(x), axis, rev),
                            name(s, {axis}, d, rev ? "cumsum rev" : "cumsum"));
    }
}

TEST_CASE("cuda sort: stable, both directions, NaN placement", "[cuda]") {
  const std::vector<Shape> shapes = {
      {3, 5, 7}, {1037}, {4, 2049}, {3, 1, 65}, {100003}};
  uint64_t seed = 700;
  for (const Shape& s : shapes)
    for (DType d : kAll) {
      // Ints and bools hold many ties; floats get NaNs and ±0.
      Tensor x = with_nans(rand(s, d, seed), seed);
      ++seed;
      for (int axis = 0; axis < static_cast<int>(s.size()); ++axis)
        for (bool desc : {false, true}) {
          auto [cv, ci] = CPU().sort(x, axis, desc);
          auto [gv, gi] = GPU().sort(to_gpu(x), axis, desc);
          std::string what = name(s, {axis}, d, desc ? "sort desc" : "sort");
          require_same_bits(ci, gi, what + " indices");
          require_same_bits(cv, gv, what + " values");
        }
    }
  // Signed zeros and repeated values tie: the stable order keeps them.
  Tensor z = Tensor::from_doubles(
      {9},
      {0.0, -0.0, 1.0, -0.0, 0.0, std::nan(""), 1.0, -1.0, std::nan("")},
      DType::F32);
  for (bool desc : {false, true}) {
    auto [cv, ci] = CPU().sort(z, 0, desc);
    auto [gv, gi] = GPU().sort(to_gpu(z), 0, desc);
    require_same_bits(ci, gi, "zeros");
    require_same_bits(cv, gv, "zeros values");
  }
}
