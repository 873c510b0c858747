// Fn bodies: statements, scopes, returns, `mut`.
#include "interp/check/checker_impl.h"
#include "interp/parse/ast_walk.h"

namespace ss::check {

using diag::Code;

std::set<std::string> split_axes(const Type& t) {
  std::set<std::string> out;
  auto add = [&](const Axis& a, auto&& self) -> void {
    out.insert(a.split.begin(), a.split.end());
    for (const Axis& i : a.items) self(i, self);
  };
  for (const Axis& a : t.shape) add(a, add);
  return out;
}

// E2001 (spmd.md, the out-spec check): an spmd fn's result may vary only
// over the mesh axes its return type splits; over any other axis the
// instances would disagree on what is one whole value (jax's check_rep).
//
// Note [E2001 for inlined spmd fns]: the check applies to spmd fns called
// from ordinary code (they join their result by the return type) and to
// spmd fns never called; one called only from spmd fns is inlined and its
// result keeps its varying set (the tutorial's spmd_pipeline returns values
// that vary over `stages` to loss_pp, which pmeans them). So the finding
// is kept on the fn (pending_e2001) and report_pending_e2001 decides once
// every caller is known. `spmd(check=false)` turns it off.
void Checker::check_result_varying(FnInfo& fn, const Type& t, diag::Span at) {
  if (t.kind != TK::Tensor || fn.result.kind != TK::Tensor) return;
  fn.result_varying.insert(t.varying.begin(), t.varying.end());
  if (!fn.decl->spmd_check) return;
  std::set<std::string> splits = split_axes(fn.result);
  for (const std::string& v : t.varying) {
    if (splits.count(v)) continue;
    fn.pending_e2001.push_back(
        {at,
         "the result of `" + fn.name + "` varies over mesh axis " + v +
             ", but its return type " + fn.result.str() +
             " does not split over " + v,
         t.str(),
         "sum the partial products with psum(..., " + v +
             "), or split an axis of the result over " + v});
    return;
  }
}

void Checker::report_pending_e2001() {
  for (auto& [name, fn] : prog_->fns_) {
    if (fn.called_from_spmd && !fn.called_from_ordinary) continue;
    for (const FnInfo::PendingE2001& p : fn.pending_e2001)
      error(Code::E2001, p.at, p.message, p.label).help(p.help);
  }
}

// E2006 (spmd.md): a collective is a meeting of every instance along its
// axes; under a condition that varies over the mesh some instances would
// skip it and the others wait forever. So is a value_and_grad (its leaves'
// gradients are summed over their copies: Note [A gradient inside an
// instance] in ops/registry/mesh_comm.h).
void Checker::check_collective_place(const ops::OpDef& op,
                                     const std::vector<RuleArg>& args,
                                     diag::Span at,
                                     FnCtx& c) {
  const bool collective = op.device.collective;
  if (!(collective || op.device.meets_instances) || c.varying_conds.empty())
    return;
  const FnCtx::VaryingCond& v = c.varying_conds.front();
  std::string axes;
  for (const std::string& a : v.axes) axes += (axes.empty() ? "" : " ") + a;
  std::string over;
  if (collective && args.size() > 1 && args[1].present)
    over = " over " + text(args[1].span);
  const std::string what = collective ? "a collective"
                                      : "`" + std::string(op.name) +
                                            "`, which every instance "
                                            "reaches together";
  error(Code::E2006,
        v.span,
        "this `" + v.word + "`'s condition varies over mesh axis" +
            (v.axes.size() > 1 ? "es " : " ") + axes +
            ", and its body contains " + what,
        "varies over " + axes)
      .note("`" + std::string(op.name) + "`" + over + " is here", at)
      .help(std::string(collective ? "run the collective" : "differentiate") +
            " on every instance, before the branch, and choose with "
            "where(...)");
  // One report per condition.
  c.varying_conds.front().axes.clear();
  c.varying_conds.erase(c.varying_conds.begin());
}

void Checker::check_fn(FnInfo& fn) {
  FnCtx c;
  c.fn = &fn;
  c.axes = sig_scopes_[fn.name];
  c.in_spmd = fn.decl->is_spmd;
  c.autocast = fn.autocast;
  c.values.push();
  // Size variables that only the result names are bound by the returns.
  std::set<uint32_t> in_params;
  std::function<void(const Type&)> collect = [&](const Type& t) {
    auto add = [&](const Axis& a, auto&& self) -> void {
      if (a.kind == Axis::Kind::Var) in_params.insert(a.var);
      for (const Axis& i : a.items) self(i, self);
    };
    for (const Axis& a : t.shape) add(a, add);
    for (const Axis& a : t.model_args) add(a, add);
    for (const Axis& a : t.stack) add(a, add);
    for (const Type& e : t.elems) collect(e);
  };
  for (const ParamInfo& p : fn.params) collect(p.type);
  for (const auto& [name, ax] : c.axes.names)
    if (ax.kind == Axis::Kind::Var && !in_params.count(ax.var))
      c.result_only.insert(ax.var);
  for (const ParamInfo& p : fn.params) {
    // In an spmd fn a parameter varies over the mesh axes its type splits
    // (spmd.md): its blocks differ from instance to instance.
    Type local = p.type;
    if (c.in_spmd && local.kind == TK::Tensor) {
      std::set<std::string> over = split_axes(local);
      local.varying.assign(over.begin(), over.end());
    }
    c.values.declare(p.name, {local, p.decl->name_span, true, p.mut});
    if (p.decl->default_value) {
      Type dt = check_expr(*p.decl->default_value, c);
      Binding b;
      fit(p.type,
          dt,
          b,
          p.decl->default_value->span,
          "the default of `" + p.name + "`");
    }
  }
  if (fn.decl->expr_body) {
    Type t = check_expr(*fn.decl->expr_body, c);
    if (fn.autocast) t = as_declared(fn.result, t);  // Note [Autocast]
    fn.result_no_vjp = t.no_vjp;
    if (fn.has_result) {
      Binding b;
      b.blocks = c.in_spmd;  // Note [Results take blocks]
      for (const auto& [name, ax] : c.axes.names)
        if (ax.kind == Axis::Kind::Var && !c.result_only.count(ax.var))
          b.vars[ax.var] = ax;
      if (fit(fn.result,
              t,
              b,
              fn.decl->expr_body->span,
              "the result of `" + fn.name + "`") &&
          c.in_spmd)
        check_result_varying(fn, t, fn.decl->expr_body->span);
      if (t.kind == TK::Logs && fn.result.kind == TK::Logs)
        fn.inferred_logs = t;
    }
  } else {
    check_block(fn.decl->body, c);
    if (fn.has_result && !c.saw_return && fn.result.kind != TK::Unit &&
        !fn.result.is_error())
      error(Code::E0303,
            fn.decl->name_span,
            "`" + fn.name + "` must return " + fn.result.str() +
                " but has no `return`",
            "declared here");
  }
}

void Checker::check_block(const ast::Block& b, FnCtx& c) {
  c.values.push();
  for (const ast::StmtPtr& s : b)
    if (s) check_stmt(*s, c);
  c.values.pop();
}

Type Checker::check_condition(const ast::Expr& e, FnCtx& c) {
  Type t = check_expr(e, c);
  if (t.is_error() || t.kind == TK::Bool) return t;
  if (t.kind == TK::Tensor) {
    if (!t.shape.empty())
      error(Code::E0303,
            e.span,
            "a condition must be a 0-d bool, found " + t.str(),
            "has axes " + types::shape_str(t.shape))
          .help("reduce it first: any(...) or all(...)");
    else if (t.dtype != types::DType::Bool)
      error(Code::E0304,
            e.span,
            std::string("a condition must be bool, found ") +
                types::dtype_name(t.dtype),
            "this is " + t.str())
          .help("compare it: `x > 0`");
    return t;
  }
  if (t.kind == TK::Int || t.kind == TK::Float) return t;  // truthiness
  error(Code::E0303,
        e.span,
        "a condition must be a bool, found " + t.str(),
        "not a bool");
  return t;
}

Type Checker::element_type(const Type& it, diag::Span at) {
  switch (it.kind) {
    case TK::Error:
      return it;
    case TK::List:
      return it.elems.empty() ? Type::error() : it.elems[0];
    case TK::Batches: {
      Type b = Type::of(TK::Batch);
      b.record = it.record;
      b.shape = {fresh_var("b")};
      return b;
    }
    case TK::Dataset: {
      Type r = Type::of(TK::Record);
      r.record = it.record;
      return r;
    }
    case TK::Tuple: {
      if (it.elems.empty()) return Type::error();
      for (const Type& e : it.elems)
        if (!same_type(e, it.elems[0])) {
          error(
              Code::E0303,
              at,
              "a loop over a tuple needs items of one type, found " + it.str(),
              "mixed item types");
          return Type::error();
        }
      return it.elems[0];
    }
    case TK::Model:
      if (!it.stack.empty()) {
        Type m = it;
        m.stack.erase(m.stack.begin());
        return m;
      }
      break;
    case TK::Tensor:
      if (!it.shape.empty()) {
        Type t = it;
        t.shape.erase(t.shape.begin());
        return t;
      }
      break;
    default:
      break;
  }
  error(Code::E0303,
        at,
        "cannot loop over " + it.str(),
        "not a list, range, dataset, batches or stacked model")
      .help("loop over range(n), a list, ds.batches(n) or m.blocks");
  return Type::error();
}

void Checker::bind_targets(const std::vector<ast::NameTarget>& targets,
                           const Type& t,
                           diag::Span at,
                           FnCtx& c,
                           bool is_let) {
  std::vector<Type> parts;
  if (targets.size() == 1) {
    parts.push_back(t);
  } else if (t.is_error()) {
    parts.assign(targets.size(), Type::error());
  } else if (t.kind == TK::Tuple && t.elems.size() == targets.size()) {
    parts = t.elems;
  } else {
    error(Code::E0303,
          at,
          "cannot unpack " + t.str() + " into " +
              std::to_string(targets.size()) + " names",
          t.kind == TK::Tuple ? "a " + std::to_string(t.elems.size()) + "-tuple"
                              : "not a tuple");
    parts.assign(targets.size(), Type::error());
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const ast::NameTarget& n = targets[i];
    if (n.name == "_") continue;
    if (dim_decls_.count(n.name) || lookup_axis(n.name, {}).has_value()) {
      error(Code::E0202,
            n.span,
            "`" + n.name + "` shadows the dim `" + n.name + "`",
            "a local may not shadow a dim")
          .help("rename the local");
      c.values.declare(n.name, {Type::error(), n.span, false, true});
      continue;
    }
    bool mesh = false;
    for (const MeshAxis& m : prog_->mesh_) mesh |= m.name == n.name;
    if (mesh) {
      error(Code::E0202,
            n.span,
            "`" + n.name + "` shadows the mesh axis `" + n.name + "`",
            "a local may not shadow a mesh axis");
      c.values.declare(n.name, {Type::error(), n.span, false, true});
      continue;
    }
    const Local* prev =
        c.values.declare(n.name, {parts[i], n.span, false, true});
    if (prev) {
      auto& d =
          error(Code::E0202,
                n.span,
                "`" + n.name + "` is already declared in this block",
                is_let ? "declared again" : "loop variable declared again")
              .note("first declared here", prev->span);
      // `let x = e` again: the fix drops the `let` (not for `let a, b`,
      // nor `let x: T = e`, which would not parse without it).
      std::string_view src = sm_.file(n.span.file).text;
      size_t k = n.span.begin, after = n.span.end;
      while (k > 0 && src[k - 1] == ' ') --k;
      while (after < src.size() && src[after] == ' ') ++after;
      if (is_let && targets.size() == 1 && k >= 3 &&
          src.substr(k - 3, 3) == "let" && after < src.size() &&
          src[after] == '=')
        d.help("use `" + n.name + " = ...` to rebind it",
               {"Rebind `" + n.name + "`",
                {n.span.file, static_cast<uint32_t>(k - 3), n.span.begin},
                ""});
      else
        d.help("use `" + n.name + " = ...` to rebind it");
    } else if (c.fn) {
      c.fn->locals.push_back({n.name, parts[i]});
      c.fn->local_spans.push_back(n.span);
    }
  }
}

void Checker::require_mutable(const ast::Expr& e,
                              FnCtx& c,
                              const std::string& why) {
  // The root of a place: `m` in `m.sub.w`, `m.blocks[i]`.
  const ast::Expr* root = &e;
  while (root->kind == ast::Expr::Kind::Field ||
         root->kind == ast::Expr::Kind::Index)
    root = root->lhs.get();
  if (!root || root->kind != ast::Expr::Kind::Name) return;
  Local* l = c.values.find(root->name);
  if (!l || !l->is_param || l->mut) return;
  error(Code::E0401,
        e.span,
        "`" + root->name + "` is changed here (" + why +
            "), but the parameter is not `mut`",
        "changes `" + root->name + "`")
      .note("parameter declared here", l->span)
      .help("declare it `mut " + root->name + ": ...`",
            {"Declare `" + root->name + "` mut",
             {l->span.file, l->span.begin, l->span.begin},
             "mut "});
}

void Checker::check_return(const ast::Stmt& s, FnCtx& c) {
  c.saw_return = true;
  FnInfo* fn = c.fn;
  Type t = s.value ? check_expr(*s.value, c) : Type::of(TK::Unit);
  if (!fn) return;
  if (!fn->has_result) {
    if (s.value && !t.is_error() && t.kind != TK::Unit)
      error(Code::E0303,
            s.value->span,
            "`" + fn->name + "` declares no result but returns " + t.str(),
            "returned here")
          .help("declare it: `-> " + t.str() + "`");
    return;
  }
  if (!s.value) {
    error(Code::E0303,
          s.span,
          "`" + fn->name + "` must return " + fn->result.str(),
          "returns nothing");
    return;
  }
  // The fn's own size variables are themselves; result-only ones are bound
  // by the first return and must agree after.
  // Note [Results take blocks]: an spmd fn's result axis without `/` takes
  // one block (spmd.md: R = the block's size), so a result-only size
  // variable binds to the block axis as it is, split included (`-> [r]` of
  // a psum of an [n/i] block).
  Binding b;
  b.blocks = c.in_spmd;
  b.vars = c.result_binding;
  for (const auto& [name, ax] : c.axes.names)
    if (ax.kind == Axis::Kind::Var && !c.result_only.count(ax.var))
      b.vars.emplace(ax.var, ax);
  if (fn->result_no_vjp.empty()) fn->result_no_vjp = t.no_vjp;
  if (fn->autocast) t = as_declared(fn->result, t);  // Note [Autocast]
  if (fit(fn->result,
          t,
          b,
          s.value->span,
          "the result of `" + fn->name + "`")) {
    for (const auto& [id, ax] : b.vars) c.result_binding.emplace(id, ax);
    if (c.in_spmd) check_result_varying(*fn, t, s.value->span);
  }
  if (fn->result.kind == TK::Logs && t.kind == TK::Logs && !t.open) {
    if (!fn->inferred_logs) fn->inferred_logs = t;
  }
}

// Note [Loop-carried varying sets]: in an spmd fn a loop's body may make a
// local vary over more mesh axes (`acc = where(axis_index(x) == 0, a,
// acc)`) after a statement that read it, which on the next iteration reads
// the grown value. One pass types that read with the old set and can miss
// an E2001 or E2006, so while a pass grows a set (sets only grow, and are
// bounded by the mesh) the body is checked again. A pass that reported an
// error is not repeated, so no error is reported twice; a repeat records
// no new locals for `ss check --types`.
void Checker::check_loop(const ast::Stmt& s, FnCtx& c) {
  using K = ast::Stmt::Kind;
  size_t first_locals = 0;  // what the first pass recorded
  for (int pass = 0;; ++pass) {
    const size_t grown = c.values.varying_total();
    const size_t errors = diags_.size();
    const size_t outer = c.varying_conds.size();
    bool scope = false;
    if (s.kind == K::For) {
      Type it = s.iter ? check_expr(*s.iter, c) : Type::error();
      Type el = element_type(it, s.iter ? s.iter->span : s.span);
      if (c.in_spmd && !it.varying.empty())
        c.varying_conds.push_back({s.iter->span, "for", it.varying});
      c.values.push();
      scope = true;
      bind_targets(s.targets, el, s.span, c, false);
    } else if (s.cond) {
      Type ct = check_condition(*s.cond, c);
      if (c.in_spmd && !ct.varying.empty())
        c.varying_conds.push_back({s.cond->span, "while", ct.varying});
    }
    ++c.loop_depth;
    check_block(s.body, c);
    --c.loop_depth;
    if (scope) c.values.pop();
    c.varying_conds.resize(outer);
    if (c.fn && pass > 0) c.fn->locals.resize(first_locals);
    if (c.fn && pass == 0) first_locals = c.fn->locals.size();
    if (!c.in_spmd || diags_.size() != errors ||
        c.values.varying_total() == grown || pass >= 16)
      return;
  }
}

// One place an assignment writes ([tgt]: a name or a model's field) given
// a value of type [v] written at [value_span].
void Checker::check_assign(const ast::Stmt& s,
                           const ast::Expr& tgt,
                           Type v,
                           diag::Span value_span,
                           FnCtx& c) {
  using K = ast::Stmt::Kind;
  if (tgt.kind == ast::Expr::Kind::Name) {
    Local* l = c.values.find(tgt.name);
    if (!l) {
      auto& d = error(Code::E0201,
                      tgt.span,
                      "`" + tgt.name + "` is not declared",
                      "assigned before `let`");
      std::vector<std::string> cands;
      // Past the errors kept, no walk over the names (Note [The first
      // errors] in diag/diagnostic.cpp).
      if (diags_.kept(d)) cands = value_names(&c);
      // A local or a parameter mistyped is the likeliest (as for an
      // unknown name read: exprs.cpp).
      if (c.fn && diags_.kept(d))
        for (const auto& [ln, lt] : c.fn->locals) cands.push_back(ln);
      if (c.fn && diags_.kept(d))
        for (const ParamInfo& p : c.fn->params) cands.push_back(p.name);
      std::string sg = suggest(tgt.name, cands);
      if (sg.empty())
        d.help("declare it: `let " + tgt.name + " = ...`");
      else
        did_you_mean(d, sg, tgt.span);
      return;
    }
    record(tgt, l->type);
    if (s.kind == K::AugAssign)  // x += e keeps x's type, as x = x + e
      v = binary_type(s.aug_op, l->type, v, s.span, tgt.span, value_span);
    if (!same_type(l->type, v)) {
      error(Code::E0303,
            value_span,
            "`" + tgt.name + "` is " + l->type.str() +
                " and `=` keeps its type, but this is " + v.str(),
            "this is " + v.str())
          .note("declared here", l->span)
          .help("declare a new name with `let`");
    } else if (c.in_spmd && l->type.kind == TK::Tensor &&
               v.kind == TK::Tensor) {
      // In an spmd fn the varying set may grow (spmd.md): the local
      // varies from here on over what the new value varies over.
      std::set<std::string> grown(l->type.varying.begin(),
                                  l->type.varying.end());
      grown.insert(v.varying.begin(), v.varying.end());
      l->type.varying.assign(grown.begin(), grown.end());
    }
    return;
  }
  if (tgt.kind == ast::Expr::Kind::Field) {
    Type base = check_expr(*tgt.lhs, c);
    Type ft = check_expr(tgt, c);
    if (base.kind == TK::Model) {
      require_mutable(*tgt.lhs, c, "a field is assigned");
      if (!ft.is_error() && !v.is_error() && s.kind == K::Assign &&
          !(ft.kind == TK::Tensor && v.kind == TK::Tensor &&
            ft.shape == v.shape && ft.dtype == v.dtype) &&
          !same_type(ft, v))
        error(Code::E0402,
              value_span,
              "field `" + tgt.name + "` of " + base.str() + " is " + ft.str() +
                  ", but this is " + v.str(),
              "this is " + v.str())
            .help("a model field keeps its type");
    } else if (!base.is_error()) {
      error(Code::E0303,
            tgt.span,
            "only a model's fields can be assigned; this is a field of " +
                base.str(),
            "values are immutable");
    }
    return;
  }
  if (tgt.kind == ast::Expr::Kind::Index) {
    Type t = check_expr(tgt, c);
    (void)t;
    error(Code::E0303,
          tgt.span,
          "tensors are immutable: an indexed element cannot be assigned",
          "cannot assign here")
        .help("use put(x, i, v, over=A) to make a changed copy");
    return;
  }
  error(Code::E0101,
        tgt.span,
        "cannot assign to this expression",
        "not a name or a model field");
  return;
}

void Checker::check_stmt(const ast::Stmt& s, FnCtx& c) {
  using K = ast::Stmt::Kind;
  switch (s.kind) {
    case K::Let: {
      Type t = s.value ? check_expr(*s.value, c) : Type::error();
      if (s.annotation) {
        Type want = resolve_type(*s.annotation, c.axes, true);
        Binding b;
        for (const auto& [name, ax] : c.axes.names)
          if (ax.kind == Axis::Kind::Var) b.vars[ax.var] = ax;
        if (s.value) fit(want, t, b, s.value->span, "the value");
        if (!want.is_error()) t = want;
      }
      bind_targets(s.targets, t, s.value ? s.value->span : s.span, c, true);
      return;
    }
    case K::Assign:
    case K::AugAssign: {
      if (!s.target || !s.value) return;
      Type v = check_expr(*s.value, c);
      if (s.target->kind != ast::Expr::Kind::Tuple) {
        check_assign(s, *s.target, v, s.value->span, c);
        return;
      }
      // `h, c = cell(x, h, c)`: a tuple of as many values, each assigned
      // as if alone (the parser allows names and fields only).
      const auto places = ast::assigned_places(s);
      if (!v.is_error() &&
          (v.kind != TK::Tuple || v.elems.size() != places.size())) {
        error(Code::E0303,
              s.value->span,
              "this assigns " + std::to_string(places.size()) +
                  " values, but the value is " + v.str(),
              v.kind == TK::Tuple
                  ? "a " + std::to_string(v.elems.size()) + "-tuple"
                  : "not a tuple");
        return;
      }
      const bool literal = s.value->kind == ast::Expr::Kind::Tuple &&
                           s.value->elems.size() == places.size();
      for (size_t i = 0; i < places.size(); ++i) {
        if (places[i]->kind == ast::Expr::Kind::Name && places[i]->name == "_")
          continue;
        check_assign(s,
                     *places[i],
                     v.is_error() ? Type::error() : v.elems[i],
                     literal ? s.value->elems[i]->span : s.value->span,
                     c);
      }
      return;
    }
    case K::If: {
      // Once a branch's condition varies, that branch and every later one
      // run on some instances only.
      const size_t outer = c.varying_conds.size();
      for (const ast::IfBranch& br : s.branches) {
        if (br.cond) {
          Type ct = check_condition(*br.cond, c);
          if (c.in_spmd && !ct.varying.empty())
            c.varying_conds.push_back({br.cond->span, "if", ct.varying});
        }
        check_block(br.body, c);
      }
      c.varying_conds.resize(outer);
      return;
    }
    case K::For:
    case K::While:
      check_loop(s, c);
      return;
    case K::Break:
    case K::Continue:
      if (c.loop_depth == 0)
        error(Code::E0101,
              s.span,
              std::string("`") + (s.kind == K::Break ? "break" : "continue") +
                  "` outside a loop",
              "not in a for or while");
      return;
    case K::Return:
      check_return(s, c);
      return;
    case K::Expr:
      if (s.value) check_expr(*s.value, c);
      return;
  }
}

}  // namespace ss::check
