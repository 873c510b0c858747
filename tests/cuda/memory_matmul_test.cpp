// The CUDA module's memory (copies, the caching allocator, the device error
// word) and its products, against the CPU backend.

#include <dlfcn.h>

#include "ops/core/op_error.h"
#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

TEST_CASE("cuda: copies to the device and back keep every byte", "[cuda]") {
  // Sizes across the pinned buffers' 8 MiB chunks, and empty tensors.
  for (int64_t n : {0, 1, 7, 1000003, 3 * 1024 * 1024 + 5}) {
    for (DType d : {DType::F32,
                    DType::F64,
                    DType::I64,
                    DType::Bool,
                    DType::BF16,
                    DType::I32,
                    DType::F16}) {
      Tensor x = rand({n}, d, 17 + n);
      Tensor g = to_gpu(x);
      REQUIRE(g.device().kind == Device::Kind::Cuda);
      require_same_bits(x, to_cpu(g), "round trip");
      require_same_bits(x, to_cpu(g.clone()), "clone on the device");
    }
  }
  Tensor g = to_gpu(rand({3, 4}, DType::F64, 3));
  g.set(5, 2.5);
  REQUIRE(g.at(5) == 2.5);
  require_same_bits(Tensor::full({2, 3}, 1.5, DType::F32),
                    Tensor::full({2, 3}, 1.5, DType::F32, gpu0()),
                    "full");
  require_same_bits(Tensor::zeros({5}, DType::I64),
                    Tensor::zeros({5}, DType::I64, gpu0()),
                    "zeros");
}

TEST_CASE("cuda: a steady loop of the same sizes calls cudaMalloc never",
          "[cuda]") {
  auto step = [] {
    Tensor a = to_gpu(rand({64, 784}, DType::F32, 1));
    Tensor w = to_gpu(rand({784, 256}, DType::F32, 2));
    Tensor h = GPU().matmul(a, w, false, false);
    Tensor r = GPU().unary(UnaryOp::Relu, h);
    return GPU().reduce(ReduceOp::Sum, r, {0, 1}, false).item();
  };
  step();
  step();
  auto before = memory_stats();
  for (int i = 0; i < 5; ++i) step();
  auto after = memory_stats();
  REQUIRE(after.first == before.first);
  REQUIRE(after.second == before.second);
}

TEST_CASE("cuda: matmul matches the CPU's products", "[cuda]") {
  struct Case {
    Shape a, b;
    bool ta, tb;
  };
  std::vector<Case> cases = {
      {{5, 7}, {7, 3}, false, false},
      {{7, 5}, {7, 3}, true, false},
      {{5, 7}, {3, 7}, false, true},
      {{7, 5}, {3, 7}, true, true},
      {{2, 3, 37, 29}, {2, 3, 29, 41}, false, false},  // batched
      {{4, 37, 29}, {29, 41}, false, false},           // one B for all
      {{29, 37}, {4, 29, 41}, true, false},            // one A for all
      {{2, 1, 6, 5}, {1, 3, 5, 4}, false, false},      // partial broadcast
      {{64, 784}, {784, 256}, false, false},           // the README MLP's
      {{64, 784}, {64, 256}, true, false},             // and its VJPs
      {{64, 256}, {784, 256}, false, true},
      {{3, 0}, {0, 4}, false, false},  // empty inner axis: zeros
      {{0, 5}, {5, 4}, false, false},  // empty output
  };
  for (DType d : {DType::F64,
                  DType::F32,
                  DType::I64,
                  DType::I32,
                  DType::BF16,
                  DType::F16}) {
    for (const Case& c : cases) {
      Tensor a = rand(c.a, d, 11), b = rand(c.b, d, 12);
      Tensor want = CPU().matmul(a, b, c.ta, c.tb);
      Tensor got = GPU().matmul(to_gpu(a), to_gpu(b), c.ta, c.tb);
      std::string what = std::string(ss::types::dtype_name(d)) + " " +
                         shape_string(c.a) + (c.ta ? "T" : "") + " @ " +
                         shape_string(c.b) + (c.tb ? "T" : "");
      if (d == DType::I64 || d == DType::I32) {
        require_same_bits(want, got, what);
      } else {
        // Sums of up to 784 products of values in [-3, 3): both sides
        // round each product's terms in another order, so the error grows
        // with the sum's length (sqrt(k) ulps of its largest partial
        // sums); halves are computed in f32 on both sides and rounded
        // once, so they carry f32's error too (a result near 0 after
        // cancellation may round to the next half).
        int64_t k = c.ta ? c.a[c.a.size() - 2] : c.a.back();
        double atol = d == DType::F64 ? 1e-12 * k : 2e-6 * k;
        require_close(want, got, rtol_of(d), atol, what);
      }
    }
  }
}

TEST_CASE(
    "cuda: a kernel's integer division by zero is an error at the "
    "next read",
    "[cuda]") {
  Tensor a = to_gpu(Tensor::from_doubles({3}, {1, 2, 3}, DType::I64));
  Tensor z = to_gpu(Tensor::from_doubles({3}, {1, 0, 1}, DType::I64));
  Tensor q = GPU().binary(BinaryOp::FloorDiv, a, z);
  REQUIRE_THROWS_AS(to_cpu(q), ss::ops::OpError);
  // The word is cleared once reported: the next read is clean.
  require_same_bits(Tensor::from_doubles({3}, {1, 2, 3}, DType::I64),
                    to_cpu(a),
                    "after the error");
}
