#pragma once
// Autocast at run time: the casts an autocast instance makes (Note
// [Autocast] in autocast.cpp).

#include <optional>

#include "interp/eval/value.h"
#include "ops/core/type.h"

namespace ss::eval {

/// [v] with each float tensor in [declared]'s float dtype (tuples by
/// element): an autocast instance's arguments on entry, its result on
/// exit. Anything else is returned as it is.
Value as_declared(Value v, const types::Type& declared);

/// [t] in [to] when [to] is given and [t] is a float tensor of another
/// dtype (the cast is on the tape: its gradient returns in t's dtype).
ops::Tensor autocast_operand(const ops::Tensor& t,
                             std::optional<types::DType> to);

}  // namespace ss::eval
