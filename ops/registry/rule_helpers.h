#pragma once
// The helpers the builtins' shape rules (ops/defs) report through: argument
// checks and broadcasting that put an error code, a span and a label on the
// RuleCtx (spec/errors.md) and return false / nullopt. The pure algebra
// they build on is ops/core/shape_algebra.h.

#include <optional>
#include <string>
#include <string_view>

#include "ops/core/shape_algebra.h"
#include "ops/registry/rule_ctx.h"

namespace ss::ops {

/// `x: [b D]`: the argument's source text and its type, for labels.
std::string describe(RuleCtx& ctx, size_t i);

/// Broadcasts [a] with [b] (tensors or host numbers, which act as 0-d) for
/// an elementwise op: the result is a Tensor of the broadcast shape with
/// result_dtype(a, b, arith) and the union of the varying sets, or the host
/// kind when both are host values. On a mismatch reports E0301 at the span
/// covering both, `cannot broadcast [b Hd] with [D]: Hd (256) vs D (784)`,
/// with [label] (or `<a> with <b>` when empty), and returns nullopt.
std::optional<Type> broadcast(RuleCtx& ctx,
                              const Type& a,
                              const Type& b,
                              diag::Span span_a,
                              diag::Span span_b,
                              std::string_view label = {},
                              Arith arith = Arith::Plain);

/// Param [i] must be a tensor (host numbers too when [host_ok]); else
/// E0303 `softmax needs a tensor, but x is int` at its span. False on an
/// Error type (silently) or after reporting.
bool require_tensor(RuleCtx& ctx, size_t i, bool host_ok = false);
/// Param [i] must be a float tensor; else E0304 `<op> needs a float
/// tensor, but x is [b] i64`.
bool require_float(RuleCtx& ctx, size_t i);
/// Param [i] must be of kind [k]; else E0303 `<op> needs <what> for <param>,
/// but <text> is <type>`.
bool require_kind(RuleCtx& ctx, size_t i, Type::Kind k, const char* what);
/// Param [i] must be a host number (or a 0-d tensor when [zero_d_ok]).
bool require_number(RuleCtx& ctx, size_t i, bool zero_d_ok = true);
/// `over=` (param [i]) naming exactly one axis of [shape]; E0308 via the
/// context, E0303 when it names several.
std::optional<size_t> over_one(RuleCtx& ctx, size_t i, const Axes& shape);
/// A size given as a value (`topk(x, 5)`, `arange(N)`, `pad(to=N)`): the
/// dim itself when the argument's text names one (a bare name whose value
/// is known at check time), a literal when its value is known, else
/// nullopt (the caller makes a fresh size variable).
std::optional<Axis> size_arg(RuleCtx& ctx, size_t i);

}  // namespace ss::ops
