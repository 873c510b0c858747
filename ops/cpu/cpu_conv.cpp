// conv2d (NCHW) by im2col + gemm, and its two VJPs, group by group (x's
// channels and k's outputs cut into [groups] equal blocks):
//   forward      y_bg  = K_g [Og, Cg·kh·kw] @ cols(x_bg) [Cg·kh·kw, H2·W2]
//   grad input   gx_bg = col2im(K_g^T @ gy_bg)
//   grad kernel  gK_g  = sum_b gy_bg @ cols(x_bg)^T
// with stride, padding and dilation per spatial axis (ConvShape). f32 and
// f64 natively; halves in f32.

#include <algorithm>
#include <type_traits>

#include "ops/backend/primitive_checks.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

// The checks and sizes are the CUDA backend's too (primitive_checks.h).
using Geometry = backend::ConvGeometry;

/// cols [Cg·kh·kw, H2·W2] from one group's channels [Cg, H, W]; zeros
/// where padding.
template <class T>
void im2col(const T* x, T* cols, const Geometry& g) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* row = cols + ((c * g.kh + ki) * g.kw + kj) * g.hw2();
        for (int64_t oy = 0; oy < g.H2; ++oy) {
          int64_t iy = oy * g.sh - g.ph + ki * g.dh;
          T* dst = row + oy * g.W2;
          if (iy < 0 || iy >= g.H) {
            std::fill(dst, dst + g.W2, T(0));
            continue;
          }
          const T* src = x + (c * g.H + iy) * g.W;
          for (int64_t ox = 0; ox < g.W2; ++ox) {
            int64_t ix = ox * g.sw - g.pw + kj * g.dw;
            dst[ox] = (ix >= 0 && ix < g.W) ? src[ix] : T(0);
          }
        }
      }
}

/// The transpose of im2col: adds cols into one group's channels
/// [Cg, H, W] (which the caller zeroed).
template <class T>
void col2im(const T* cols, T* x, const Geometry& g) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* row = cols + ((c * g.kh + ki) * g.kw + kj) * g.hw2();
        for (int64_t oy = 0; oy < g.H2; ++oy) {
          int64_t iy = oy * g.sh - g.ph + ki * g.dh;
          if (iy < 0 || iy >= g.H) continue;
          T* dst = x + (c * g.H + iy) * g.W;
          const T* src = row + oy * g.W2;
          for (int64_t ox = 0; ox < g.W2; ++ox) {
            int64_t ix = ox * g.sw - g.pw + kj * g.dw;
            if (ix >= 0 && ix < g.W) dst[ix] += src[ox];
          }
        }
      }
}

// Offsets of image b's group gi: its channels in x, its outputs in y, its
// kernel rows.
int64_t x_at(const Geometry& g, int64_t b, int64_t gi) {
  return b * g.image() + gi * g.cg() * g.H * g.W;
}
int64_t y_at(const Geometry& g, int64_t b, int64_t gi) {
  return (b * g.O + gi * g.og()) * g.hw2();
}
int64_t k_at(const Geometry& g, int64_t gi) {
  return gi * g.og() * g.ckk();
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& k, const ConvShape& cs) {
  if (is_half(x.dtype()))
    return from_f32(conv2d(to_f32(x), to_f32(k), cs), x.dtype());
  Geometry g =
      backend::conv_geometry(x.shape(), k.shape(), cs, kBackend, "conv2d");
  Tensor out = Tensor::empty({g.B, g.O, g.H2, g.W2}, x.dtype());
  return backend::visit_conv_float(
      x.dtype(), kBackend, "conv2d", [&](auto tag) {
        using T = decltype(tag);
        if (out.numel() == 0) return out;
        std::vector<T> cols(g.ckk() * g.hw2());
        for (int64_t b = 0; b < g.B; ++b)
          for (int64_t gi = 0; gi < g.G; ++gi) {
            im2col(x.data<T>() + x_at(g, b, gi), cols.data(), g);
            gemm<T>(false,
                    false,
                    g.og(),
                    g.hw2(),
                    g.ckk(),
                    T(1),
                    k.data<T>() + k_at(g, gi),
                    g.ckk(),
                    cols.data(),
                    g.hw2(),
                    T(0),
                    out.data<T>() + y_at(g, b, gi),
                    g.hw2());
          }
        return out;
      });
}

Tensor conv2d_grad_input(const Tensor& gy,
                         const Tensor& k,
                         const Shape& x_shape,
                         const ConvShape& cs) {
  if (is_half(gy.dtype()))
    return from_f32(conv2d_grad_input(to_f32(gy), to_f32(k), x_shape, cs),
                    gy.dtype());
  Geometry g = backend::conv_geometry(
      x_shape, k.shape(), cs, kBackend, "conv2d_grad_input");
  Tensor gx = Tensor::zeros(x_shape, gy.dtype());
  return backend::visit_conv_float(
      gy.dtype(), kBackend, "conv2d_grad_input", [&](auto tag) {
        using T = decltype(tag);
        if (gy.numel() == 0) return gx;
        std::vector<T> cols(g.ckk() * g.hw2());
        for (int64_t b = 0; b < g.B; ++b)
          for (int64_t gi = 0; gi < g.G; ++gi) {
            gemm<T>(true,
                    false,
                    g.ckk(),
                    g.hw2(),
                    g.og(),
                    T(1),
                    k.data<T>() + k_at(g, gi),
                    g.ckk(),
                    gy.data<T>() + y_at(g, b, gi),
                    g.hw2(),
                    T(0),
                    cols.data(),
                    g.hw2());
            col2im(cols.data(), gx.data<T>() + x_at(g, b, gi), g);
          }
        return gx;
      });
}

Tensor conv2d_grad_kernel(const Tensor& gy,
                          const Tensor& x,
                          const Shape& k_shape,
                          const ConvShape& cs) {
  if (is_half(gy.dtype()))
    return from_f32(conv2d_grad_kernel(to_f32(gy), to_f32(x), k_shape, cs),
                    gy.dtype());
  Geometry g = backend::conv_geometry(
      x.shape(), k_shape, cs, kBackend, "conv2d_grad_kernel");
  Tensor gk = Tensor::zeros(k_shape, gy.dtype());
  return backend::visit_conv_float(
      gy.dtype(), kBackend, "conv2d_grad_kernel", [&](auto tag) {
        using T = decltype(tag);
        if (gy.numel() == 0 || gk.numel() == 0) return gk;
        std::vector<T> cols(g.ckk() * g.hw2());
        for (int64_t b = 0; b < g.B; ++b)
          for (int64_t gi = 0; gi < g.G; ++gi) {
            im2col(x.data<T>() + x_at(g, b, gi), cols.data(), g);
            gemm<T>(false,
                    true,
                    g.og(),
                    g.ckk(),
                    g.hw2(),
                    T(1),
                    gy.data<T>() + y_at(g, b, gi),
                    g.hw2(),
                    cols.data(),
                    g.hw2(),
                    T(1),
                    gk.data<T>() + k_at(g, gi),
                    g.ckk());
          }
        return gk;
      });
}

}  // namespace ss::ops::cpu
