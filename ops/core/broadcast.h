#pragma once
// Numpy broadcasting of two concrete shapes (sizes, at run time): the one
// algorithm and the one wording of its failure, for the differentiable API
// (ops/api.cpp) and the backends (ops/cpu), each of which throws its own
// error with the wording. The checker's broadcasting of named shapes is
// shape_algebra.h's.

#include <optional>
#include <string>

#include "ops/core/tensor.h"

namespace ss::ops {

/// [a] and [b] broadcast together, aligned from the right: each pair of
/// sizes equal or one of them 1 (a missing axis counts as 1). nullopt when
/// a pair differs and neither is 1.
std::optional<Shape> broadcast_sizes(const Shape& a, const Shape& b);

/// "shapes [2 3] and [4] do not broadcast": what a caller of
/// broadcast_sizes says when it gives nullopt.
std::string broadcast_mismatch(const Shape& a, const Shape& b);

}  // namespace ss::ops
