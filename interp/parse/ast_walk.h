#pragma once
// Walking the syntax tree: an expression's direct sub-expressions, every
// sub-expression in post-order, and every expression of a fn's body. The
// checker's passes (placement, the batch axis, explain) share these.

#include <functional>
#include <vector>

#include "interp/parse/ast.h"

namespace ss::ast {

/// The direct sub-expressions of [e], in source order.
std::vector<const Expr*> children(const Expr& e);
/// Every sub-expression of [e], [e] last (post-order).
void each_expr(const Expr& e, const std::function<void(const Expr&)>& f);
/// The places an assignment writes, in order: its target, or each element
/// of a tuple target (`h, c = cell(x, h, c)`, `m.a, m.b = f(x)`).
std::vector<const Expr*> assigned_places(const Stmt& s);
/// Every expression of [d]'s body and its params' defaults, statements in
/// order, each expression post-order.
void each_body_expr(const FnDecl& d, const std::function<void(const Expr&)>& f);

}  // namespace ss::ast
