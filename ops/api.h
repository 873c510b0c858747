#pragma once
// The differentiable tensor API: every op's forward (ops/defs) and every
// VJP is written with these. Each function checks its arguments (throwing
// ops::OpError with a message naming the op), promotes dtypes as
// torch.result_type does, dispatches to the backend of its inputs' device
// (ops/backend/backend.h) and, in grad mode, records its VJP
// (ops/autodiff/tape.h). Axes may be negative (from the end).

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/autodiff/tape.h"
#include "ops/backend/backend.h"
#include "ops/core/conv_shape.h"
#include "ops/core/op_error.h"
#include "ops/core/tensor.h"

namespace ss::ops {

// ---------------------------------------------------------------- make
/// A 0-d tensor of [like]'s dtype and device.
Tensor scalar_like(double value, const Tensor& like);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
/// [0, n) as i64.
Tensor arange(int64_t n, Device device = {});
/// Philox draws (see Backend::random), uniform in [0, 1) or N(0, 1).
/// Drawn on [device]'s backend: the same uniform bits on every backend
/// (normal draws: within an ulp, a GPU's log and cos being its own).
Tensor random_uniform(const Shape& shape,
                      DType dtype,
                      uint64_t key,
                      uint64_t stream,
                      uint64_t offset = 0,
                      Device device = {});
Tensor random_normal(const Shape& shape,
                     DType dtype,
                     uint64_t key,
                     uint64_t stream,
                     uint64_t offset = 0,
                     Device device = {});

// ---------------------------------------------------------------- elementwise
// One function per row of ops/core/elementwise.def (its kind gives the dtypes;
// its vjp column the gradient).
#define SS_UNARY_OP(Enum, name, doc) Tensor name(const Tensor& x);
#define SS_BINARY_OP(Enum, name, doc) \
  Tensor name(const Tensor& a, const Tensor& b);
#include "ops/core/elementwise.def"
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// Converts; differentiable between float dtypes.
Tensor cast(const Tensor& x, DType dtype);
/// The value without a gradient.
Tensor stop_grad(const Tensor& x);

// ---------------------------------------------------------------- reductions
// [axes] empty = every axis. Duplicates are an error.
Tensor sum(const Tensor& x,
           const std::vector<int>& axes = {},
           bool keepdims = false);
/// sum / count; ints and bools give f32.
Tensor mean(const Tensor& x,
            const std::vector<int>& axes = {},
            bool keepdims = false);
Tensor max(const Tensor& x,
           const std::vector<int>& axes = {},
           bool keepdims = false);
Tensor min(const Tensor& x,
           const std::vector<int>& axes = {},
           bool keepdims = false);
Tensor prod(const Tensor& x,
            const std::vector<int>& axes = {},
            bool keepdims = false);
Tensor any(const Tensor& x,
           const std::vector<int>& axes = {},
           bool keepdims = false);
Tensor all(const Tensor& x,
           const std::vector<int>& axes = {},
           bool keepdims = false);
Tensor argmax(const Tensor& x, int axis, bool keepdims = false);

/// Note [Checks a recording defers] (api.cpp): whether a check of [t]'s
/// values goes to its device's error word instead of being read now.
bool checks_deferred(const Tensor& t);
/// [fail] (which throws the op's error, naming the value) where [bad], a
/// bool tensor, holds a true; where checks are deferred, [code] (a
/// backend::DeviceError) into the device's error word instead.
void check_none(const Tensor& bad,
                unsigned code,
                void (*fail)(const void*),
                const void* ctx);
template <class F>
void check_none(const Tensor& bad, unsigned code, const F& fail) {
  check_none(
      bad, code, [](const void* f) { (*static_cast<const F*>(f))(); }, &fail);
}
Tensor argmin(const Tensor& x, int axis, bool keepdims = false);

// ---------------------------------------------------------------- shape
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor permute(const Tensor& x, const std::vector<int>& perm);
/// Swaps the last two axes.
Tensor transpose_last(const Tensor& x);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
/// Sums [x] down to [shape] (the transpose of broadcast_to).
Tensor sum_to(const Tensor& x, const Shape& shape);
/// Inserts a size-1 axis at [axis] / removes one.
Tensor unsqueeze(const Tensor& x, int axis);
Tensor squeeze(const Tensor& x, int axis);
Tensor slice(
    const Tensor& x, int axis, int64_t start, int64_t stop, int64_t step = 1);
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor stack(const std::vector<Tensor>& xs, int axis);
Tensor pad(const Tensor& x,
           int axis,
           int64_t before,
           int64_t after,
           double value = 0.0);
/// Index i64 tensor along [axis] (range-checked: OpError Value).
Tensor take(const Tensor& x, const Tensor& idx, int axis);
/// One index: drops [axis] (range-checked; negative counts from the end).
Tensor take_one(const Tensor& x, int64_t index, int axis);
Tensor gather(const Tensor& x, const Tensor& idx, int axis);
Tensor scatter_add(const Tensor& x,
                   const Tensor& idx,
                   const Tensor& v,
                   int axis);
Tensor cumsum(const Tensor& x, int axis);
/// (values, indices); descending for topk.
std::pair<Tensor, Tensor> sort(const Tensor& x,
                               int axis,
                               bool descending = false);
/// numpy.matmul: 1-d operands are promoted and the added axis removed.
Tensor matmul(const Tensor& a, const Tensor& b);
/// op(a) @ op(b), op(x) the transpose of x's last two axes when its flag is
/// set, read in place by the backend (no copy; Note [Transposes read in
/// place]). Both of rank >= 2; batch axes broadcast; dtypes as matmul.
Tensor matmul_transposed(const Tensor& a, const Tensor& b, bool ta, bool tb);
/// torch's conv2d without bias: x [b C h w], k [O C/groups kh kw].
Tensor conv2d(const Tensor& x, const Tensor& k, const ConvShape& cs = {});
/// torch's conv_transpose2d without bias (conv2d's input gradient as an
/// op): x [b Cin h w], k [Cin Cout/groups kh kw] -> [b Cout h2 w2], h2 =
/// (h - 1)·s - 2p + d·(kh - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& x,
                        const Tensor& k,
                        const ConvShape& cs,
                        const int64_t output_padding[2]);

/// Fused kernels (Note [Fused kernels] in api_fused.cpp), for f32 and f64
/// (has_fused_kernel says which tensors): softmax, or with [log]
/// log_softmax, along the last axis; gelu, exact or with [tanh] torch's
/// approximate="tanh".
bool has_fused_kernel(const Tensor& x);
Tensor softmax_last(const Tensor& x, bool log);
Tensor gelu(const Tensor& x, bool tanh);
/// (x - mean) / sqrt(var + eps) along the last axis, then * g + b when
/// [g] is defined (layer_norm with its affine part; [b] may be undefined);
/// g and b have x's last axis and dtype.
Tensor layer_norm_last(const Tensor& x,
                       double eps,
                       const Tensor& g = Tensor(),
                       const Tensor& b = Tensor());
/// x / sqrt(mean(x^2) + eps) along the last axis (rms_norm).
Tensor rms_norm_last(const Tensor& x, double eps);
/// softmax(scale * q k^T, over t) v in one kernel, forward and VJP (Note
/// [Fused attention] in ops/cpu/cpu_attention.cpp): q [.. n d], k [.. t d],
/// v [.. t e], one float dtype (has_fused_kernel); with [causal] row i sees
/// keys j <= i only.
Tensor attention(const Tensor& q,
                 const Tensor& k,
                 const Tensor& v,
                 double scale,
                 bool causal);

/// act(scale * (x @ w) + b) + residual as one product with its epilogue,
/// forward and VJP (Note [Products with epilogues] in
/// ops/cpu/cpu_epilogue.cpp): x [.. k], w [k m], b [m] and residual [.. m]
/// optional (undefined), one float dtype (has_fused_kernel).
Tensor linear_epilogue(const Tensor& x,
                       const Tensor& w,
                       const Tensor& b,
                       Activation act,
                       const Tensor& residual,
                       double scale);

/// Normalises a possibly negative [axis] against [rank] (OpError if out of
/// range).
int normalize_axis(int axis, size_t rank);

}  // namespace ss::ops
