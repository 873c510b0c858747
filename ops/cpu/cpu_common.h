#pragma once
// Internal to ops/cpu: helpers shared by the CPU kernels (dtype dispatch,
// strides, a strided row walker) and the kernels' entry points, one group
// per .cpp file. Nothing here includes xtensor; only the .cpp files do.
//
// Half types (bf16, f16) are computed in f32 and rounded back once at the
// end (to_f32 / from_f32), as torch's CPU kernels do.

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/backend/backend.h"
#include "ops/backend/dtype_dispatch.h"
#include "ops/backend/strides.h"
#include "ops/cpu/cpu_threads.h"

namespace ss::ops::cpu {

/// Throws std::invalid_argument("[cpu <op>] <msg>"): a broken backend
/// precondition (callers in ops/api.cpp check user errors first).
[[noreturn]] void fail(const char* op, const std::string& msg);

/// The name in this backend's errors ("[cpu <op>] ...").
constexpr const char* kBackend = "cpu";

// Dtype dispatch, strides and axis splits are shared with the CUDA backend
// (ops/backend/dtype_dispatch.h, ops/backend/strides.h).
using backend::AxisSplit;
using backend::broadcast_strides;
using backend::contiguous_strides;
using backend::is_half;
using backend::split_at;
using backend::visit_bytes;

/// A half tensor widened to f32 (any other tensor is returned as is).
Tensor to_f32(const Tensor& x);
/// An f32 tensor rounded to [to] (bf16/f16); other dtypes: cast.
Tensor from_f32(const Tensor& x, DType to);

/// backend::visit with this backend's errors: f(T{}) for f32, f64, i32,
/// i64 and bool (halves are widened first).
template <class F>
decltype(auto) visit(DType d, const char* op, F&& f) {
  return backend::visit(d, kBackend, op, std::forward<F>(f));
}

/// numpy broadcasting of two shapes (ops/core/broadcast.h), or fail()'s
/// error naming [op].
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

/// Walks [shape] row by row (its last axis), for K operands with their
/// own strides: f(offsets, row_length, last_axis_strides). A 0-d shape is
/// one row of length 1.
template <size_t K, class F>
void for_rows(const Shape& shape,
              const std::array<std::vector<int64_t>, K>& strides,
              F&& f) {
  int64_t total = numel_of(shape);
  if (total == 0) return;
  std::array<int64_t, K> off{}, inner{};
  int r = static_cast<int>(shape.size());
  if (r == 0) {
    f(off, int64_t{1}, inner);
    return;
  }
  int64_t n = shape[r - 1];
  for (size_t k = 0; k < K; ++k) inner[k] = strides[k][r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t row = 0, rows = total / n; row < rows; ++row) {
    f(off, n, inner);
    for (int d = r - 2; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++idx[d] < shape[d]) break;
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Note [Broadcast without materialising]
// An elementwise op over broadcast operands (binary, where, broadcast_to)
// reads each operand through its broadcast strides (0 on the axes it is
// broadcast over) instead of copying it out to the output's shape, as
// PyTorch's TensorIterator does. First the axes are coalesced: size-1 axes
// go, and an axis merges into the next one where every operand's stride
// says they are one run (stride[d] == stride[d+1] * size[d+1]); so
// [b H n t] against a mask [n t] is two axes, (b*H, n*t) with the mask's
// strides (0, 1), and x - max(x, keepdims) over [r c] is (r, c) with the
// max's (1, 0). Then for_rows walks the last axis, whose stride is 0 or 1
// for each operand (a scalar broadcast or a contiguous run), so the
// kernels' inner loops are plain loops the compiler vectorises.

/// The coalesced walk of [out] (operand 0, contiguous) and [ins] (each
/// right-aligned and broadcast to [out]): the merged shape and each
/// operand's strides over it, ready for for_rows. [out] with numel 0 gives
/// an empty shape with a 0 axis.
template <size_t K>
std::pair<Shape, std::array<std::vector<int64_t>, K + 1>> broadcast_walk(
    const Shape& out, const std::array<const Shape*, K>& ins) {
  std::array<std::vector<int64_t>, K + 1> full;
  full[0] = contiguous_strides(out);
  for (size_t k = 0; k < K; ++k) full[k + 1] = broadcast_strides(*ins[k], out);
  Shape shape;
  std::array<std::vector<int64_t>, K + 1> st;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t k = 0; merge && k <= K; ++k)
      merge = st[k].back() == full[k][d] * out[d];
    if (merge) {
      shape.back() *= out[d];
      for (size_t k = 0; k <= K; ++k) st[k].back() = full[k][d];
      continue;
    }
    shape.push_back(out[d]);
    for (size_t k = 0; k <= K; ++k) st[k].push_back(full[k][d]);
  }
  if (shape.empty()) {  // a 0-d or all-ones output: one element
    shape.push_back(numel_of(out));
    for (size_t k = 0; k <= K; ++k) st[k].push_back(1);
    for (size_t k = 1; k <= K; ++k) st[k].back() = 0;
  }
  return {shape, st};
}

/// for_rows, with the outermost axis split over threads when the walk is
/// large (Note [Intra-op threads]): each range walks its own rows.
template <size_t K, class F>
void for_rows_parallel(const Shape& shape,
                       const std::array<std::vector<int64_t>, K>& strides,
                       F&& f) {
  int64_t total = numel_of(shape);
  if (shape.empty() || total < 2 * kElementGrain) {
    for_rows<K>(shape, strides, f);
    return;
  }
  int64_t inner = total / shape[0];
  parallel_for(shape[0],
               std::max<int64_t>(1, kElementGrain / inner),
               [&](int64_t b, int64_t e) {
                 Shape sub = shape;
                 sub[0] = e - b;
                 for_rows<K>(sub, strides, [&](auto off, int64_t n, auto in) {
                   for (size_t k = 0; k < K; ++k) off[k] += b * strides[k][0];
                   f(off, n, in);
                 });
               });
}

/// parallel_for over [n] elements with the elementwise grain.
template <class F>
void for_elements(int64_t n, F&& f) {
  parallel_for(n, kElementGrain, f);
}

/// General matrix multiply on row-major buffers (cblas_sgemm/dgemm):
/// C = alpha * op(A) @ op(B) + beta * C, op(A) [M K], op(B) [K N].
template <class T>
void gemm(bool trans_a,
          bool trans_b,
          int64_t M,
          int64_t N,
          int64_t K,
          T alpha,
          const T* A,
          int64_t lda,
          const T* B,
          int64_t ldb,
          T beta,
          T* C,
          int64_t ldc);

// cpu_onednn.cpp (Note [f32 products on oneDNN])
/// gemm's f32 products on oneDNN, rows split over the intra-op threads.
void onednn_sgemm(bool trans_a,
                  bool trans_b,
                  int64_t M,
                  int64_t N,
                  int64_t K,
                  float alpha,
                  const float* A,
                  int64_t lda,
                  const float* B,
                  int64_t ldb,
                  float beta,
                  float* C,
                  int64_t ldc);
/// Whether f32 products stay on OpenBLAS (deterministic mode).
bool products_on_openblas();
void set_products_on_openblas(bool on);
std::string onednn_version();
void start_onednn_warm_up();
void allow_onednn_warm_up();
void wait_for_onednn_warm_up();

// Kernels, by file.
// cpu_elementwise.cpp
Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
void scale_in_place(Tensor& x, double s);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor cast(const Tensor& x, DType to);
// cpu_reduce.cpp
Tensor reduce(ReduceOp op,
              const Tensor& x,
              const std::vector<int>& axes,
              bool keepdims);
Tensor cumsum(const Tensor& x, int axis, bool reverse);
std::pair<Tensor, Tensor> sort(const Tensor& x, int axis, bool descending);
// cpu_optim.cpp
void adamw_update(Tensor& p,
                  const Tensor& g,
                  Tensor& m,
                  Tensor& v,
                  double lr,
                  double b1,
                  double b2,
                  double eps,
                  double wd,
                  int64_t step);
void sgd_update(Tensor& p,
                const Tensor& g,
                Tensor* buf,
                double lr,
                double momentum,
                double wd,
                bool nesterov,
                bool first);

// cpu_matmul.cpp
Tensor matmul(const Tensor& a,
              const Tensor& b,
              bool trans_a = false,
              bool trans_b = false);
// cpu_shape.cpp
Tensor permute(const Tensor& x, const std::vector<int>& perm);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor slice(
    const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step);
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor pad(
    const Tensor& x, int axis, int64_t before, int64_t after, double value);
// cpu_index.cpp
Tensor take(const Tensor& x, const Tensor& idx, int axis);
Tensor take_add(const Tensor& v, const Tensor& idx, int axis, int64_t n);
Tensor gather(const Tensor& x, const Tensor& idx, int axis);
Tensor scatter_add(const Shape& shape,
                   const Tensor& idx,
                   const Tensor& v,
                   int axis);
// cpu_random.cpp
Tensor random(const Shape& shape,
              DType dtype,
              uint64_t key,
              uint64_t stream,
              uint64_t offset,
              bool normal);
// cpu_fused.cpp
Tensor softmax_last(const Tensor& x, bool log);
Tensor softmax_last_backward(const Tensor& g, const Tensor& y, bool log);
std::array<Tensor, 3> norm_last(const Tensor& x,
                                double eps,
                                bool centered,
                                const Tensor& gamma,
                                const Tensor& beta);
std::array<Tensor, 3> norm_last_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& mean,
                                         const Tensor& rstd,
                                         bool centered,
                                         const Tensor& gamma);
Tensor gelu(const Tensor& x, bool tanh);
Tensor gelu_backward(const Tensor& g, const Tensor& x, bool tanh);
/// gelu over [len] values (f32 on the vector kernels where the CPU has
/// them): the loop of gelu's blocks, which a product's epilogue runs too;
/// x and y must not overlap (y is written before x is read again).
template <class T>
void gelu_run(const T* x, T* y, int64_t len, bool tanh);

// cpu_epilogue.cpp (Note [Products with epilogues])
std::array<Tensor, 2> matmul_epilogue(const Tensor& a,
                                      const Tensor& b,
                                      const Epilogue& e);
Tensor activation_backward(Activation act, const Tensor& g, const Tensor& x);
// cpu_attention.cpp
std::array<Tensor, 2> attention(const Tensor& q,
                                const Tensor& k,
                                const Tensor& v,
                                double scale,
                                bool causal);
std::array<Tensor, 3> attention_backward(const Tensor& go,
                                         const Tensor& q,
                                         const Tensor& k,
                                         const Tensor& v,
                                         const Tensor& o,
                                         const Tensor& lse,
                                         double scale,
                                         bool causal);
// cpu_conv.cpp
Tensor conv2d(const Tensor& x, const Tensor& k, const ConvShape& cs);
Tensor conv2d_grad_input(const Tensor& gy,
                         const Tensor& k,
                         const Shape& x_shape,
                         const ConvShape& cs);
Tensor conv2d_grad_kernel(const Tensor& gy,
                          const Tensor& x,
                          const Shape& k_shape,
                          const ConvShape& cs);

}  // namespace ss::ops::cpu
