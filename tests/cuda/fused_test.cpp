// The CUDA backend's fused kernels (ops/cuda/cuda_fused.cu) against the
// CPU backend: softmax and log_softmax, layer_norm and rms_norm along the
// last axis with and without gamma/beta, gelu (erf and tanh) and their
// VJPs, f32 and f64, rows of 1 to 5000 elements and row counts across the
// norm's gradient chunks (Note [Norm gradients by fixed chunks]).
//
// Tolerances: rtol_of(dtype) relative, plus an absolute part of rtol
// times the data's scale where a result is a difference of O(scale) terms
// (1 + erf(x) for negative x, d - mean(d) - ..., a sum over rows): there
// a last-bit difference of the terms (the GPU's exp and erf, its order of
// summation) is large relative to a result near zero. Every kernel is
// also run twice: the same bits (no float atomics).

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace {

using namespace cuda_test;

const std::vector<Shape> kShapes = {
    {}, {1}, {7}, {3, 1}, {2, 3, 7}, {4, 1000}, {2, 5000}, {130, 7}, {0, 5}};

std::string name_of(const Shape& s, DType d, const std::string& what) {
  return what + " " + shape_string(s) + " " + types::dtype_name(d);
}

void require_deterministic(const Tensor& a,
                           const Tensor& b,
                           const std::string& what) {
  require_same_bits(to_cpu(a), b, what + " (run twice)");
}

/// Rows with the special values softmax must handle as the CPU: all -inf
/// (NaN out), a NaN, +inf, and large finite values.
Tensor special_rows(DType d) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return Tensor::from_doubles({4, 5},
                              {-inf, -inf, -inf,  -inf, -inf,  //
                               1.0,  nan,  2.0,   3.0,  4.0,   //
                               1.0,  inf,  -inf,  2.0,  3.0,   //
                               80.0, 90.0, -90.0, 70.0, 100.0},
                              d);
}

}  // namespace

TEST_CASE("cuda softmax_last and log_softmax", "[cuda]") {
  for (DType d : {DType::F32, DType::F64})
    for (bool log : {false, true}) {
      const double rtol = rtol_of(d);
      const std::string kind = log ? "log_softmax" : "softmax";
      for (const Shape& s : kShapes) {
        Tensor x = rand(s, d, 1, -30.0, 30.0);
        Tensor want = CPU().softmax_last(x, log);
        Tensor got = GPU().softmax_last(to_gpu(x), log);
        require_close(want, got, rtol, 10 * rtol, name_of(s, d, kind));
        require_deterministic(
            got, GPU().softmax_last(to_gpu(x), log), name_of(s, d, kind));
      }
      Tensor x = special_rows(d);
      require_close(CPU().softmax_last(x, log),
                    GPU().softmax_last(to_gpu(x), log),
                    rtol,
                    10 * rtol,
                    kind + " special rows");
    }
}

TEST_CASE("cuda softmax_last_backward", "[cuda]") {
  for (DType d : {DType::F32, DType::F64})
    for (bool log : {false, true}) {
      const double rtol = rtol_of(d);
      const std::string kind = log ? "log_softmax vjp" : "softmax vjp";
      for (const Shape& s : kShapes) {
        Tensor y = CPU().softmax_last(rand(s, d, 2, -5.0, 5.0), log);
        Tensor g = rand(s, d, 3);
        Tensor want = CPU().softmax_last_backward(g, y, log);
        Tensor got = GPU().softmax_last_backward(to_gpu(g), to_gpu(y), log);
        require_close(want, got, rtol, 10 * rtol, name_of(s, d, kind));
        require_deterministic(
            got,
            GPU().softmax_last_backward(to_gpu(g), to_gpu(y), log),
            name_of(s, d, kind));
      }
    }
}

TEST_CASE("cuda norm_last: layer_norm and rms_norm, affine or not", "[cuda]") {
  for (DType d : {DType::F32, DType::F64})
    for (bool centered : {true, false})
      for (int affine = 0; affine < 3; ++affine) {  // none, gamma, both
        const double rtol = rtol_of(d);
        for (const Shape& s : kShapes) {
          const std::string what =
              name_of(s, d, centered ? "layer_norm" : "rms_norm") + " affine " +
              std::to_string(affine);
          Shape ls = {s.empty() ? 1 : s.back()};
          Tensor x = rand(s, d, 4);
          Tensor gamma = affine ? rand(ls, d, 5) : Tensor();
          Tensor beta = affine == 2 ? rand(ls, d, 6) : Tensor();
          auto want = CPU().norm_last(x, 1e-5, centered, gamma, beta);
          Tensor gg = affine ? to_gpu(gamma) : Tensor();
          Tensor gb = affine == 2 ? to_gpu(beta) : Tensor();
          auto got = GPU().norm_last(to_gpu(x), 1e-5, centered, gg, gb);
          require_close(want[0], got[0], rtol, 10 * rtol, what + " y");
          require_close(want[1], got[1], rtol, rtol, what + " mean");
          require_close(want[2], got[2], rtol, 0.0, what + " rstd");
          auto again = GPU().norm_last(to_gpu(x), 1e-5, centered, gg, gb);
          for (int k = 0; k < 3; ++k)
            require_deterministic(got[k], again[k], what);
        }
      }
}

TEST_CASE("cuda norm_last_backward: dx, and gamma's and beta's gradients",
          "[cuda]") {
  // Row counts below, at and across kNormChunk (64) rows.
  std::vector<Shape> shapes = kShapes;
  for (Shape s : {Shape{64, 9}, Shape{65, 33}, Shape{3, 100, 17}})
    shapes.push_back(s);
  for (DType d : {DType::F32, DType::F64})
    for (bool centered : {true, false})
      for (bool affine : {false, true}) {
        const double rtol = rtol_of(d);
        for (const Shape& s : shapes) {
          const std::string what =
              name_of(s, d, centered ? "layer_norm vjp" : "rms_norm vjp") +
              (affine ? " affine" : "");
          Shape ls = {s.empty() ? 1 : s.back()};
          Tensor x = rand(s, d, 7), g = rand(s, d, 8);
          Tensor gamma = affine ? rand(ls, d, 9) : Tensor();
          auto fwd = CPU().norm_last(x, 1e-5, centered, gamma, Tensor());
          auto want =
              CPU().norm_last_backward(g, x, fwd[1], fwd[2], centered, gamma);
          Tensor gg = affine ? to_gpu(gamma) : Tensor();
          auto got = GPU().norm_last_backward(to_gpu(g),
                                              to_gpu(x),
                                              to_gpu(fwd[1]),
                                              to_gpu(fwd[2]),
                                              centered,
                                              gg);
          require_close(want[0], got[0], rtol, 30 * rtol, what + " dx");
          REQUIRE(got[1].defined() == affine);
          REQUIRE(got[2].defined() == affine);
          if (!affine) continue;
          // Sums over the rows of O(10) terms.
          const double rows = double(x.numel()) / double(ls[0]) + 1;
          require_close(
              want[1], got[1], rtol, 10 * rows * rtol, what + " dgamma");
          require_close(
              want[2], got[2], rtol, 10 * rows * rtol, what + " dbeta");
          auto again = GPU().norm_last_backward(to_gpu(g),
                                                to_gpu(x),
                                                to_gpu(fwd[1]),
                                                to_gpu(fwd[2]),
                                                centered,
                                                gg);
          for (int k = 0; k < 3; ++k)
            require_deterministic(got[k], again[k], what);
        }
      }
}

TEST_CASE("cuda gelu and its VJP, erf and tanh", "[cuda]") {
  for (DType d : {DType::F32, DType::F64})
    for (bool tanh : {false, true}) {
      const double rtol = rtol_of(d);
      const std::string kind = tanh ? "gelu tanh" : "gelu erf";
      for (const Shape& s : kShapes) {
        Tensor x = rand(s, d, 10, -8.0, 8.0), g = rand(s, d, 11);
        require_close(CPU().gelu(x, tanh),
                      GPU().gelu(to_gpu(x), tanh),
                      rtol,
                      rtol,
                      name_of(s, d, kind));
        Tensor want = CPU().gelu_backward(g, x, tanh);
        Tensor got = GPU().gelu_backward(to_gpu(g), to_gpu(x), tanh);
        require_close(want, got, rtol, 3 * rtol, name_of(s, d, kind + " vjp"));
        require_deterministic(got,
                              GPU().gelu_backward(to_gpu(g), to_gpu(x), tanh),
                              name_of(s, d, kind + " vjp"));
      }
    }
}

TEST_CASE("cuda fused kernels refuse non-float dtypes", "[cuda]") {
  Tensor i = to_gpu(rand({2, 3}, DType::I32, 1));
  CHECK_THROWS_AS(GPU().softmax_last(i, false), std::invalid_argument);
  CHECK_THROWS_AS(GPU().gelu(i, false), std::invalid_argument);
  CHECK_THROWS_AS(GPU().norm_last(i, 1e-5, true, Tensor(), Tensor()),
                  std::invalid_argument);
}
