#pragma once
// Axes and dtype algebra shared by the builtins' rules (ops/defs): numpy
// broadcasting of named shapes, torch.result_type's promotion with host
// scalars. Pure functions of types; the helpers that report through a
// RuleCtx are ops/registry/rule_helpers.h.

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ops/core/type.h"

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

/// [shape] without the axes at [positions] (any order, no duplicates).
Axes remove_axes(const Axes& shape, const std::vector<size_t>& positions);

/// Axis identity ignoring splits (`A/x` names `A`): for size(x, A) etc.
bool same_axis_base(const Axis& a, const Axis& b);

/// The product of the static sizes, when every axis is static.
std::optional<int64_t> static_numel(const Axes& shape);

/// Sorted, unique.
void normalize_names(std::vector<std::string>& v);

/// The tensor type of [t] as an operand: tensors themselves, host numbers
/// as 0-d tensors of their default dtype.
Type as_tensor(const Type& t);

}  // namespace ss::ops
