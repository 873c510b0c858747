#pragma once
// Helpers shared by the builtins' forwards (ops/defs/<family>.cpp): reading
// `over=` from a ForwardCtx, and the few composites more than one family
// uses (a stable logsumexp, float promotion). Everything is written with the
// differentiable API (ops/api.h), so gradients come from its VJPs.

#include <optional>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ops/registry/forward_ctx.h"

namespace ss::ops::fwd {

/// OpError helpers: the evaluator prefixes the op name and the `.ss` line.
[[noreturn]] void shape_error(const std::string& message);
[[noreturn]] void value_error(const std::string& message);

/// [x] unchanged when float, else converted to f32 (what torch's float ops
/// do with ints and bools).
Tensor to_float(const Tensor& x);

/// Low-precision floats computed in f32 (as torch's autocast does for
/// losses and norms); f32 and f64 unchanged; ints to f32.
Tensor compute_float(const Tensor& x);

/// [y], computed by compute_float, back in the input [x0]'s float dtype
/// (a half: rounded once, as torch's half kernels round); as computed for
/// an int input.
Tensor cast_back(const Tensor& y, const Tensor& x0);

/// `over=` of param [i] as positions in [x] (normalised, in the order
/// written); empty (= every axis) when not given.
std::vector<int> over_axes(ForwardCtx& ctx, size_t i, const Tensor& x);

/// `over=` of param [i] naming exactly one axis of [x]. Absent: the only
/// axis of a 1-d [x], else an OpError.
int over_one(ForwardCtx& ctx, size_t i, const Tensor& x);

/// The number of values [axes] of [x] hold (every axis when empty).
int64_t count_over(const Tensor& x, const std::vector<int>& axes);

/// max(x) over [axes] with keepdims, without gradient and with infinite
/// maxima replaced by 0: the shift that keeps exp(x - m) finite.
Tensor stable_shift(const Tensor& x, const std::vector<int>& axes);

/// log(sum(exp(x))) over [axes] (every axis when empty), computed as
/// m + log(sum(exp(x - m))) with m = stable_shift(x).
Tensor logsumexp(const Tensor& x,
                 const std::vector<int>& axes,
                 bool keepdims = false);

/// Variance over [axes] (every axis when empty): unbiased (divides by
/// N - 1) or biased (by N).
Tensor variance(const Tensor& x,
                const std::vector<int>& axes,
                bool unbiased,
                bool keepdims = false);

/// [t] converted to the call's result dtype when the checker gave a tensor
/// result type of another dtype (cross_entropy and mse are typed f32).
Tensor as_result_dtype(ForwardCtx& ctx, const Tensor& t);

/// [v] (a param of shape [shape'] laid along the positions [pos] of a rank
/// [rank] tensor, in the order of [pos]) reshaped so that it broadcasts
/// against that tensor: layer_norm's g and b, batch_norm's per-channel
/// values.
Tensor along(const Tensor& v, const std::vector<int>& pos, size_t rank);

}  // namespace ss::ops::fwd
