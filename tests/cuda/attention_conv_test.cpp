// attention (forward, VJP) and conv2d (forward, both VJPs) on the GPU
// against the CPU backend: f32 and f64, causal or not, n != t, sizes off
// every multiple of 32, and conv's stride, padding, dilation and groups.
//
// Tolerances. f64: 1e-12 relative, as rtol_of. f32: rtol_of's 1e-5
// relative. Both also take an absolute part of c * sqrt(L), L the longest
// sum behind the value (keys, rows, or a conv's taps or positions), c
// 1e-5 (f32) or 1e-13 (f64): cuBLAS and the CPU's BLAS fold a sum's terms
// in different orders, so two results differ by rounding errors that grow
// as a random walk, ~eps * |term| * sqrt(L), with terms here up to ~10 (values
// in [-3, 3]); and a sum that cancels to near zero (o, or dS = P (dP - D))
// keeps that absolute error, which no relative bound covers. c is ~100
// times eps * 10, room for the exp and log of the softmax rows besides.

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

namespace {

double atol_of(DType d, int64_t sum_length) {
  const double c = d == DType::F64 ? 1e-13 : 1e-5;
  return c * std::sqrt(static_cast<double>(std::max<int64_t>(sum_length, 1)));
}

std::string name_of(DType d) {
  return types::dtype_name(d);
}

struct AttnCase {
  Shape q, k, v;
  bool causal;
};

/// Forward and VJP of one case on both backends; the VJP on both sides
/// takes the CPU's o and lse, so its check does not inherit the forward's
/// differences.
void check_attention(const AttnCase& c, DType dt, uint64_t seed) {
  const int64_t n = c.q[c.q.size() - 2], t = c.k[c.k.size() - 2];
  const int64_t d = c.q.back(), e = c.v.back();
  const double scale =
      1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(d, 1)));
  const std::string what = name_of(dt) + " q " + shape_string(c.q) + " k " +
                           shape_string(c.k) + " v " + shape_string(c.v) +
                           (c.causal ? " causal" : "");
  Tensor q = rand(c.q, dt, seed), k = rand(c.k, dt, seed + 1),
         v = rand(c.v, dt, seed + 2);
  auto want = CPU().attention(q, k, v, scale, c.causal);
  auto got = GPU().attention(to_gpu(q), to_gpu(k), to_gpu(v), scale, c.causal);
  const double rtol = rtol_of(dt);
  require_close(want[0], got[0], rtol, atol_of(dt, t + d), what + ": o");
  require_close(want[1], got[1], rtol, atol_of(dt, t + d), what + ": lse");

  Shape os = c.q;
  os.back() = e;
  Tensor go = rand(os, dt, seed + 3);
  auto gw =
      CPU().attention_backward(go, q, k, v, want[0], want[1], scale, c.causal);
  Tensor G = to_gpu(go), Q = to_gpu(q), K = to_gpu(k), V = to_gpu(v),
         O = to_gpu(want[0]), L = to_gpu(want[1]);
  auto gg = GPU().attention_backward(G, Q, K, V, O, L, scale, c.causal);
  const int64_t inner = d + e;  // the scores' and dP's own sums
  require_close(gw[0], gg[0], rtol, atol_of(dt, t + inner), what + ": dq");
  require_close(gw[1], gg[1], rtol, atol_of(dt, n + inner), what + ": dk");
  require_close(gw[2], gg[2], rtol, atol_of(dt, n + inner), what + ": dv");

  // No atomics: a second run gives the same bits.
  auto again = GPU().attention_backward(G, Q, K, V, O, L, scale, c.causal);
  for (int i = 0; i < 3; ++i)
    require_same_bits(to_cpu(gg[i]), again[i], what + ": VJP run twice");
  auto fwd2 = GPU().attention(Q, K, V, scale, c.causal);
  require_same_bits(to_cpu(got[0]), fwd2[0], what + ": o run twice");
}

struct ConvCase {
  Shape x, k;
  ConvShape cs;
};

ConvShape conv_shape(int64_t sh,
                     int64_t sw,
                     int64_t ph,
                     int64_t pw,
                     int64_t dh,
                     int64_t dw,
                     int64_t groups) {
  return {{sh, sw}, {ph, pw}, {dh, dw}, groups};
}

void check_conv(const ConvCase& c, DType dt, uint64_t seed) {
  const std::string what =
      name_of(dt) + " x " + shape_string(c.x) + " k " + shape_string(c.k) +
      " stride " + std::to_string(c.cs.stride[0]) + "," +
      std::to_string(c.cs.stride[1]) + " pad " +
      std::to_string(c.cs.padding[0]) + "," + std::to_string(c.cs.padding[1]) +
      " dil " + std::to_string(c.cs.dilation[0]) + "," +
      std::to_string(c.cs.dilation[1]) + " groups " +
      std::to_string(c.cs.groups);
  Tensor x = rand(c.x, dt, seed), k = rand(c.k, dt, seed + 1);
  Tensor X = to_gpu(x), K = to_gpu(k);
  Tensor y = CPU().conv2d(x, k, c.cs);
  Tensor Y = GPU().conv2d(X, K, c.cs);
  const int64_t taps = c.k[1] * c.k[2] * c.k[3];  // forward's sum
  const int64_t B = y.shape()[0], O = y.shape()[1];
  const int64_t positions = y.shape()[2] * y.shape()[3];
  const double rtol = rtol_of(dt);
  require_close(y, Y, rtol, atol_of(dt, taps), what + ": conv2d");

  Tensor gy = rand(y.shape(), dt, seed + 2);
  Tensor GY = to_gpu(gy);
  // grad input sums over a group's outputs and the taps reading a pixel;
  // grad kernel over images and positions.
  const int64_t gi_len = O / c.cs.groups * c.k[2] * c.k[3];
  Tensor gx = CPU().conv2d_grad_input(gy, k, c.x, c.cs);
  Tensor GX = GPU().conv2d_grad_input(GY, K, c.x, c.cs);
  require_close(gx, GX, rtol, atol_of(dt, gi_len), what + ": grad input");
  Tensor gk = CPU().conv2d_grad_kernel(gy, x, c.k, c.cs);
  Tensor GK = GPU().conv2d_grad_kernel(GY, X, c.k, c.cs);
  require_close(
      gk, GK, rtol, atol_of(dt, B * positions), what + ": grad kernel");

  require_same_bits(to_cpu(GX),
                    GPU().conv2d_grad_input(GY, K, c.x, c.cs),
                    what + ": grad input run twice");
  require_same_bits(to_cpu(GK),
                    GPU().conv2d_grad_kernel(GY, X, c.k, c.cs),
                    what + ": grad kernel run twice");
}

}  // namespace

TEST_CASE("cuda: attention and its VJP match the CPU's", "[cuda]") {
  const AttnCase cases[] = {
      // n < t: the last keys are seen by no row under the mask.
      {{2, 3, 37, 24}, {2, 3, 41, 24}, {2, 3, 41, 16}, false},
      {{2, 3, 37, 24}, {2, 3, 41, 24}, {2, 3, 41, 16}, true},
      // n > t: rows past t see every key.
      {{3, 45, 8}, {3, 33, 8}, {3, 33, 13}, true},
      {{3, 45, 8}, {3, 33, 8}, {3, 33, 13}, false},
      // n = t, wider rows than a row kernel's block (128 threads).
      {{2, 2, 131, 40}, {2, 2, 131, 40}, {2, 2, 131, 40}, true},
      // One matrix, one key, rank 2.
      {{5, 3}, {1, 3}, {1, 7}, true},
  };
  uint64_t seed = 100;
  for (DType dt : {DType::F32, DType::F64})
    for (const AttnCase& c : cases) check_attention(c, dt, seed += 10);
}

TEST_CASE("cuda: attention's empty edges match the CPU's", "[cuda]") {
  for (DType dt : {DType::F32, DType::F64}) {
    // No keys: o and lse NaN forward, zero gradients backward.
    Tensor q = rand({2, 4, 3}, dt, 1), k = rand({2, 0, 3}, dt, 2),
           v = rand({2, 0, 5}, dt, 3);
    auto want = CPU().attention(q, k, v, 0.5, false);
    auto got = GPU().attention(to_gpu(q), to_gpu(k), to_gpu(v), 0.5, false);
    require_close(want[0], got[0], 0, 0, name_of(dt) + " no keys: o");
    require_close(want[1], got[1], 0, 0, name_of(dt) + " no keys: lse");
    Tensor go = rand({2, 4, 5}, dt, 4);
    auto gw =
        CPU().attention_backward(go, q, k, v, want[0], want[1], 0.5, false);
    auto gg = GPU().attention_backward(to_gpu(go),
                                       to_gpu(q),
                                       to_gpu(k),
                                       to_gpu(v),
                                       to_gpu(want[0]),
                                       to_gpu(want[1]),
                                       0.5,
                                       false);
    for (int i = 0; i < 3; ++i)
      require_close(gw[i], gg[i], 0, 0, name_of(dt) + " no keys: VJP");
  }
}

TEST_CASE("cuda: attention over more matrices than one scratch chunk",
          "[cuda]") {
  // f64, 20 matrices of 1300 x 1300 scores: 270 MB, over the 256 MiB
  // chunk of Note [Attention on the GPU by products], so the matrices run
  // in two chunks (19, then 1).
  check_attention(
      {{4, 5, 1300, 8}, {4, 5, 1300, 8}, {4, 5, 1300, 8}, true}, DType::F64, 7);
}

TEST_CASE("cuda: conv2d and its VJPs match the CPU's", "[cuda]") {
  const ConvCase cases[] = {
      // stride 2, padding 1, dilation 2, groups 2, odd sizes.
      {{3, 4, 11, 9}, {6, 2, 3, 3}, ConvShape::square(2, 1, 2, 2)},
      // Each axis its own stride, padding and dilation.
      {{2, 4, 7, 10}, {5, 4, 2, 3}, conv_shape(2, 1, 1, 0, 1, 2, 1)},
      // Stride past the kernel: pixels no window reads (gradient 0).
      {{2, 3, 10, 11}, {4, 3, 1, 2}, conv_shape(3, 2, 0, 1, 1, 1, 1)},
      // Depthwise (groups = channels), padding 1.
      {{2, 6, 8, 7}, {6, 1, 3, 3}, ConvShape::square(1, 1, 1, 6)},
      // 1x1, one image, more outputs than inputs.
      {{1, 3, 5, 5}, {7, 3, 1, 1}, ConvShape::square(1, 0)},
      // Padding wider than the dilated kernel's reach past the input.
      {{2, 2, 4, 3}, {4, 1, 2, 2}, conv_shape(1, 2, 3, 2, 3, 1, 2)},
  };
  uint64_t seed = 500;
  for (DType dt : {DType::F32, DType::F64})
    for (const ConvCase& c : cases) check_conv(c, dt, seed += 10);
}

TEST_CASE("cuda: conv2d over more images than one scratch chunk", "[cuda]") {
  // f64 columns of 100 rows x 128^2 positions: 13 MB an image, so 20 of
  // the 23 images fill one 256 MiB chunk (Note [Convolution on the GPU by
  // columns]) and the rest run as a second; grad kernel adds the second
  // chunk's product to the first's.
  check_conv({{23, 4, 128, 128}, {4, 2, 5, 5}, ConvShape::square(1, 2, 1, 2)},
             DType::F64,
             9);
}

TEST_CASE("cuda: conv2d on halves widens to f32 as the CPU", "[cuda]") {
  for (DType dt : {DType::BF16, DType::F16}) {
    Tensor x = rand({2, 4, 9, 8}, dt, 11), k = rand({6, 2, 3, 3}, dt, 12);
    ConvShape cs = ConvShape::square(2, 1, 1, 2);
    Tensor y = CPU().conv2d(x, k, cs);
    // Both sides round an f32 sum once; f32 differences of ~1e-6 can still
    // round to neighbouring halves, one half ulp apart.
    require_close(y,
                  GPU().conv2d(to_gpu(x), to_gpu(k), cs),
                  rtol_of(dt),
                  1e-2,
                  name_of(dt) + " conv2d");
    Tensor gy = rand(y.shape(), dt, 13);
    require_close(CPU().conv2d_grad_input(gy, k, x.shape(), cs),
                  GPU().conv2d_grad_input(to_gpu(gy), to_gpu(k), x.shape(), cs),
                  rtol_of(dt),
                  1e-2,
                  name_of(dt) + " grad input");
    require_close(
        CPU().conv2d_grad_kernel(gy, x, k.shape(), cs),
        GPU().conv2d_grad_kernel(to_gpu(gy), to_gpu(x), k.shape(), cs),
        rtol_of(dt),
        1e-2,
        name_of(dt) + " grad kernel");
  }
}
