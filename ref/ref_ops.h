#pragma once
// The executable specification: one naive scalar-loop function per tensor
// builtin (library.md), written from the op's definition and torch's
// documented semantics, never from the forward it checks. Every function
// reads its inputs with Tensor::to_doubles(), computes in double with plain
// loops (no BLAS, no xtensor, no ops/api.h), and writes the op's result
// dtype with Tensor::from_doubles. Slow on purpose: it is the oracle the
// backends are diff-tested against (ref/tests/ref_ops_test.cpp).
//
// Conventions shared by every function:
// - Axes may be negative (counted from the end). A reduction's [axes] empty
//   means every axis; the reduced axes are dropped.
// - Binary ops broadcast numpy-style (aligned from the right, size 1
//   stretches).
// - Result dtypes follow torch.result_type (types::promote): float ops on
//   ints or bools give f32; sums and products of ints or bools give i64.
// - An out-of-range index throws std::out_of_range.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/core/tensor.h"

namespace ss::ref {

using ops::Shape;
using ops::Tensor;
using types::DType;

// ---------------------------------------------------------------- elementwise
// One function per row of ops/core/elementwise.def but its SS_UNARY_ROUNDING
// ones (API helpers with no builtin), named as the builtin, with its kind's
// dtype rule; the scalar op is the row's SS_REF column (written from the op's
// definition, not from the kernel's SS_CPU). Binary ones broadcast.
#define SS_UNARY_OP(Enum, name, doc) Tensor name(const Tensor& x);
#define SS_BINARY_OP(Enum, name, doc) \
  Tensor name(const Tensor& a, const Tensor& b);
#define SS_UNARY_ROUNDING(Enum, name, doc, cpu)
#include "ops/core/elementwise.def"

/// x * sigmoid(x).
Tensor silu(const Tensor& x);
/// log(1 + exp(x)), computed without overflow.
Tensor softplus(const Tensor& x);
/// [approximate] "none": 0.5 x (1 + erf(x / sqrt 2)); "tanh":
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (torch.nn.GELU).
Tensor gelu(const Tensor& x, const std::string& approximate = "none");

/// a where [c] is true, else b; the three broadcast; dtype of a with b.
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b);
/// min(max(x, lo), hi) (torch.clamp: hi wins when lo > hi).
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);
/// x with [v] where [mask] (which broadcasts to x's shape) is true; x's
/// dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double v);

// ---------------------------------------------------------------- matmul

/// numpy.matmul: 1-d a gets a leading 1 and 1-d b a trailing 1 (removed
/// from the result); leading batch axes broadcast. A triple loop.
Tensor matmul(const Tensor& a, const Tensor& b);
/// x @ w + b (Linear[I O]: w [I O], b [O]).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);

// ---------------------------------------------------------------- reductions
// Over [axes] (every axis when empty), which are dropped.

Tensor sum(const Tensor& x, const std::vector<int>& axes = {});
Tensor mean(const Tensor& x, const std::vector<int>& axes = {});
Tensor max(const Tensor& x, const std::vector<int>& axes = {});
Tensor min(const Tensor& x, const std::vector<int>& axes = {});
Tensor prod(const Tensor& x, const std::vector<int>& axes = {});
/// Unbiased (divides by N - 1), torch's default.
Tensor var(const Tensor& x, const std::vector<int>& axes = {});
Tensor std(const Tensor& x, const std::vector<int>& axes = {});
/// log(sum(exp(x))), shifted by the max (an all -inf group gives -inf).
Tensor logsumexp(const Tensor& x, const std::vector<int>& axes = {});
/// sqrt(sum(x^2)).
Tensor norm(const Tensor& x, const std::vector<int>& axes = {});
/// The i64 index of the first largest value, counted row-major over the
/// reduced axes taken in x's axis order.
Tensor argmax(const Tensor& x, const std::vector<int>& axes = {});
Tensor argmin(const Tensor& x, const std::vector<int>& axes = {});
Tensor any(const Tensor& x, const std::vector<int>& axes = {});  ///< bool
Tensor all(const Tensor& x, const std::vector<int>& axes = {});  ///< bool
/// reduce(x, over=, with=): [with] one of sum, max, min, prod, mean.
Tensor reduce(const Tensor& x,
              const std::vector<int>& axes,
              const std::string& with);

// ---------------------------------------------------------------- along an
// axis

Tensor softmax(const Tensor& x, int axis);
Tensor log_softmax(const Tensor& x, int axis);
/// Running sum; ints and bools give i64.
Tensor cumsum(const Tensor& x, int axis);
/// (values, i64 indices) in ascending order, stable (equal values keep
/// their order).
std::pair<Tensor, Tensor> sort(const Tensor& x, int axis);
/// (values, i64 indices) of the [k] largest, largest first; among equal
/// values the lower index first.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int axis);
/// torch.gather: out[..i..] = x[..idx[..i..]..] with [idx] replacing the
/// index along [axis]; idx has x's rank and out idx's shape.
Tensor gather(const Tensor& x, const Tensor& idx, int axis);
/// torch.scatter: x with v[..i..] written at x[..idx[..i..]..]; [v]
/// broadcasts to idx's shape. Written in row-major order of idx, so of
/// duplicate indices the last write wins.
Tensor scatter(const Tensor& x, const Tensor& idx, const Tensor& v, int axis);

// ---------------------------------------------------------------- shape

Tensor concat(const std::vector<Tensor>& xs, int axis);
/// A new axis at [axis] (stack's builtin: a new leading axis, 0).
Tensor stack(const std::vector<Tensor>& xs, int axis = 0);
/// x[.., i, ..] along [axis], which is dropped; negative i from the end.
Tensor take(const Tensor& x, int64_t i, int axis);
/// x at the indices [idx] along [axis], whose place idx's axes take.
Tensor take(const Tensor& x, const Tensor& idx, int axis);
/// x with the slice at [i] along [axis] set to [v] (broadcast).
Tensor put(const Tensor& x, int64_t i, const Tensor& v, int axis);
/// x with the slices at [idx] set to [v] (broadcast to x's shape with
/// idx's axes in place of [axis]).
Tensor put(const Tensor& x, const Tensor& idx, const Tensor& v, int axis);
/// torch.roll: element j moves to (j + k) mod n.
Tensor roll(const Tensor& x, int64_t k, int axis);
/// x padded at the end of [axis] with [value] to size [to].
Tensor pad(const Tensor& x, int axis, int64_t to, double value = 0);
/// The same values, row-major, with another shape.
Tensor reshape(const Tensor& x, const Shape& shape);
/// Converted as torch's .to(dtype): floats to ints truncate towards 0,
/// anything to bool is != 0.
Tensor to(const Tensor& x, DType dtype);

// ---------------------------------------------------------------- make

Tensor zeros(const Shape& shape, DType dtype);
Tensor ones(const Shape& shape, DType dtype);
Tensor full(const Shape& shape, double v, DType dtype);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
/// 0, 1, ..., n-1 as [n] i64.
Tensor arange(int64_t n);
/// [n m] bool, true where column <= row (torch.tril of ones).
Tensor causal(int64_t n, int64_t m);
/// tensor([...]): the items (equal shapes) stacked on a new leading axis,
/// converted to [dtype].
Tensor tensor(const std::vector<Tensor>& items, DType dtype);

// ---------------------------------------------------------------- random
// The counter-based draws of language.md, Randomness: element i of the
// whole value takes the Philox4x32-10 block of (key, counter (offset + i,
// stream)).

/// Uniform in [0, 1): the block's first word's top 24 bits / 2^24.
Tensor rand(const Shape& shape,
            DType dtype,
            uint64_t key,
            uint64_t stream,
            uint64_t offset = 0);
/// Standard normal by Box-Muller from the first two words w0, w1:
/// sqrt(-2 ln((w0 + 1) / 2^32)) cos(2 pi w1 / 2^32).
Tensor randn(const Shape& shape,
             DType dtype,
             uint64_t key,
             uint64_t stream,
             uint64_t offset = 0);

// ---------------------------------------------------------------- nn

/// torch's F.cross_entropy, reduction="mean", over every position: logits
/// [*s C], labels [*s] int (class indices, range-checked) or float shaped
/// like the logits (probabilities: -sum(label * log_softmax)). The result
/// is 0-d in the logits' float dtype (the checker types it f32 and the
/// evaluator converts).
Tensor cross_entropy(const Tensor& logits, const Tensor& labels);
/// mean((a - b)^2), broadcasting.
Tensor mse(const Tensor& a, const Tensor& b);

/// scaled_dot_product_attention: q [*s n d], k [*s t d], v [*s t e] ->
/// [*s n e], out[i] = sum_j softmax_j(scale * q_i . k_j) v_j over the
/// keys row i sees (j <= i when [causal], as torch.tril; all otherwise);
/// a row that sees no key is NaN (softmax of nothing, as torch).
Tensor scaled_dot_product_attention(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    bool causal,
                                    double scale);

// ---------------------------------------------------------------- losses
// With torch.nn.functional's options (ref_losses.cpp). reduction is
// "mean", "sum", "none" (each element's loss, the per-element shape) or,
// for kl_div, "batchmean"; results are f64.

/// An absent tensor option (weight=, pos_weight=) is an undefined Tensor.
struct ClassLossOptions {
  Tensor weight;  // [C], or none
  int64_t ignore_index = -100;
  double label_smoothing = 0;
  std::string reduction = "mean";
};
/// Logits [*s C] with int labels [*s] or probabilities [*s C].
Tensor cross_entropy(const Tensor& logits,
                     const Tensor& labels,
                     const ClassLossOptions& o);
/// Log-probabilities [*s C] with int labels [*s].
Tensor nll_loss(const Tensor& logp,
                const Tensor& labels,
                const ClassLossOptions& o);
Tensor binary_cross_entropy(const Tensor& p,
                            const Tensor& y,
                            const Tensor& weight,
                            const std::string& reduction);
Tensor binary_cross_entropy_with_logits(const Tensor& x,
                                        const Tensor& y,
                                        const Tensor& weight,
                                        const Tensor& pos_weight,
                                        const std::string& reduction);
Tensor mse(const Tensor& a, const Tensor& b, const std::string& reduction);
Tensor smooth_l1(const Tensor& a,
                 const Tensor& b,
                 double beta,
                 const std::string& reduction);
Tensor huber(const Tensor& a,
             const Tensor& b,
             double delta,
             const std::string& reduction);
Tensor kl_div(const Tensor& input,
              const Tensor& target,
              const std::string& reduction,
              bool log_target);
/// [*s] int labels as [*s C] i64 rows with a 1 at the label.
Tensor one_hot(const Tensor& labels, int64_t classes);
/// Inverted dropout with an explicit [keep] mask (bool, x's shape):
/// x * keep / (1 - p); p = 1 gives zeros.
Tensor dropout(const Tensor& x, const Tensor& keep, double p);

struct BatchNormResult {
  Tensor y;
  Tensor running_mean;  ///< updated (Train) or unchanged (Eval)
  Tensor running_var;
};
/// torch.nn.BatchNorm1d/2d on x [b C ...]: Train normalises with the batch
/// mean and biased variance over every axis but 1, and moves the running
/// stats: r = (1 - momentum) r + momentum * batch, with the *unbiased*
/// batch variance; Eval normalises with the running stats. Then g xhat + b.
BatchNormResult batch_norm(const Tensor& x,
                           const Tensor& g,
                           const Tensor& b,
                           const Tensor& running_mean,
                           const Tensor& running_var,
                           bool train,
                           double eps = 1e-5,
                           double momentum = 0.1);
/// (x - mean) / sqrt(var + eps) over [axes] (biased variance; every axis
/// when empty), then g * . + b when given: g and b have the sizes of x's
/// [axes] in the order written.
Tensor layer_norm(const Tensor& x,
                  const std::vector<int>& axes,
                  double eps = 1e-5,
                  const std::optional<Tensor>& g = std::nullopt,
                  const std::optional<Tensor>& b = std::nullopt);
/// x / sqrt(mean(x^2) + eps) over [axes].
Tensor rms_norm(const Tensor& x,
                const std::vector<int>& axes,
                double eps = 1e-6);
/// table [V D] rows at ids [*s]: [*s D].
Tensor embedding(const Tensor& table, const Tensor& ids);
/// Cross-correlation (torch's conv2d, no bias): x [b C h w], k [O
/// C/groups kh kw], zero padding on every side, out [b O (h + 2p - d(kh -
/// 1) - 1) / s + 1 ...]; output channel o sees its group's channels.
Tensor conv2d(const Tensor& x,
              const Tensor& k,
              int64_t stride = 1,
              int64_t padding = 0,
              int64_t dilation = 1,
              int64_t groups = 1);
/// conv2d's definition over one axis: x [b C l], k [O C/groups kl].
Tensor conv1d(const Tensor& x,
              const Tensor& k,
              int64_t stride = 1,
              int64_t padding = 0,
              int64_t dilation = 1,
              int64_t groups = 1);
/// torch's conv_transpose2d, no bias: x [b Cin h w], k [Cin Cout/groups
/// kh kw], each input value scattering its kernel into the output.
Tensor conv_transpose2d(const Tensor& x,
                        const Tensor& k,
                        int64_t stride = 1,
                        int64_t padding = 0,
                        int64_t output_padding = 0,
                        int64_t groups = 1,
                        int64_t dilation = 1);
/// k x k windows of the last two axes with [stride] (k when <= 0) and
/// [padding] on each side (the rest dropped): max ignores the padding,
/// the mean counts it as zeros (torch's count_include_pad=True).
Tensor max_pool2d(const Tensor& x,
                  int64_t k,
                  int64_t stride = 0,
                  int64_t padding = 0);
Tensor avg_pool2d(const Tensor& x,
                  int64_t k,
                  int64_t stride = 0,
                  int64_t padding = 0);
/// torch's adaptive_avg_pool2d to [.. n n].
Tensor adaptive_avg_pool2d(const Tensor& x, int64_t n);
/// The value (stop_grad only changes gradients).
Tensor stop_grad(const Tensor& x);

namespace detail {

/// Row-major strides of [shape].
std::vector<int64_t> strides(const Shape& shape);
/// numpy broadcasting of two shapes; std::invalid_argument on a mismatch.
Shape broadcast_shape(const Shape& a, const Shape& b);
/// The flat index in a tensor of shape [in] (broadcast to [out]) of the
/// element at multi-index [idx] of [out].
int64_t broadcast_index(const std::vector<int64_t>& idx,
                        const Shape& out,
                        const Shape& in);
/// The multi-index of [flat] in [shape].
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);
int64_t ravel(const std::vector<int64_t>& idx, const Shape& shape);
/// [axis] in [0, rank); std::out_of_range when it is not an axis.
int norm_axis(int axis, size_t rank);
/// The float dtype a float op gives on [d] (ints and bool: f32).
DType float_of(DType d);
/// The dtype of a sum on [d] (ints and bool: i64).
DType sum_of(DType d);

}  // namespace detail

}  // namespace ss::ref
