#pragma once
// An op run on tensors alone: an operator (`a @ b`, `-x`, `g1 + g2`'s
// leaves) goes through its table entry's forward like a call does
// (OpDef::infix, OpDef::prefix), with its operands as the params in order.

#include <vector>

#include "ops/registry/op_def.h"

namespace ss::ops {

/// [op]'s forward with [operands] as params 0, 1, ...: its first result.
/// The forward may read only tensors (an operator's do); asking for
/// anything else is a std::logic_error.
Tensor run_on_tensors(const OpDef& op, std::vector<Tensor> operands);

}  // namespace ss::ops
