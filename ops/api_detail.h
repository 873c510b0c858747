#pragma once
// Internals shared by the files that implement ops/api.h (api_*.cpp):
// argument checks with uniform messages, dispatch, and a few differentiable
// helpers that VJPs need but the public API does not expose (the
// transposes of take, gather and cumsum).

#include <initializer_list>
#include <string>
#include <vector>

#include "ops/api.h"
#include "ops/backend/backend.h"

namespace ss::ops::detail {

[[noreturn]] void shape_error(const char* op, const std::string& msg);
[[noreturn]] void value_error(const char* op, const std::string& msg);

/// Throws unless [t] is defined.
void check_defined(const char* op, const Tensor& t);
/// Throws unless every tensor is defined and on one device.
void check_same_device(const char* op, const std::vector<Tensor>& ts);
/// Note [CPU scalars] in api.cpp: each 0-d CPU operand that needs no
/// gradient moves to the device of the first operand not on the CPU.
void place_cpu_scalars(std::initializer_list<Tensor*> operands);
/// The backend of [t]'s device.
Backend& backend_of(const Tensor& t);

/// [axis] normalised against [rank], or an OpError naming [op].
int axis_of(const char* op, int axis, size_t rank);
/// Reduction axes: empty = all; normalised, sorted; duplicates throw.
std::vector<int> reduce_axes(const char* op,
                             const std::vector<int>& axes,
                             size_t rank);
/// numpy broadcasting of two shapes (ops/core/broadcast.h), or an OpError
/// naming [op].
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);
/// [x]'s shape with the reduced [axes] kept as size 1.
Shape kept_shape(const Shape& x, const std::vector<int>& axes);
/// Spreads a reduction's cotangent [g] back over [x_shape].
Tensor expand_back(const Tensor& g,
                   const Shape& x_shape,
                   const std::vector<int>& axes,
                   bool keepdims);

/// Checks that [idx] is an integer tensor and casts it to i64.
Tensor index_tensor(const char* op, const Tensor& idx);
/// Throws OpError(Value) unless every element of [idx] is in [0, n).
void check_index_range(const char* op, const Tensor& idx, int64_t n);

/// Differentiable internals (record their own VJPs).
/// Zeros with [axis] of size [n] and v's slices added at [idx].
Tensor take_add(const Tensor& v, const Tensor& idx, int axis, int64_t n);
/// Zeros of [shape] with [v] added at [idx] along [axis].
Tensor scatter(const Shape& shape,
               const Tensor& idx,
               const Tensor& v,
               int axis);
/// cumsum, from the end when [reverse].
Tensor cumsum_dir(const Tensor& x, int axis, bool reverse);

}  // namespace ss::ops::detail
