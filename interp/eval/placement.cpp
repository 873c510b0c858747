#include "interp/eval/placement.h"

#include <functional>

namespace ss::eval {

namespace {

using EK = ast::Expr::Kind;
using TK = types::Type::Kind;

struct Facts {
  bool host = false;
  bool device = false;
  std::set<const check::FnInfo*> callees;
};

void visit_expr(const ast::Expr& e, const check::Program& p, Facts& f) {
  const check::ExprInfo* info = p.info(&e);
  if (e.kind == EK::Call && info) {
    const auto& r = info->resolution;
    if (r.kind == check::Resolution::Kind::Fn && r.fn) f.callees.insert(r.fn);
    if (r.kind == check::Resolution::Kind::Builtin && r.op) {
      if (r.op->batch == ops::BatchRule::Host) f.host = true;
      std::string n = r.op->name;
      if (r.op->forward || n == "value_and_grad" || n == "grad" ||
          n == "update" || n == "init")
        f.device = true;
      // A function value passed to a builtin (value_and_grad(loss, ...),
      // mean_logs(evaluate, ...)) is called from here.
      for (const ast::Arg& a : e.args)
        if (const check::ExprInfo* ai = p.info(a.value.get());
            ai && ai->resolution.kind == check::Resolution::Kind::Fn &&
            ai->resolution.fn)
          f.callees.insert(ai->resolution.fn);
    }
  }
  if (e.kind == EK::Binary && info && info->type.kind == TK::Tensor)
    f.device = true;
  auto sub = [&](const ast::ExprPtr& x) {
    if (x) visit_expr(*x, p, f);
  };
  sub(e.lhs);
  sub(e.rhs);
  sub(e.callee);
  sub(e.elem);
  sub(e.iter);
  sub(e.cond);
  for (const auto& x : e.elems) sub(x);
  for (const auto& a : e.args) sub(a.value);
  for (const auto& i : e.indices) {
    sub(i.index);
    sub(i.lo);
    sub(i.hi);
  }
  for (const auto& part : e.fparts) sub(part.expr);
}

void visit_block(const ast::Block& b, const check::Program& p, Facts& f) {
  for (const ast::StmtPtr& s : b) {
    if (!s) continue;
    auto sub = [&](const ast::ExprPtr& x) {
      if (x) visit_expr(*x, p, f);
    };
    sub(s->value);
    sub(s->target);
    sub(s->iter);
    sub(s->cond);
    if (s->kind == ast::Stmt::Kind::Assign && s->target &&
        s->target->kind == EK::Field)
      f.device = true;  // a model field changes on the devices
    if (s->kind == ast::Stmt::Kind::For && s->iter) {
      const types::Type& t = p.type_of(s->iter.get());
      if (t.kind == TK::Batches || t.kind == TK::Dataset) f.host = true;
    }
    for (const auto& br : s->branches) {
      sub(br.cond);
      visit_block(br.body, p, f);
    }
    visit_block(s->body, p, f);
  }
}

}  // namespace

Placement::Placement(const check::Program& prog) {
  std::map<const check::FnInfo*, Facts> facts;
  for (const auto& [name, fn] : prog.fns()) {
    Facts f;
    if (fn.decl->expr_body) visit_expr(*fn.decl->expr_body, prog, f);
    visit_block(fn.decl->body, prog, f);
    facts[&fn] = std::move(f);
  }
  // Host and device work propagate up through calls.
  std::function<bool(const check::FnInfo*, bool, std::set<const check::FnInfo*>&)>
      reaches = [&](const check::FnInfo* fn, bool host,
                    std::set<const check::FnInfo*>& seen) -> bool {
    if (!seen.insert(fn).second) return false;
    const Facts& f = facts[fn];
    if (host ? f.host : f.device) return true;
    for (const auto* c : f.callees)
      if (reaches(c, host, seen)) return true;
    return false;
  };
  for (const auto& [fn, f] : facts) {
    std::set<const check::FnInfo*> s1, s2;
    if (reaches(fn, false, s1) && !reaches(fn, true, s2)) workers_.insert(fn);
  }
}

bool Placement::on_workers(const check::FnInfo& fn) const {
  return workers_.count(&fn) > 0;
}

}  // namespace ss::eval
