#pragma once
// A pattern builtin (rearrange, split, einsum) called in the walk
// (eval_pattern.cpp).

#include "interp/eval/interpreter.h"

namespace ss::eval {

/// The pattern builtin [op] of [call] ([receiver]: `x.rearrange(...)`'s
/// x) in [f]: its operands evaluated, then run as an op site (Note [Op
/// sites]).
Value call_pattern(Interpreter& in,
                   const ops::OpDef& op,
                   const ast::Expr& call,
                   const ast::Expr* receiver,
                   Frame& f);

}  // namespace ss::eval
