#pragma once
// Walking the checked program for `ss explain`, shared by explain.cpp and
// explain_walk.cpp (which defines these). Not included outside
// interp/check/.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "interp/check/explain.h"

namespace ss::check::comms::detail {

// Every sub-expression of [e], [e] last (post-order).
void each_expr(const ast::Expr& e,
               const std::function<void(const ast::Expr&)>& f);
// Every expression of [fn]'s body (and its params' defaults).
void each_body_expr(const ast::FnDecl& d,
                    const std::function<void(const ast::Expr&)>& f);
// The first span at which each local is bound (let and for targets).
std::map<std::string, diag::Span> local_spans(const ast::FnDecl& d);
std::vector<const ast::Expr*> given_args(const ast::Expr& call);
const ast::Expr* param_arg(const ast::Expr& call, const ExprInfo& info, int k);
int param_index(const ops::OpDef& op, const char* name);

}  // namespace ss::check::comms::detail
