// conv2d (NCHW) by im2col + gemm, and its two VJPs:
//   forward      y_b   = K [O, CKK] @ cols(x_b) [CKK, H2W2]
//   grad input   gx_b  = col2im(K^T @ gy_b)
//   grad kernel  gK    = sum_b gy_b @ cols(x_b)^T
// f32 and f64 natively; halves in f32.

#include <algorithm>
#include <type_traits>

#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

struct Geometry {
  int64_t B, C, H, W, O, kh, kw, H2, W2, s, p;
  int64_t ckk() const { return C * kh * kw; }
  int64_t hw2() const { return H2 * W2; }
};

Geometry geometry(
    const Shape& x, const Shape& k, int stride, int padding, const char* op) {
  if (x.size() != 4 || k.size() != 4) fail(op, "x and k must be 4-d (NCHW)");
  if (x[1] != k[1]) fail(op, "channels differ");
  if (stride < 1 || padding < 0) fail(op, "bad stride or padding");
  Geometry g{x[0], x[1], x[2], x[3], k[0], k[2], k[3], 0, 0, stride, padding};
  if (g.H + 2 * g.p < g.kh || g.W + 2 * g.p < g.kw)
    fail(op, "kernel larger than the padded input");
  g.H2 = (g.H + 2 * g.p - g.kh) / g.s + 1;
  g.W2 = (g.W + 2 * g.p - g.kw) / g.s + 1;
  return g;
}

/// cols [CKK, H2*W2] from one image [C, H, W]; zeros where padding.
template <class T>
void im2col(const T* x, T* cols, const Geometry& g) {
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* row = cols + ((c * g.kh + ki) * g.kw + kj) * g.hw2();
        for (int64_t oy = 0; oy < g.H2; ++oy) {
          int64_t iy = oy * g.s - g.p + ki;
          T* dst = row + oy * g.W2;
          if (iy < 0 || iy >= g.H) {
            std::fill(dst, dst + g.W2, T(0));
            continue;
          }
          const T* src = x + (c * g.H + iy) * g.W;
          for (int64_t ox = 0; ox < g.W2; ++ox) {
            int64_t ix = ox * g.s - g.p + kj;
            dst[ox] = (ix >= 0 && ix < g.W) ? src[ix] : T(0);
          }
        }
      }
}

/// The transpose of im2col: adds cols back into one image [C, H, W].
template <class T>
void col2im(const T* cols, T* x, const Geometry& g) {
  std::fill(x, x + g.C * g.H * g.W, T(0));
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = cols + ((c * g.kh + ki) * g.kw + kj) * g.hw2();
        for (int64_t oy = 0; oy < g.H2; ++oy) {
          int64_t iy = oy * g.s - g.p + ki;
          if (iy < 0 || iy >= g.H) continue;
          T* dst = x + (c * g.H + iy) * g.W;
          const T* src = row + oy * g.W2;
          for (int64_t ox = 0; ox < g.W2; ++ox) {
            int64_t ix = ox * g.s - g.p + kj;
            if (ix >= 0 && ix < g.W) dst[ix] += src[ox];
          }
        }
      }
}

/// Runs f(T{}) for f32/f64 after widening halves; rounds the result back.
template <class F>
Tensor float_only(DType d, const char* op, F&& f) {
  if (d == DType::F32) return f(float{});
  if (d == DType::F64) return f(double{});
  fail(op, std::string("needs a float dtype, got ") + types::dtype_name(d));
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& k, int stride, int padding) {
  if (is_half(x.dtype()))
    return from_f32(conv2d(to_f32(x), to_f32(k), stride, padding), x.dtype());
  Geometry g = geometry(x.shape(), k.shape(), stride, padding, "conv2d");
  Tensor out = Tensor::empty({g.B, g.O, g.H2, g.W2}, x.dtype());
  return float_only(x.dtype(), "conv2d", [&](auto tag) {
    using T = decltype(tag);
    if (out.numel() == 0) return out;
    std::vector<T> cols(g.ckk() * g.hw2());
    for (int64_t b = 0; b < g.B; ++b) {
      im2col(x.data<T>() + b * g.C * g.H * g.W, cols.data(), g);
      gemm<T>(false,
              false,
              g.O,
              g.hw2(),
              g.ckk(),
              T(1),
              k.data<T>(),
              g.ckk(),
              cols.data(),
              g.hw2(),
              T(0),
              out.data<T>() + b * g.O * g.hw2(),
              g.hw2());
    }
    return out;
  });
}

Tensor conv2d_grad_input(const Tensor& gy,
                         const Tensor& k,
                         const Shape& x_shape,
                         int stride,
                         int padding) {
  if (is_half(gy.dtype()))
    return from_f32(
        conv2d_grad_input(to_f32(gy), to_f32(k), x_shape, stride, padding),
        gy.dtype());
  Geometry g =
      geometry(x_shape, k.shape(), stride, padding, "conv2d_grad_input");
  Tensor gx = Tensor::zeros(x_shape, gy.dtype());
  return float_only(gy.dtype(), "conv2d_grad_input", [&](auto tag) {
    using T = decltype(tag);
    if (gy.numel() == 0) return gx;
    std::vector<T> cols(g.ckk() * g.hw2());
    for (int64_t b = 0; b < g.B; ++b) {
      gemm<T>(true,
              false,
              g.ckk(),
              g.hw2(),
              g.O,
              T(1),
              k.data<T>(),
              g.ckk(),
              gy.data<T>() + b * g.O * g.hw2(),
              g.hw2(),
              T(0),
              cols.data(),
              g.hw2());
      col2im(cols.data(), gx.data<T>() + b * g.C * g.H * g.W, g);
    }
    return gx;
  });
}

Tensor conv2d_grad_kernel(const Tensor& gy,
                          const Tensor& x,
                          const Shape& k_shape,
                          int stride,
                          int padding) {
  if (is_half(gy.dtype()))
    return from_f32(
        conv2d_grad_kernel(to_f32(gy), to_f32(x), k_shape, stride, padding),
        gy.dtype());
  Geometry g =
      geometry(x.shape(), k_shape, stride, padding, "conv2d_grad_kernel");
  Tensor gk = Tensor::zeros(k_shape, gy.dtype());
  return float_only(gy.dtype(), "conv2d_grad_kernel", [&](auto tag) {
    using T = decltype(tag);
    if (gy.numel() == 0 || gk.numel() == 0) return gk;
    std::vector<T> cols(g.ckk() * g.hw2());
    for (int64_t b = 0; b < g.B; ++b) {
      im2col(x.data<T>() + b * g.C * g.H * g.W, cols.data(), g);
      gemm<T>(false,
              true,
              g.O,
              g.ckk(),
              g.hw2(),
              T(1),
              gy.data<T>() + b * g.O * g.hw2(),
              g.hw2(),
              cols.data(),
              g.hw2(),
              T(1),
              gk.data<T>(),
              g.ckk());
    }
    return gk;
  });
}

}  // namespace ss::ops::cpu
