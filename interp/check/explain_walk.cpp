// Walking the checked program for `ss explain`: expressions post-order, a
// fn's body, its locals' spans, a call's arguments by param.
#include "interp/check/explain_impl.h"

namespace ss::check::comms::detail {

using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;

void each_expr(const ast::Expr& e,
               const std::function<void(const ast::Expr&)>& f) {
  auto sub = [&](const ast::ExprPtr& x) {
    if (x) each_expr(*x, f);
  };
  sub(e.callee);
  sub(e.lhs);
  sub(e.rhs);
  for (const ast::Arg& a : e.args) sub(a.value);
  for (const ast::ExprPtr& x : e.elems) sub(x);
  sub(e.iter);
  sub(e.cond);
  sub(e.elem);
  for (const ast::IndexItem& i : e.indices) {
    sub(i.index);
    sub(i.lo);
    sub(i.hi);
  }
  for (const ast::FStringPart& p : e.fparts) sub(p.expr);
  f(e);
}

// Every expression of [fn]'s body (and its params' defaults), statements
// in order, each expression post-order.
void each_body_expr(const ast::FnDecl& d,
                    const std::function<void(const ast::Expr&)>& f) {
  for (const ast::Param& p : d.params)
    if (p.default_value) each_expr(*p.default_value, f);
  if (d.expr_body) each_expr(*d.expr_body, f);
  std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
    for (const ast::StmtPtr& sp : b) {
      if (!sp) continue;
      const ast::Stmt& s = *sp;
      for (const ast::ExprPtr* x : {&s.iter, &s.cond, &s.value, &s.target})
        if (*x) each_expr(**x, f);
      for (const ast::IfBranch& br : s.branches) {
        if (br.cond) each_expr(*br.cond, f);
        walk(br.body);
      }
      walk(s.body);
    }
  };
  walk(d.body);
}

// The first span at which each local is bound (let and for targets).
std::map<std::string, diag::Span> local_spans(const ast::FnDecl& d) {
  std::map<std::string, diag::Span> out;
  std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
    for (const ast::StmtPtr& sp : b) {
      if (!sp) continue;
      for (const ast::NameTarget& t : sp->targets) out.emplace(t.name, t.span);
      if (sp->kind == SK::Assign && sp->target && sp->target->kind == EK::Name)
        out.emplace(sp->target->name, sp->target->span);
      for (const ast::IfBranch& br : sp->branches) walk(br.body);
      walk(sp->body);
    }
  };
  walk(d.body);
  return out;
}

std::vector<const ast::Expr*> given_args(const ast::Expr& call) {
  std::vector<const ast::Expr*> g;
  if (call.callee && call.callee->kind == EK::Field && call.callee->lhs)
    g.push_back(call.callee->lhs.get());
  for (const ast::Arg& a : call.args) g.push_back(a.value.get());
  return g;
}

const ast::Expr* param_arg(const ast::Expr& call, const ExprInfo& info, int k) {
  std::vector<const ast::Expr*> g = given_args(call);
  for (size_t i = 0; i < g.size() && i < info.arg_params.size(); ++i)
    if (info.arg_params[i] == k) return g[i];
  return nullptr;
}

int param_index(const ops::OpDef& op, const char* name) {
  for (size_t i = 0; i < op.params.size(); ++i)
    if (std::string(op.params[i].name) == name) return static_cast<int>(i);
  return -1;
}

}  // namespace ss::check::comms::detail
