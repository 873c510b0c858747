// Deep copies of the syntax tree. A fn generic over a dtype is checked once
// per dtype, each instance on its own copy of the body, so that every
// instance's expressions have their own checked types (Note [Dtype
// variables] in interp/check/generics.cpp).
#include "interp/parse/ast.h"

namespace ss::ast {

namespace {

Block clone_block(const Block& b);

ExprPtr clone_expr(const ExprPtr& e) {
  return e ? clone(*e) : nullptr;
}

StmtPtr clone_stmt(const Stmt& s) {
  auto c = std::make_unique<Stmt>();
  c->kind = s.kind;
  c->span = s.span;
  c->targets = s.targets;
  c->annotation = s.annotation;
  c->target = clone_expr(s.target);
  c->aug_op = s.aug_op;
  c->value = clone_expr(s.value);
  for (const IfBranch& b : s.branches)
    c->branches.push_back({clone_expr(b.cond), clone_block(b.body), b.span});
  c->iter = clone_expr(s.iter);
  c->cond = clone_expr(s.cond);
  c->body = clone_block(s.body);
  return c;
}

Block clone_block(const Block& b) {
  Block out;
  for (const StmtPtr& s : b) out.push_back(s ? clone_stmt(*s) : nullptr);
  return out;
}

}  // namespace

ExprPtr clone(const Expr& e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->span = e.span;
  c->name = e.name;
  c->int_value = e.int_value;
  c->float_value = e.float_value;
  c->bool_value = e.bool_value;
  for (const FStringPart& p : e.fparts)
    c->fparts.push_back({p.text, clone_expr(p.expr), p.format_spec});
  for (const ExprPtr& x : e.elems) c->elems.push_back(clone_expr(x));
  c->elem = clone_expr(e.elem);
  c->targets = e.targets;
  c->iter = clone_expr(e.iter);
  c->cond = clone_expr(e.cond);
  c->unary_op = e.unary_op;
  c->binary_op = e.binary_op;
  c->lhs = clone_expr(e.lhs);
  c->rhs = clone_expr(e.rhs);
  c->callee = clone_expr(e.callee);
  for (const Arg& a : e.args)
    c->args.push_back({a.span, a.keyword, a.keyword_span, clone_expr(a.value)});
  c->pattern = e.pattern;
  for (const IndexItem& i : e.indices)
    c->indices.push_back({i.span,
                          i.is_slice,
                          clone_expr(i.index),
                          clone_expr(i.lo),
                          clone_expr(i.hi)});
  if (e.type) c->type = std::make_unique<TypeExpr>(*e.type);
  if (e.axis) c->axis = std::make_unique<AxisExpr>(*e.axis);
  c->name_span = e.name_span;
  return c;
}

FnDecl clone(const FnDecl& f) {
  FnDecl c;
  c.span = f.span;
  c.name = f.name;
  c.name_span = f.name_span;
  for (const Param& p : f.params)
    c.params.push_back({p.span,
                        p.name,
                        p.name_span,
                        p.mut,
                        p.type,
                        clone_expr(p.default_value)});
  c.result = f.result;
  c.body = clone_block(f.body);
  c.expr_body = clone_expr(f.expr_body);
  c.is_spmd = f.is_spmd;
  c.spmd_check = f.spmd_check;
  c.is_extern = f.is_extern;
  c.extern_target = f.extern_target;
  c.extern_span = f.extern_span;
  return c;
}

}  // namespace ss::ast
