#pragma once
// The argument checks and output geometry of the primitives, once for
// every backend: a backend checks its operands and sizes its outputs here,
// then runs its own loops or kernels. So the CPU and CUDA backends refuse
// the same calls with the same words ("[<backend> <op>] ...", the backend
// named by the caller) and compute the same shapes. Plain host C++: nvcc
// compiles this header too (the structs a kernel takes by value hold only
// integers).

#include <cstdint>
#include <vector>

#include "ops/backend/backend.h"
#include "ops/backend/dtype_dispatch.h"
#include "ops/backend/strides.h"
#include "ops/core/host_device.h"

namespace ss::ops::backend {

/// A backend's cast (the gradient and index fix-ups call back into it).
using CastFn = Tensor (*)(const Tensor&, DType);

/// numpy broadcasting of two shapes, or fail(backend, op, ...).
Shape broadcast_shapes(const Shape& a,
                       const Shape& b,
                       const char* backend,
                       const char* op);

// ---------------------------------------------------------------- matmul

/// [.., n, k] @ [.., k, m] after the transposes: the sizes of one product
/// and the batch axes.
struct MatmulGeometry {
  int64_t n = 0, k = 0, m = 0;
  Shape batch_a, batch_b;  // each operand's batch axes
  Shape batch;             // their broadcast
  Shape out;               // batch + [n m]
};
/// Checks matmul's operands (rank >= 2, one dtype, not bool, inner dims,
/// batch axes that broadcast) and sizes the product.
MatmulGeometry matmul_geometry(const Tensor& a,
                               const Tensor& b,
                               bool trans_a,
                               bool trans_b,
                               const char* backend);

/// matmul_epilogue's a [.., n, k] @ b [k m] with the batch folded into the
/// rows: [rows] = numel(a) / k.
struct EpilogueGeometry {
  int64_t rows = 0, k = 0, m = 0;
  Shape out;  // a's leading axes + [m]
};
/// Checks matmul_epilogue's operands (a of rank >= 1 and b of rank 2, one
/// float dtype f32 or f64, inner dims; bias [m] and residual of the
/// output's shape, in that dtype) and sizes the product.
EpilogueGeometry epilogue_geometry(const Tensor& a,
                                   const Tensor& b,
                                   const Epilogue& e,
                                   const char* backend);

// ---------------------------------------------------------------- conv2d

/// conv2d's sizes (NCHW), stride, padding, dilation and groups.
struct ConvGeometry {
  int64_t B, C, H, W, O, kh, kw, H2, W2, G;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t cg() const { return C / G; }  // input channels per group
  int64_t og() const { return O / G; }  // outputs per group
  int64_t ckk() const { return cg() * kh * kw; }
  int64_t hw2() const { return H2 * W2; }
  int64_t image() const { return C * H * W; }
  int64_t rows() const { return C * kh * kw; }  // column rows, all groups
};
/// Checks x [B C H W] and k [O C/G kh kw] against [cs] and sizes the
/// output; [op] is the conv primitive being checked.
ConvGeometry conv_geometry(const Shape& x,
                           const Shape& k,
                           const ConvShape& cs,
                           const char* backend,
                           const char* op);
/// The conv primitives' float dispatch (halves are widened before).
template <class F>
decltype(auto) visit_conv_float(DType d,
                                const char* backend,
                                const char* op,
                                F&& f) {
  return visit_float_or(d, backend, op, "needs a float dtype, got ", f);
}

// ---------------------------------------------------------------- attention

/// The shapes of one attention call: B matrices, q [n d], k [t d], v [t e].
struct AttentionDims {
  int64_t B, n, t, d, e;
  /// Keys row i can see.
  SS_HD int64_t visible(int64_t i, bool causal) const {
    return causal ? (i + 1 < t ? i + 1 : t) : t;
  }
};
/// Checks q, k and v (one rank >= 2, one float dtype, same leading axes,
/// matching inner sizes) and gives their sizes.
AttentionDims attention_dims(const Tensor& q,
                             const Tensor& k,
                             const Tensor& v,
                             const char* backend);
/// The forward's outputs: o (q's shape with v's last axis) and lse (q's
/// shape without its last axis).
struct AttentionShapes {
  Shape out, lse;
};
AttentionShapes attention_shapes(const Tensor& q, const AttentionDims& m);
/// The VJP's cotangent must have the output's shape and q's dtype.
void check_attention_cotangent(const Tensor& go,
                               const Tensor& o,
                               const Tensor& q,
                               const char* backend);

// ---------------------------------------------------------------- optim

/// Checks a param against its gradient (same shape, float param) and
/// gives the gradient in the param's dtype (through the backend's cast).
Tensor optim_gradient(const Tensor& p,
                      const Tensor& g,
                      const char* backend,
                      const char* op,
                      CastFn cast);

// ---------------------------------------------------------------- shape

/// slice's bounds clamped to the axis and the output it gives.
struct SliceGeometry {
  AxisSplit split;    // x as [outer, n, inner] around the axis
  int64_t start = 0;  // first element taken, clamped to [0, n]
  int64_t len = 0;    // elements taken along the axis
  Shape out;          // x's shape with len on the axis
};
SliceGeometry slice_geometry(const Shape& x,
                             int axis,
                             int64_t start,
                             int64_t stop,
                             int64_t step,
                             const char* backend);

// ---------------------------------------------------------------- reduce

/// argmax / argmin take exactly one axis.
void check_reduce_axes(ReduceOp op,
                       const std::vector<int>& axes,
                       const char* backend);
/// The result dtype of [op] over [in] (not half: callers widen first).
DType reduce_dtype(ReduceOp op, DType in);
/// [x] without [axes] (size 1 there with keepdims).
Shape reduce_shape(const Shape& x, const std::vector<int>& axes, bool keepdims);

// ---------------------------------------------------------------- random

/// random draws floats only.
void check_random_dtype(DType dtype, const char* backend);
/// Rounding a uniform f32 draw to a half may carry it up to 1.0; this maps
/// that 1.0 to the largest half below 1 (bf16 0x3F7F = 0.99609375, f16
/// 0x3BFF = 0.99951171875) so draws stay in [0, 1). Applied per element by
/// each backend's own loop or kernel.
struct HalfUniformCap {
  uint16_t one, below;
  SS_HD uint16_t operator()(uint16_t bits) const {
    return bits == one ? below : bits;
  }
};
HalfUniformCap half_uniform_cap(DType half);

// ---------------------------------------------------------------- fused

// Note [Norm gradients by fixed chunks] (cpu_fused.cpp): the norm VJP's
// dgamma / dbeta sum rows in chunks of this many, whatever the threads or
// grid, so both backends give the same bits.
constexpr int64_t kNormChunk = 64;
/// The norm VJP's rows of [n] (x's last axis; 1 for a 0-d x) and chunks.
struct NormChunks {
  int64_t n, rows, chunks;
};
NormChunks norm_chunks(const Tensor& x);

// ---------------------------------------------------------------- index

/// Indices as i64 (i32 cast through the backend's cast; others refused).
Tensor index_as_i64(const Tensor& idx,
                    const char* backend,
                    const char* op,
                    CastFn cast);
/// scatter_add's idx (as i64) and values must have one shape.
void check_scatter_add_operands(const Tensor& idx,
                                const Tensor& v,
                                const char* backend);

// ---------------------------------------------------------------- elementwise

/// binary's operands share a dtype (callers cast first).
void check_binary_dtypes(const Tensor& a, const Tensor& b, const char* backend);

}  // namespace ss::ops::backend
