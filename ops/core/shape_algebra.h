#pragma once
// Axes and dtype algebra shared by the builtins' rules (ops/defs): numpy
// broadcasting of named shapes, torch.result_type's promotion with host
// scalars, and small helpers for messages. Every function that can fail
// reports through the RuleCtx and returns nullopt / Type::error().

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/core/type.h"
#include "ops/registry/rule_ctx.h"

namespace ss::ops {

using types::Axis;
using types::DType;
using types::Type;
using Axes = std::vector<Axis>;

// ---------------------------------------------------------------- kinds

/// True when any of [ts] is Kind::Error (rules then return Type::error()
/// without a message: the error was reported where it arose).
bool any_error(std::initializer_list<const Type*> ts);

/// The element category: 0 bool, 1 int, 2 float. Host Bool/Int/Float map
/// to 0/1/2; a tensor by its dtype.
int category(const Type& t);
int category(DType d);

/// The dtype a value has as a tensor operand: tensors their dtype; host
/// Int → i64, Float → f32, Bool → bool.
DType tensor_dtype(const Type& t);

/// The default dtype of a category (bool, i64, f32).
DType default_dtype(int category);

/// `x: [b D]`: the argument's source text and its type, for labels.
std::string describe(RuleCtx& ctx, size_t i);
/// The union of the tensors' varying sets (sorted, unique).
std::vector<std::string> union_varying(std::initializer_list<const Type*> ts);
void add_varying(std::vector<std::string>& v, const std::string& name);

// ---------------------------------------------------------------- dtypes

enum class Arith {
  Plain,    // + - * // % maximum minimum pow: bool counts as int
  TrueDiv,  // /: ints give floats
};

/// torch.result_type of a binary arithmetic op on [a] and [b] (numeric):
/// dimensioned tensors > 0-d tensors > host scalars; a lower-priority
/// operand only matters when its category is higher (then a 0-d tensor
/// gives its dtype, a host scalar the category's default: i64 / f32).
/// Two host values give a host kind: Int, or Float (for TrueDiv, or when
/// either is Float). The result is a 0-d Tensor (its dtype is the answer)
/// or a host kind; shapes are not looked at beyond rank 0 vs not.
Type result_dtype(const Type& a, const Type& b, Arith arith = Arith::Plain);

/// The dtype of a float-valued op (exp, mean, softmax) on [d]: floats
/// keep theirs, bool and ints give f32.
DType float_result(DType d);
/// The dtype of a sum/prod/cumsum: bool and ints give i64.
DType sum_result(DType d);

// ---------------------------------------------------------------- shapes

/// Numpy broadcasting of two named shapes, aligned from the right: each
/// pair must be equal (Axis ==) or one side the literal 1. nullopt on a
/// mismatch, with [bad_a]/[bad_b] (when given) set to the offending pair.
std::optional<Axes> broadcast_shapes(const Axes& a,
                                     const Axes& b,
                                     const Axis** bad_a = nullptr,
                                     const Axis** bad_b = nullptr);

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

/// [shape] without the axes at [positions] (any order, no duplicates).
Axes remove_axes(const Axes& shape, const std::vector<size_t>& positions);

/// Axis identity ignoring splits (`A/x` names `A`): for size(x, A) etc.
bool same_axis_base(const Axis& a, const Axis& b);

/// The product of the static sizes, when every axis is static.
std::optional<int64_t> static_numel(const Axes& shape);

/// Sorted, unique.
void normalize_names(std::vector<std::string>& v);

// ---------------------------------------------------------------- rules

/// Param [i] must be a tensor (host numbers too when [host_ok]); else
/// E0303 `softmax needs a tensor, but x is int` at its span. False on an
/// Error type (silently) or after reporting.
bool require_tensor(RuleCtx& ctx, size_t i, bool host_ok = false);
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
/// The tensor type of [t] as an operand: tensors themselves, host numbers
/// as 0-d tensors of their default dtype.
Type as_tensor(const Type& t);

}  // namespace ss::ops
