// The CUDA data movement primitives (ops/cuda/cuda_shape.cu) against the
// CPU backend: every dtype (they move bytes, so bit for bit), odd shapes,
// 0-d and empty tensors, and both of permute's paths (the tiled transpose
// of Note [Tiled transposes] and the strided copy).

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

namespace {

const std::vector<DType> kAll = {DType::F32,
                                 DType::F64,
                                 DType::BF16,
                                 DType::F16,
                                 DType::I32,
                                 DType::I64,
                                 DType::Bool};

std::string name_of(DType d) {
  return ss::types::dtype_name(d);
}

std::string perm_string(const std::vector<int>& p) {
  std::string s = "(";
  for (int v : p) s += std::to_string(v) + " ";
  return s + ")";
}

}  // namespace

TEST_CASE("cuda: permute matches the CPU for every permutation", "[cuda]") {
  // Every permutation of small odd shapes, and transposes large enough
  // for the tiled path (2-d, batched, with a size-1 axis between, and
  // sizes not a multiple of the tile).
  const std::vector<Shape> every = {{3, 5, 7}, {2, 3, 4, 5}, {1, 17, 1, 20}};
  struct Case {
    Shape shape;
    std::vector<int> perm;
  };
  std::vector<Case> cases = {{{40, 33}, {1, 0}},
                             {{3, 40, 50}, {0, 2, 1}},
                             {{2, 3, 33, 65}, {1, 0, 3, 2}},
                             {{70, 1, 35}, {2, 1, 0}},
                             {{17, 16}, {1, 0}},
                             {{5, 64, 1}, {2, 1, 0}},
                             {{}, {}},
                             {{0, 3}, {1, 0}},
                             {{4, 0, 2}, {2, 0, 1}}};
  for (const Shape& s : every) {
    std::vector<int> p(s.size());
    std::iota(p.begin(), p.end(), 0);
    do cases.push_back({s, p});
    while (std::next_permutation(p.begin(), p.end()));
  }
  for (DType d : kAll)
    for (const Case& c : cases) {
      Tensor x = rand(c.shape, d, 51);
      require_same_bits(CPU().permute(x, c.perm),
                        GPU().permute(to_gpu(x), c.perm),
                        "permute " + name_of(d) + " " + shape_string(c.shape) +
                            " " + perm_string(c.perm));
    }
}

TEST_CASE("cuda: broadcast_to matches the CPU", "[cuda]") {
  struct Case {
    Shape from, to;
  };
  const std::vector<Case> cases = {{{3, 1, 7}, {2, 3, 5, 7}},
                                   {{}, {4, 3}},
                                   {{5, 1}, {3, 5, 4}},
                                   {{0, 1}, {0, 3}},
                                   {{1}, {1}},
                                   {{3, 5, 7}, {3, 5, 7}},
                                   {{7}, {2, 1, 7}},
                                   {{1, 1}, {}}};
  for (DType d : kAll)
    for (const Case& c : cases) {
      Tensor x = rand(c.from, d, 61);
      std::string what = "broadcast_to " + name_of(d) + " " +
                         shape_string(c.from) + " -> " + shape_string(c.to);
      INFO(what);
      Tensor want;
      try {
        want = CPU().broadcast_to(x, c.to);
      } catch (const std::exception&) {
        REQUIRE_THROWS(GPU().broadcast_to(to_gpu(x), c.to));
        continue;
      }
      require_same_bits(want, GPU().broadcast_to(to_gpu(x), c.to), what);
    }
}

TEST_CASE("cuda: slice matches the CPU on every axis", "[cuda]") {
  struct Range {
    int64_t start, stop, step;
  };
  const std::vector<Range> ranges = {{0, 5, 1},
                                     {1, 4, 2},
                                     {2, 100, 3},
                                     {3, 3, 1},
                                     {4, 2, 1},
                                     {0, 9, 4},
                                     {-2, 3, 1},
                                     {8, 9, 5}};
  for (DType d : kAll)
    for (const Shape& s : {Shape{5, 7, 9}, Shape{9}, Shape{2, 0, 6}}) {
      Tensor x = rand(s, d, 71);
      for (int axis = 0; axis < static_cast<int>(s.size()); ++axis)
        for (const Range& r : ranges)
          require_same_bits(
              CPU().slice(x, axis, r.start, r.stop, r.step),
              GPU().slice(to_gpu(x), axis, r.start, r.stop, r.step),
              "slice " + name_of(d) + " " + shape_string(s) + " axis " +
                  std::to_string(axis) + " " + std::to_string(r.start) + ":" +
                  std::to_string(r.stop) + ":" + std::to_string(r.step));
    }
}

TEST_CASE("cuda: concat matches the CPU on every axis", "[cuda]") {
  struct Case {
    std::vector<Shape> shapes;
    int axis;
  };
  const std::vector<Case> cases = {
      {{{2, 3, 4}, {2, 1, 4}, {2, 0, 4}, {2, 5, 4}}, 1},
      {{{2, 3, 4}, {1, 3, 4}}, 0},
      {{{2, 3, 4}, {2, 3, 7}, {2, 3, 1}}, 2},
      {{{5}}, 0},
      {{{3}, {0}, {4}}, 0},
      {{{0, 2}, {0, 3}}, 1},
      {{{3, 0}, {2, 0}}, 0}};
  for (DType d : kAll)
    for (const Case& c : cases) {
      std::vector<Tensor> cpu, gpu;
      std::string what =
          "concat " + name_of(d) + " axis " + std::to_string(c.axis);
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        cpu.push_back(rand(c.shapes[i], d, 81 + i));
        gpu.push_back(to_gpu(cpu.back()));
        what += " " + shape_string(c.shapes[i]);
      }
      require_same_bits(
          CPU().concat(cpu, c.axis), GPU().concat(gpu, c.axis), what);
    }
}

TEST_CASE("cuda: pad matches the CPU, the value converted as full's",
          "[cuda]") {
  struct Pads {
    int64_t before, after;
  };
  // Values that round (2.7 to ints), saturate (1e12 to i32, to f16's inf)
  // and NaN (0 in ints, true in bool).
  const std::vector<double> values = {
      1.5, -7.0, 2.7, 1e12, std::numeric_limits<double>::quiet_NaN(), 0.0};
  for (DType d : kAll)
    for (const Shape& s : {Shape{3, 4, 5}, Shape{3, 0, 2}, Shape{6}})
      for (int axis = 0; axis < static_cast<int>(s.size()); ++axis)
        for (Pads p : {Pads{0, 0}, Pads{2, 1}, Pads{0, 3}, Pads{4, 0}})
          for (double v : values) {
            Tensor x = rand(s, d, 91);
            require_same_bits(CPU().pad(x, axis, p.before, p.after, v),
                              GPU().pad(to_gpu(x), axis, p.before, p.after, v),
                              "pad " + name_of(d) + " " + shape_string(s) +
                                  " axis " + std::to_string(axis) + " (" +
                                  std::to_string(p.before) + ", " +
                                  std::to_string(p.after) + ") with " +
                                  std::to_string(v));
          }
}
