// Note [Convolution on the GPU by columns]
// The CUDA twin of cpu_conv.cpp: conv2d (NCHW) by im2col + cuBLAS products
// (gemm<T>(), cuda_matmul.cu), group by group, with the same formulas:
//   forward      y_bg  = K_g [Og, Cg kh kw] @ cols(x_bg) [Cg kh kw, H2 W2]
//   grad input   gx_bg = col2im(K_g^T @ gy_bg)
//   grad kernel  gK_g  = sum_b gy_bg @ cols(x_bg)^T
// What differs is how the images are batched. The columns of a chunk of
// images are built by one kernel, then each group's product runs once for
// the whole chunk (a strided batch over images; forward and grad input),
// or as ONE product over images x positions (grad kernel: gy's rows are
// first laid out as [O, images * H2 W2] so that the sum over the batch is
// the product's own sum, not a loop of accumulating launches). Chunks of
// images bound the columns' scratch to kScratchBytes; grad kernel adds
// chunk after chunk (beta = 1) in chunk order.
//
// col2im is a gather, not the CPU's scatter: one thread per input element
// adds the column entries that read it, in a fixed (ki, kj) order, so the
// sums are deterministic without atomics and no zeroing pass is needed
// (an element no window reads gets 0).
//
// f32 and f64 natively; halves widened to f32 and rounded back once, as
// the CPU's.

#include <algorithm>
#include <cstdint>
#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

constexpr int64_t kScratchBytes = 256LL << 20;  // columns of one chunk

/// The checks and sizes are the CPU backend's (primitive_checks.h).
using Geometry = backend::ConvGeometry;

/// Images per chunk: as many as keep their columns within kScratchBytes.
int64_t chunk_of(const Geometry& g, size_t item) {
  int64_t per = std::max<int64_t>(g.rows() * g.hw2() * int64_t(item), 1);
  return std::clamp<int64_t>(kScratchBytes / per, 1, std::max<int64_t>(g.B, 1));
}

template <class T>
DType float_dtype() {
  return sizeof(T) == 8 ? DType::F64 : DType::F32;
}

/// Columns of images [b0, b0 + bc): entry (b, row, p), row = (c kh + ki)
/// kw + kj over all C channels (group gi's rows are [gi ckk, (gi+1) ckk),
/// its channels being contiguous in x), p = oy W2 + ox, lands at
/// cols[b * b_stride + row * r_stride + p]; zero where padding.
template <class T>
void im2col(const T* x,
            T* cols,
            const Geometry& g,
            int64_t b0,
            int64_t bc,
            int64_t b_stride,
            int64_t r_stride) {
  const Geometry gg = g;
  const int64_t rows = g.rows(), hw2 = g.hw2();
  for_each(bc * rows * hw2, "conv2d im2col", [=] __device__(int64_t i) {
    const int64_t p = i % hw2, row = i / hw2 % rows, b = i / (hw2 * rows);
    const int64_t kj = row % gg.kw, ki = row / gg.kw % gg.kh;
    const int64_t c = row / (gg.kw * gg.kh);
    const int64_t oy = p / gg.W2, ox = p % gg.W2;
    const int64_t iy = oy * gg.sh - gg.ph + ki * gg.dh;
    const int64_t ix = ox * gg.sw - gg.pw + kj * gg.dw;
    T v = T(0);
    if (iy >= 0 && iy < gg.H && ix >= 0 && ix < gg.W)
      v = x[(((b0 + b) * gg.C + c) * gg.H + iy) * gg.W + ix];
    cols[b * b_stride + row * r_stride + p] = v;
  });
}

/// The transpose of im2col (forward layout: image b's columns at b *
/// rows hw2) into gx's images [b0, b0 + bc), as a gather: input (c, iy,
/// ix) is read by window (oy, ox) through kernel tap (ki, kj) iff iy = oy
/// sh - ph + ki dh and likewise for x; the taps are visited in (ki, kj)
/// order, each element's sum written once.
template <class T>
void col2im(const T* cols, T* gx, const Geometry& g, int64_t b0, int64_t bc) {
  const Geometry gg = g;
  const int64_t image = g.C * g.H * g.W;
  T* out = gx + b0 * image;
  for_each(bc * image, "conv2d_grad_input col2im", [=] __device__(int64_t i) {
    const int64_t ix = i % gg.W, iy = i / gg.W % gg.H;
    const int64_t c = i / (gg.W * gg.H) % gg.C, b = i / image;
    const int64_t hw2 = gg.H2 * gg.W2;
    const T* col = cols + (b * gg.C + c) * gg.kh * gg.kw * hw2;
    T sum = T(0);
    for (int64_t ki = 0; ki < gg.kh; ++ki) {
      const int64_t ty = iy + gg.ph - ki * gg.dh;  // = oy sh
      if (ty < 0) break;                           // falls with ki
      if (ty % gg.sh != 0 || ty / gg.sh >= gg.H2) continue;
      const int64_t oy = ty / gg.sh;
      for (int64_t kj = 0; kj < gg.kw; ++kj) {
        const int64_t tx = ix + gg.pw - kj * gg.dw;
        if (tx < 0) break;
        if (tx % gg.sw != 0 || tx / gg.sw >= gg.W2) continue;
        sum += col[(ki * gg.kw + kj) * hw2 + oy * gg.W2 + tx / gg.sw];
      }
    }
    out[i] = sum;
  });
}

/// gy's images [b0, b0 + bc) as [O, bc * hw2] (grad kernel's operand:
/// the batch joins the positions, the product's sum axis).
template <class T>
void outputs_by_channel(
    const T* gy, T* to, const Geometry& g, int64_t b0, int64_t bc) {
  const int64_t O = g.O, hw2 = g.hw2();
  for_each(bc * O * hw2, "conv2d_grad_kernel", [=] __device__(int64_t i) {
    const int64_t p = i % hw2, b = i / hw2 % bc, o = i / (hw2 * bc);
    to[i] = gy[((b0 + b) * O + o) * hw2 + p];
  });
}

template <class T>
void forward(const Geometry& g, const T* x, const T* k, T* y) {
  const int64_t chunk = chunk_of(g, sizeof(T));
  const int64_t per = g.rows() * g.hw2();  // one image's columns
  Tensor scratch = empty({chunk, g.rows(), g.hw2()}, float_dtype<T>());
  T* cols = ptr<T>(scratch);
  for (int64_t b0 = 0; b0 < g.B; b0 += chunk) {
    const int64_t bc = std::min(chunk, g.B - b0);
    im2col(x, cols, g, b0, bc, per, g.hw2());
    for (int64_t gi = 0; gi < g.G; ++gi)
      gemm<T>(false,
              false,
              g.og(),
              g.hw2(),
              g.ckk(),
              T(1),
              k + gi * g.og() * g.ckk(),
              g.ckk(),
              0,
              cols + gi * g.ckk() * g.hw2(),
              g.hw2(),
              per,
              T(0),
              y + (b0 * g.O + gi * g.og()) * g.hw2(),
              g.hw2(),
              g.O * g.hw2(),
              bc);
  }
}

template <class T>
void grad_input(const Geometry& g, const T* gy, const T* k, T* gx) {
  const int64_t chunk = chunk_of(g, sizeof(T));
  const int64_t per = g.rows() * g.hw2();
  Tensor scratch = empty({chunk, g.rows(), g.hw2()}, float_dtype<T>());
  T* cols = ptr<T>(scratch);
  for (int64_t b0 = 0; b0 < g.B; b0 += chunk) {
    const int64_t bc = std::min(chunk, g.B - b0);
    // cols_g = K_g^T gy_bg for every image of the chunk at once.
    for (int64_t gi = 0; gi < g.G; ++gi)
      gemm<T>(true,
              false,
              g.ckk(),
              g.hw2(),
              g.og(),
              T(1),
              k + gi * g.og() * g.ckk(),
              g.ckk(),
              0,
              gy + (b0 * g.O + gi * g.og()) * g.hw2(),
              g.hw2(),
              g.O * g.hw2(),
              T(0),
              cols + gi * g.ckk() * g.hw2(),
              g.hw2(),
              per,
              bc);
    col2im(cols, gx, g, b0, bc);
  }
}

template <class T>
void grad_kernel(const Geometry& g, const T* gy, const T* x, T* gk) {
  const int64_t chunk = chunk_of(g, sizeof(T));
  Tensor scratch = empty({g.rows(), chunk * g.hw2()}, float_dtype<T>());
  Tensor gy_buf = empty({g.O, chunk * g.hw2()}, float_dtype<T>());
  T* cols = ptr<T>(scratch);
  T* gyc = ptr<T>(gy_buf);
  for (int64_t b0 = 0; b0 < g.B; b0 += chunk) {
    const int64_t bc = std::min(chunk, g.B - b0);
    const int64_t L = bc * g.hw2();  // the sum: images x positions
    // Columns as [rows, bc hw2]: image b's positions at b hw2 of a row.
    im2col(x, cols, g, b0, bc, g.hw2(), L);
    outputs_by_channel(gy, gyc, g, b0, bc);
    // gK_g (+)= gy_g [og, L] @ cols_g^T [L, ckk].
    for (int64_t gi = 0; gi < g.G; ++gi)
      gemm<T>(false,
              true,
              g.og(),
              g.ckk(),
              L,
              T(1),
              gyc + gi * g.og() * L,
              L,
              0,
              cols + gi * g.ckk() * L,
              L,
              0,
              b0 == 0 ? T(0) : T(1),
              gk + gi * g.og() * g.ckk(),
              g.ckk(),
              0,
              1);
  }
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& k, const ConvShape& cs) {
  if (is_half(x.dtype()))
    return from_f32(conv2d(to_f32(x), to_f32(k), cs), x.dtype());
  Geometry g =
      backend::conv_geometry(x.shape(), k.shape(), cs, kBackend, "conv2d");
  Tensor out = empty({g.B, g.O, g.H2, g.W2}, x.dtype());
  backend::visit_conv_float(x.dtype(), kBackend, "conv2d", [&](auto tag) {
    using T = decltype(tag);
    if (out.numel() == 0) return;
    forward<T>(g, ptr<T>(x), ptr<T>(k), ptr<T>(out));
  });
  return out;
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
  Tensor gx;
  backend::visit_conv_float(
      gy.dtype(), kBackend, "conv2d_grad_input", [&](auto tag) {
        using T = decltype(tag);
        if (gy.numel() == 0) {  // no outputs (O = 0): nothing flows back
          gx = zeros(x_shape, gy.dtype());
          return;
        }
        gx = empty(x_shape, gy.dtype());  // col2im writes every element
        grad_input<T>(g, ptr<T>(gy), ptr<T>(k), ptr<T>(gx));
      });
  return gx;
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
  Tensor gk;
  backend::visit_conv_float(
      gy.dtype(), kBackend, "conv2d_grad_kernel", [&](auto tag) {
        using T = decltype(tag);
        if (gy.numel() == 0 || numel_of(k_shape) == 0) {  // an empty sum
          gk = zeros(k_shape, gy.dtype());
          return;
        }
        gk = empty(k_shape, gy.dtype());  // the first chunk's product sets it
        grad_kernel<T>(g, ptr<T>(gy), ptr<T>(x), ptr<T>(gk));
      });
  return gk;
}

}  // namespace ss::ops::cuda
