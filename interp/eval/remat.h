#pragma once
// remat(f) (spmd.md; language.md): a call of f through its remat'd value
// keeps none of f's intermediates for the backward pass and recomputes
// them there (Note [Remat] in remat.cpp).

#include <vector>

#include "interp/eval/interpreter.h"

namespace ss::eval {

/// Calls [fn] on [args] as remat(fn) does.
Value call_remat(Interpreter& in,
                 const check::FnInfo& fn,
                 std::vector<Value> args,
                 diag::Span site);

}  // namespace ss::eval
