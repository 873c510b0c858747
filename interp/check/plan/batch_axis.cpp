// The batch axis through calls (step 2 of check_devices, see placement.cpp):
// which values are split, each value's layout, E1804 and E1802 at the types.
#include <algorithm>
#include <functional>

#include "interp/check/checker_impl.h"
#include "interp/check/plan/placement_impl.h"

namespace ss::check::placement_detail {

namespace {

using diag::Code;
using SK = ast::Stmt::Kind;
using Placement = FnInfo::Placement;

}  // namespace

void check_batch_axis(Checker& ck,
                      const std::vector<FnInfo*>& fns,
                      const std::vector<CallSite>& sites,
                      bool several,
                      bool mesh,
                      const std::string& N) {
  Program& P = *ck.prog_;
  auto type_of = [&](const ast::Expr* e) -> const Type& {
    return P.type_of(e);
  };

  // ---- 3. The batch axis, through calls. With a mesh nothing is split.
  for (FnInfo* fn : fns) {
    fn->batch_vars.clear();
    fn->param_split.assign(fn->params.size(), false);
  }
  if (mesh) return;
  // A batch's leading axis is a batch axis wherever a batch appears: a
  // `[b] R` param, a loop over batches(n).
  auto add_batch_var = [](FnInfo* fn, const Type& t) {
    if (t.kind == TK::Batch && !t.shape.empty() &&
        t.shape[0].kind == Axis::Kind::Var)
      fn->batch_vars.insert(t.shape[0].var);
  };
  for (FnInfo* fn : fns) {
    for (size_t k = 0; k < fn->params.size(); ++k) {
      add_batch_var(fn, fn->params[k].type);
      if (fn->params[k].type.kind == TK::Batch) fn->param_split[k] = true;
    }
    if (fn->decl->is_extern) continue;
    auto on_expr = [&](const ast::Expr& e) { add_batch_var(fn, type_of(&e)); };
    if (fn->decl->expr_body) each_expr(*fn->decl->expr_body, on_expr);
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        for (const ast::ExprPtr* x :
             {&sp->value, &sp->target, &sp->iter, &sp->cond})
          if (*x) each_expr(**x, on_expr);
        for (const ast::IfBranch& br : sp->branches) {
          if (br.cond) each_expr(*br.cond, on_expr);
          walk(br.body);
        }
        walk(sp->body);
      }
    };
    walk(fn->decl->body);
  }
  // Which values are split. On the workers, a value whose type has the
  // batch axis. In the controller only the batches of its own loops (and
  // what it computes from them itself) are: a call of a fn on the workers
  // gives back a whole value, parts joined in order.
  std::map<const FnInfo*, std::set<std::string>> split_locals;
  std::function<bool(const FnInfo*, const ast::Expr&)> is_split =
      [&](const FnInfo* fn, const ast::Expr& e) -> bool {
    if (!has_batch(type_of(&e), fn->batch_vars)) return false;
    if (fn->placement != Placement::Controller) return true;
    if (e.kind == EK::Name) {
      for (size_t k = 0; k < fn->params.size(); ++k)
        if (fn->params[k].name == e.name) return fn->param_split[k];
      auto it = split_locals.find(fn);
      return it != split_locals.end() && it->second.count(e.name);
    }
    if (e.kind == EK::Call) {
      const ExprInfo* in = P.info(&e);
      if (in && in->resolution.kind == Resolution::Kind::Fn) return false;
    }
    for (const ast::Expr* c : children(e))
      if (is_split(fn, *c)) return true;
    return false;
  };
  auto compute_split_locals = [&](const FnInfo* fn) {
    if (fn->placement != Placement::Controller || fn->decl->is_extern) return;
    std::set<std::string>& out = split_locals[fn];
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        const ast::Stmt& s = *sp;
        if (s.kind == SK::For && s.iter) {
          TK k = type_of(s.iter.get()).kind;
          if (k == TK::Batches || is_split(fn, *s.iter))
            for (const ast::NameTarget& t : s.targets) out.insert(t.name);
        }
        if (s.kind == SK::Let && s.value && is_split(fn, *s.value))
          for (const ast::NameTarget& t : s.targets) out.insert(t.name);
        if (s.kind == SK::Assign && s.value && is_split(fn, *s.value))
          for (const ast::Expr* t : ast::assigned_places(s))
            if (t->kind == EK::Name) out.insert(t->name);
        for (const ast::IfBranch& br : s.branches) walk(br.body);
        walk(s.body);
      }
    };
    walk(fn->decl->body);
  };
  // Is the argument of [cs] split, in the caller's terms?
  // Note [State carried across batches] (interp/check/fit.cpp): in the
  // controller, a whole value with the batch axis (a worker fn's result:
  // an RNN's hidden state carried between the calls that step through one
  // batch's time chunks) holds that batch's rows, so a call cuts it as it
  // cuts the batch beside it. Sent whole, every device got it whole beside
  // its share of the batch: a ShapeError on several devices.
  auto arg_split = [&](const CallSite& cs, const ast::Expr* a) {
    return !a || is_split(cs.caller, *a) ||
           (cs.caller->placement == Placement::Controller &&
            has_batch(type_of(a), cs.caller->batch_vars));
  };
  // The callee's axes that a split argument's batch axes bind to.
  std::function<bool(const Axis&, const Axis&, const Vars&, Vars&)> map_axis =
      [&](const Axis& p, const Axis& a, const Vars& from, Vars& to) {
        bool ch = false;
        if (p.kind == Axis::Kind::Var && axis_is(a, from))
          ch |= to.insert(p.var).second;
        if (p.kind == Axis::Kind::Group && a.kind == Axis::Kind::Group &&
            p.items.size() == a.items.size())
          for (size_t i = 0; i < p.items.size(); ++i)
            ch |= map_axis(p.items[i], a.items[i], from, to);
        return ch;
      };
  auto is_star = [](const Axis& a) {
    return a.kind == Axis::Kind::Var && !a.name.empty() && a.name[0] == '*';
  };
  std::function<bool(const Type&, const Type&, const Vars&, Vars&)> map_type =
      [&](const Type& p, const Type& a, const Vars& from, Vars& to) {
        bool ch = false;
        if ((p.kind == TK::Tensor || p.kind == TK::Batch) &&
            (a.kind == TK::Tensor || a.kind == TK::Batch)) {
          size_t star = p.shape.size();
          for (size_t i = 0; i < p.shape.size(); ++i)
            if (is_star(p.shape[i])) star = i;
          if (star == p.shape.size()) {
            for (size_t i = 0; i < p.shape.size() && i < a.shape.size(); ++i)
              ch |= map_axis(p.shape[i], a.shape[i], from, to);
          } else if (a.shape.size() + 1 >= p.shape.size()) {
            size_t tail = p.shape.size() - star - 1;
            for (size_t i = 0; i < star; ++i)
              ch |= map_axis(p.shape[i], a.shape[i], from, to);
            for (size_t i = 0; i < tail; ++i)
              ch |= map_axis(p.shape[star + 1 + i],
                             a.shape[a.shape.size() - tail + i],
                             from,
                             to);
            for (size_t i = star; i < a.shape.size() - tail; ++i)
              if (axis_count(a.shape[i], from))
                ch |= to.insert(p.shape[star].var).second;
          }
        } else if (p.kind == TK::Tuple && a.kind == TK::Tuple &&
                   p.elems.size() == a.elems.size()) {
          for (size_t i = 0; i < p.elems.size(); ++i)
            ch |= map_type(p.elems[i], a.elems[i], from, to);
        }
        return ch;
      };
  for (bool changed = true; changed;) {
    changed = false;
    for (FnInfo* fn : fns) compute_split_locals(fn);
    for (const CallSite& cs : sites)
      for (const auto& [k, a] : cs.args) {
        if (k >= cs.callee->params.size() || !arg_split(cs, a)) continue;
        if (!cs.callee->param_split[k]) {
          cs.callee->param_split[k] = true;
          changed = true;
        }
        if (a)
          changed |= map_type(cs.callee->params[k].type,
                              type_of(a),
                              cs.caller->batch_vars,
                              cs.callee->batch_vars);
      }
  }

  // Record the layout of every value (for `ss explain`) and, below, check.
  for (FnInfo* fn : fns) {
    if (fn->decl->is_extern) continue;
    auto mark = [&](const ast::Expr& e) {
      ExprInfo& in = ck.info_for(&e);
      in.split = is_split(fn, e);
    };
    if (fn->decl->expr_body) each_expr(*fn->decl->expr_body, mark);
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        for (const ast::ExprPtr* x :
             {&sp->value, &sp->target, &sp->iter, &sp->cond})
          if (*x) each_expr(**x, mark);
        for (const ast::IfBranch& br : sp->branches) {
          if (br.cond) each_expr(*br.cond, mark);
          walk(br.body);
        }
        walk(sp->body);
      }
    };
    walk(fn->decl->body);
  }

  // ---- E1804: a param split in one call and whole in another.
  if (several) {
    std::vector<const CallSite*> ordered;
    for (const CallSite& cs : sites) ordered.push_back(&cs);
    std::stable_sort(ordered.begin(),
                     ordered.end(),
                     [](const CallSite* a, const CallSite* b) {
                       return a->order < b->order;
                     });
    std::set<const ast::Expr*> reported;
    for (FnInfo* callee : fns) {
      for (size_t k = 0; k < callee->params.size(); ++k) {
        const ParamInfo& p = callee->params[k];
        if (p.type.kind == TK::Batch) continue;
        const CallSite* first = nullptr;
        const ast::Expr* first_arg = nullptr;
        bool first_split = false;
        for (const CallSite* cs : ordered) {
          if (cs->callee != callee) continue;
          for (const auto& [pk, a] : cs->args) {
            if (pk != k) continue;
            if (a && type_of(a).is_error()) continue;
            bool s = arg_split(*cs, a);
            if (!first) {
              first = cs;
              first_arg = a;
              first_split = s;
              continue;
            }
            if (s == first_split || reported.count(cs->call)) continue;
            reported.insert(cs->call);
            diag::Span at = a ? a->span : cs->call->span;
            std::string msg =
                "`" + callee->name + "` is called here with `" + p.name +
                (s ? "` split across the devices, but in another call with "
                     "it whole"
                   : "` whole, but in another call with it split across "
                     "the devices");
            std::string label;
            if (s) {
              const Axis* ax =
                  a ? find_batch(type_of(a), cs->caller->batch_vars) : nullptr;
              label = (a ? type_of(a).str() + ", " : std::string()) +
                      "split along " + (ax ? axis_name(*ax) : "the batch");
            } else {
              label = "whole: it has no batch axis";
            }
            auto& d = ck.error(Code::E1804, at, msg, label);
            d.note("`" + p.name + "` is " + (first_split ? "split" : "whole") +
                       " in this call",
                   first_arg ? first_arg->span : first->call->span);
            d.help("a fn is compiled once: give the " +
                   std::string(s ? "split" : "whole") +
                   " value a fn of its own");
          }
        }
      }
    }
  }

  if (!several) return;

  // ---- E1802 at the types: a batch of fixed size, two batch axes.
  for (FnInfo* fn : fns) {
    if (fn->is_stdlib) continue;
    const ParamInfo* first_batch = nullptr;
    for (const ParamInfo& p : fn->params) {
      if (p.type.kind != TK::Batch || p.type.shape.empty()) continue;
      const Axis& a = p.type.shape[0];
      diag::Span at =
          p.decl && p.decl->type ? p.decl->type->span : fn->decl->name_span;
      if (a.kind != Axis::Kind::Var) {
        ck.error(Code::E1802,
                 at,
                 "a batch with a fixed size: " + p.type.str(),
                 "the batch axis is sized here")
            .note("the batch is split across the " + N +
                  " devices, each worker holding only its part of it, so "
                  "its size differs from worker to worker")
            .help("write a size variable, as `[b] " +
                  std::string(p.type.record ? p.type.record->name : "R") +
                  "`, and let batches(n) choose the size");
        continue;
      }
      if (!first_batch) {
        first_batch = &p;
      } else if (first_batch->type.shape[0] != a) {
        ck.error(Code::E1802,
                 at,
                 "`" + fn->name + "` has two batch axes, `" +
                     axis_name(first_batch->type.shape[0]) + "` and `" +
                     axis_name(a) + "`",
                 "a second batch axis")
            .note("`" + first_batch->name + "` has the first",
                  first_batch->decl ? first_batch->decl->name_span
                                    : fn->decl->name_span)
            .help("a fn has at most one batch axis, split across the " + N +
                  " devices: give both batches the same size variable, or "
                  "take them in fns of their own");
      }
    }
  }
  check_batch_bodies(ck, fns, N, is_split);
}

}  // namespace ss::check::placement_detail
