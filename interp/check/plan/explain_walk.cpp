// Walking the checked program for `ss explain`: expressions post-order, a
// fn's body, its locals' spans, a call's arguments by param.
#include "interp/check/plan/explain_impl.h"

namespace ss::check::comms::detail {

using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;

// The first span at which each local is bound (let and for targets).
std::map<std::string, diag::Span> local_spans(const ast::FnDecl& d) {
  std::map<std::string, diag::Span> out;
  std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
    for (const ast::StmtPtr& sp : b) {
      if (!sp) continue;
      for (const ast::NameTarget& t : sp->targets) out.emplace(t.name, t.span);
      if (sp->kind == SK::Assign)
        for (const ast::Expr* t : ast::assigned_places(*sp))
          if (t->kind == EK::Name) out.emplace(t->name, t->span);
      for (const ast::IfBranch& br : sp->branches) walk(br.body);
      walk(sp->body);
    }
  };
  walk(d.body);
  return out;
}

int param_index(const ops::OpDef& op, const char* name) {
  for (size_t i = 0; i < op.params.size(); ++i)
    if (std::string(op.params[i].name) == name) return static_cast<int>(i);
  return -1;
}

}  // namespace ss::check::comms::detail
