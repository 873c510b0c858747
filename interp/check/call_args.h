#pragma once
// A call's arguments as the checker matched them to params: a method's
// receiver first, then the arguments as written (ExprInfo::arg_params's
// order). Shared by the several-devices passes and explain.

#include <vector>

#include "interp/check/checked.h"

namespace ss::check {

inline std::vector<const ast::Expr*> given_args(const ast::Expr& call) {
  std::vector<const ast::Expr*> g;
  if (call.callee && call.callee->kind == ast::Expr::Kind::Field &&
      call.callee->lhs)
    g.push_back(call.callee->lhs.get());
  for (const ast::Arg& a : call.args) g.push_back(a.value.get());
  return g;
}

/// The argument that fills param [k], or null.
inline const ast::Expr* param_arg(const ast::Expr& call,
                                  const ExprInfo& info,
                                  int k) {
  std::vector<const ast::Expr*> g = given_args(call);
  for (size_t i = 0; i < g.size() && i < info.arg_params.size(); ++i)
    if (info.arg_params[i] == k) return g[i];
  return nullptr;
}

}  // namespace ss::check
