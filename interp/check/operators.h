#pragma once
// An operator's table entry: `a @ b` is matmul's, `-x` neg's (OpDef::infix,
// OpDef::prefix). The checker types an operator with the entry's shape
// rule and the evaluator runs its forward, so the two cannot disagree on
// which op an operator is.

#include "interp/parse/ast.h"
#include "ops/registry/op_def.h"

namespace ss::check {

/// The entry [op] spells; never null (a table without one fails at
/// start-up's first use with a std::logic_error).
const ops::OpDef& operator_def(ast::BinaryOp op);
/// The entry [op] spells, or nullptr for `+x` (x itself).
const ops::OpDef* operator_def(ast::UnaryOp op);

}  // namespace ss::check
