#include "interp/parse/ast_walk.h"

namespace ss::ast {

std::vector<const Expr*> children(const Expr& e) {
  std::vector<const Expr*> v;
  auto sub = [&](const ExprPtr& x) {
    if (x) v.push_back(x.get());
  };
  sub(e.callee);
  sub(e.lhs);
  sub(e.rhs);
  for (const Arg& a : e.args) sub(a.value);
  for (const ExprPtr& x : e.elems) sub(x);
  sub(e.iter);
  sub(e.cond);
  sub(e.elem);
  for (const IndexItem& i : e.indices) {
    sub(i.index);
    sub(i.lo);
    sub(i.hi);
  }
  for (const FStringPart& p : e.fparts) sub(p.expr);
  return v;
}

void each_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  for (const Expr* c : children(e)) each_expr(*c, f);
  f(e);
}

void each_body_expr(const FnDecl& d,
                    const std::function<void(const Expr&)>& f) {
  for (const Param& p : d.params)
    if (p.default_value) each_expr(*p.default_value, f);
  if (d.expr_body) each_expr(*d.expr_body, f);
  std::function<void(const Block&)> walk = [&](const Block& b) {
    for (const StmtPtr& sp : b) {
      if (!sp) continue;
      const Stmt& s = *sp;
      for (const ExprPtr* x : {&s.iter, &s.cond, &s.value, &s.target})
        if (*x) each_expr(**x, f);
      for (const IfBranch& br : s.branches) {
        if (br.cond) each_expr(*br.cond, f);
        walk(br.body);
      }
      walk(s.body);
    }
  };
  walk(d.body);
}

std::vector<const Expr*> assigned_places(const Stmt& s) {
  std::vector<const Expr*> out;
  if (!s.target) return out;
  if (s.target->kind == Expr::Kind::Tuple) {
    for (const ExprPtr& e : s.target->elems)
      if (e) out.push_back(e.get());
  } else {
    out.push_back(s.target.get());
  }
  return out;
}

}  // namespace ss::ast
