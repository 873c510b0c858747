// Calls: user fns (size variables bound per call), builtins (arguments
// matched to the op's params, then its shape rule), method syntax.
#include "interp/check/checker_impl.h"

namespace ss::check {

using diag::Code;
using EK = ast::Expr::Kind;

namespace {

std::string join_params(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void strip_splits(Type& t) {
  std::function<void(Axis&)> strip = [&](Axis& a) {
    a.split.clear();
    for (Axis& i : a.items) strip(i);
  };
  for (Axis& a : t.shape) strip(a);
  t.varying.clear();
  for (Type& e : t.elems) strip_splits(e);
}

}  // namespace

Type Checker::call_user(const FnInfo& fn,
                        const std::vector<CallArg>& args,
                        diag::Span at,
                        FnCtx* c,
                        std::vector<int>* mapping,
                        const FnInfo** chosen) {
  // Match arguments to parameters: positional first, then keywords.
  std::vector<const CallArg*> slot(fn.params.size(), nullptr);
  size_t pos = 0;
  bool bad = false;
  for (const CallArg& a : args) {
    if (a.keyword.empty()) {
      if (pos >= fn.params.size()) {
        error(Code::E0305,
              a.span,
              "`" + fn.name + "` takes " + std::to_string(fn.params.size()) +
                  " argument(s), but more were given",
              "extra argument");
        bad = true;
        continue;
      }
      slot[pos++] = &a;
      continue;
    }
    size_t k = 0;
    while (k < fn.params.size() && fn.params[k].name != a.keyword) ++k;
    if (k == fn.params.size()) {
      std::vector<std::string> names;
      for (const ParamInfo& p : fn.params) names.push_back(p.name);
      auto& d = error(Code::E0305,
                      a.span,
                      "`" + fn.name + "` has no parameter `" + a.keyword + "`",
                      "unknown keyword");
      std::string s = suggest(a.keyword, names);
      if (s.empty())
        d.help("its parameters are: " + join_params(names));
      else
        did_you_mean(d, s, first_bytes(a.span, a.keyword.size()));
      bad = true;
      continue;
    }
    if (slot[k]) {
      error(Code::E0305,
            a.span,
            "`" + a.keyword + "` of `" + fn.name + "` is given twice",
            "given again");
      bad = true;
      continue;
    }
    slot[k] = &a;
  }
  for (size_t k = 0; k < fn.params.size(); ++k)
    if (!slot[k] && !fn.params[k].has_default) {
      error(Code::E0305,
            at,
            "missing argument `" + fn.params[k].name + "` of `" + fn.name + "`",
            "`" + fn.name + "` needs " + std::to_string(fn.params.size()) +
                " argument(s)");
      bad = true;
    }
  if (bad) return Type::error();
  if (mapping) {
    mapping->assign(args.size(), -1);
    for (size_t k = 0; k < slot.size(); ++k)
      if (slot[k]) (*mapping)[slot[k] - args.data()] = static_cast<int>(k);
  }
  // An argument that is already wrong was reported: no cascade.
  for (const CallArg& a : args)
    if (a.type.is_error()) return Type::error();
  // Note [Dtype variables]: the instance the arguments' dtypes bind.
  const FnInfo* picked = pick_instance(fn, slot, at);
  if (!picked) return Type::error();
  // Note [Autocast]: inside an autocast instance every fn called runs as
  // its autocast instance too (torch.autocast is a region).
  if (c && c->autocast && !picked->autocast) {
    std::optional<std::string> n =
        autocast_instance(picked->name, *c->autocast, at);
    if (!n) return Type::error();
    picked = find_fn(*n);
  }
  if (chosen) *chosen = picked;
  if (picked != &fn) return call_user(*picked, args, at, c);
  // An autocast instance casts its float arguments to its declared dtypes.
  std::vector<CallArg> cast_args;
  if (fn.autocast) {
    cast_args.reserve(slot.size());
    for (size_t k = 0; k < slot.size(); ++k) {
      if (!slot[k]) continue;
      cast_args.push_back(*slot[k]);
      cast_args.back().type = as_declared(fn.params[k].type, slot[k]->type);
      slot[k] = &cast_args.back();
    }
  }
  ensure_checked(const_cast<FnInfo&>(fn));
  // Note [E2001 for inlined spmd fns], in stmts.cpp.
  (c && c->in_spmd ? const_cast<FnInfo&>(fn).called_from_spmd
                   : const_cast<FnInfo&>(fn).called_from_ordinary) = true;
  Binding b;
  bool per_instance = c && c->in_spmd && !fn.decl->is_spmd;
  b.inlined = c && c->in_spmd && fn.decl->is_spmd;
  b.blocks = per_instance || b.inlined;
  bool ok = true;
  for (size_t k = 0; k < fn.params.size(); ++k) {
    if (!slot[k]) continue;
    const ParamInfo& p = fn.params[k];
    ok &= fit(p.type,
              slot[k]->type,
              b,
              slot[k]->span,
              "argument `" + p.name + "` of `" + fn.name + "`");
    if (p.mut && c && slot[k]->expr &&
        (slot[k]->type.kind == TK::Model || slot[k]->type.kind == TK::Optim))
      require_mutable(*slot[k]->expr,
                      *c,
                      "passed to `mut " + p.name + "` of `" + fn.name + "`");
  }
  if (!ok) return Type::error();
  if (fn.decl->is_spmd && !(c && c->in_spmd)) {
    for (size_t k = 0; k < fn.params.size(); ++k)
      if (slot[k] && !check_blocks_divide(fn.params[k], *slot[k], b))
        return Type::error();
  }
  const Type& result = fn.inferred_logs ? *fn.inferred_logs : fn.result;
  Type r = substitute(result, b);
  // Called from ordinary code, an spmd fn's result is joined: whole.
  if (fn.decl->is_spmd && !(c && c->in_spmd)) strip_splits(r);
  if (fn.decl->is_spmd && c && c->in_spmd && r.kind == TK::Tensor) {
    // Inlined, its result keeps the body's varying set (spmd.md): what its
    // returns vary over, plus what an argument varies over beyond its
    // parameter's splits (the body was checked without those; they may
    // only be over-counted, when the body reduces over them).
    std::set<std::string> v = fn.result_varying;
    for (size_t k = 0; k < fn.params.size(); ++k) {
      if (!slot[k]) continue;
      std::set<std::string> own = split_axes(fn.params[k].type);
      for (const std::string& a : slot[k]->type.varying)
        if (!own.count(a)) v.insert(a);
    }
    r.varying.assign(v.begin(), v.end());
  }
  if (per_instance && r.kind == TK::Tensor) {
    // Its result varies over the union of its arguments' sets.
    std::set<std::string> v;
    for (const CallArg& a : args)
      v.insert(a.type.varying.begin(), a.type.varying.end());
    r.varying.assign(v.begin(), v.end());
  }
  // E0310's taint: through an extern without a VJP, or passed through.
  if (r.kind == TK::Tensor && types::is_float(r.dtype)) {
    r.no_vjp = fn.result_no_vjp;
    if (fn.decl->is_extern) {
      const std::string& t = fn.decl->extern_target;
      const ops::OpDef* op =
          t.rfind("nn.", 0) == 0 ? ops::find_op(t.substr(3)) : nullptr;
      if (op && !op->differentiable) r.no_vjp = fn.name;
    }
    for (const CallArg& a : args)
      if (r.no_vjp.empty()) r.no_vjp = a.type.no_vjp;
  }
  return r;
}

Type Checker::call_fn_value(const Type& fn,
                            const std::vector<Type>& args,
                            diag::Span at,
                            FnCtx* c,
                            const ast::Expr* named) {
  if (fn.is_error()) return fn;
  if (fn.kind != TK::Fn || fn.fn_name.empty()) {
    error(Code::E0305,
          at,
          fn.kind == TK::Fn
              ? std::string("the function here must be known before the "
                            "program runs: a fn's name, remat(f), or a local "
                            "bound to one")
              : "expected a function, found " + fn.str(),
          "not a statically known function");
    return Type::error();
  }
  if (const FnInfo* f = find_fn(fn.fn_name)) {
    std::vector<CallArg> cargs;
    for (const Type& t : args) cargs.push_back({"", t, at, nullptr});
    const FnInfo* chosen = f;
    Type r = call_user(*f, cargs, at, c, nullptr, &chosen);
    if (c && c->fn) c->fn->callees.insert(chosen->name);
    if (chosen != f && named) {
      ExprInfo& in = prog_->exprs_[named];
      in.type.fn_name = chosen->name;
      if (in.resolution.kind == Resolution::Kind::Fn) {
        in.resolution.fn = chosen;
        in.resolution.name = chosen->name;
      }
    }
    return r;
  }
  if (const ops::OpDef* op = ops::find_op(fn.fn_name)) {
    std::vector<RuleArg> rargs;
    for (const Type& t : args) rargs.push_back({true, t, at, nullptr, {}});
    return apply_rule(*op, std::move(rargs), at, c);
  }
  return Type::error();
}

Type Checker::call_builtin(const ops::OpDef& op,
                           const ast::Expr& call,
                           const ast::Expr* base,
                           FnCtx& c) {
  // Patterns: rearrange / split / einsum.
  if (call.pattern) {
    if (op.intrinsic == ops::Intrinsic::None) {
      error(Code::E0306,
            call.pattern->span,
            std::string("`") + op.name + "` takes no pattern",
            "patterns are for rearrange, split and einsum");
      return Type::error();
    }
    std::vector<Type> operands;
    std::vector<diag::Span> spans;
    if (base) {
      operands.push_back(check_expr(*base, c));
      spans.push_back(base->span);
    }
    for (const ast::Arg& a : call.args) {
      if (!a.keyword.empty()) {
        error(Code::E0305,
              a.span,
              std::string("`") + op.name + "` takes no keyword `" + a.keyword +
                  "`",
              "unknown keyword");
        continue;
      }
      operands.push_back(check_expr(*a.value, c));
      spans.push_back(a.value->span);
    }
    // Note [Autocast]: einsum in an autocast instance runs in its dtype.
    if (c.autocast)
      if (std::optional<types::DType> to = autocast_target(op, *c.autocast)) {
        for (Type& t : operands) autocast_type(t, *to);
        info_for(&call).autocast = to;
      }
    return check_pattern_call(op.intrinsic, call, operands, spans, c);
  }
  if (op.intrinsic == ops::Intrinsic::Rearrange ||
      op.intrinsic == ops::Intrinsic::Einsum) {
    error(Code::E0306,
          call.span,
          std::string("`") + op.name + "` needs a pattern with `->`",
          "no pattern")
        .help(op.intrinsic == ops::Intrinsic::Einsum
                  ? "einsum(a, b, i j, j k -> i k)"
                  : "rearrange(x, b H n Dh -> b n (H Dh))");
    return Type::error();
  }
  // Match arguments to params.
  const size_t np = op.params.size();
  std::vector<RuleArg> slots(np);
  std::vector<RuleArg> extras;
  std::vector<std::pair<const ast::Expr*, diag::Span>> given;  // (expr, span)
  std::vector<std::string> keywords;
  if (base) {
    given.push_back({base, base->span});
    keywords.push_back("");
  }
  for (const ast::Arg& a : call.args) {
    given.push_back({a.value.get(), a.span});
    keywords.push_back(a.keyword);
  }
  size_t pos = 0;
  bool bad = false;
  auto names = [&]() {
    std::vector<std::string> v;
    for (const ops::ParamSpec& p : op.params) v.push_back(p.name);
    return v;
  };
  std::vector<size_t> which(given.size(), SIZE_MAX);  // param index per arg
  for (size_t g = 0; g < given.size(); ++g) {
    if (!given[g].first) continue;
    const std::string& kw = keywords[g];
    if (kw.empty()) {
      // Positional arguments fill required-first order as written.
      while (pos < np && (slots[pos].present || op.params[pos].keyword_only))
        ++pos;
      if (pos < np) {
        slots[pos].present = true;
        which[g] = pos++;
      } else if (!op.variadic) {
        error(Code::E0305,
              given[g].second,
              std::string("`") + op.name + "` takes " + std::to_string(np) +
                  " argument(s), but more were given",
              "extra argument")
            .help(std::string("its parameters are: ") + join_params(names()));
        bad = true;
      }
      continue;
    }
    size_t k = 0;
    while (k < np && kw != op.params[k].name) ++k;
    if (k == np) {
      if (op.any_keywords) continue;
      auto& d =
          error(Code::E0305,
                given[g].second,
                std::string("`") + op.name + "` has no parameter `" + kw + "`",
                "unknown keyword");
      std::string s = suggest(kw, names());
      if (s.empty())
        d.help("its parameters are: " + join_params(names()));
      else
        did_you_mean(d, s, first_bytes(given[g].second, kw.size()));
      bad = true;
      continue;
    }
    if (slots[k].present) {
      error(Code::E0305,
            given[g].second,
            "`" + kw + "` of `" + std::string(op.name) + "` is given twice",
            "given again");
      bad = true;
      continue;
    }
    slots[k].present = true;
    which[g] = k;
  }
  for (size_t k = 0; k < np; ++k)
    if (!slots[k].present && op.params[k].required) {
      error(Code::E0305,
            call.span,
            std::string("missing argument `") + op.params[k].name + "` of `" +
                op.name + "`",
            std::string("`") + op.name + "` takes (" + join_params(names()) +
                ")");
      bad = true;
    }
  // Type every value argument, even after an arity error, so errors inside
  // them are reported too.
  for (size_t g = 0; g < given.size(); ++g) {
    const ast::Expr* ex = given[g].first;
    if (!ex) continue;
    size_t k = which[g];
    if (k == SIZE_MAX) {
      RuleArg extra{true, check_expr(*ex, c), ex->span, ex, keywords[g]};
      extras.push_back(std::move(extra));
      continue;
    }
    RuleArg& s = slots[k];
    s.expr = ex;
    s.span = ex->span;
    switch (op.params[k].kind) {
      case ops::ParamKind::Value:
        s.type = check_expr(*ex, c);
        break;
      case ops::ParamKind::TypeArg:
        // Typed lazily by the rule (ctx.type_arg); names still resolve.
        if (ex->kind == EK::Name || ex->kind == EK::TypeLit ||
            ex->kind == EK::List)
          s.type = Type::error();
        else
          s.type = check_expr(*ex, c);
        break;
      case ops::ParamKind::Axis:
      case ops::ParamKind::Axes:
        s.type = Type::error();
        break;
    }
    if (op.params[k].mutates &&
        (s.type.kind == TK::Model || s.type.kind == TK::Optim))
      require_mutable(*ex, c, std::string("passed to `") + op.name + "`");
  }
  if (bad) return Type::error();
  std::string name = op.name;
  std::string diff_fn =
      !slots.empty() && slots[0].present && slots[0].type.kind == TK::Fn
          ? slots[0].type.fn_name
          : "";
  {
    std::vector<int>& rec = prog_->exprs_[&call].arg_params;
    rec.clear();
    for (size_t k : which)
      rec.push_back(k == SIZE_MAX ? -1 : static_cast<int>(k));
  }
  Type t =
      apply_rule(op, std::move(slots), call.span, &c, std::move(extras), &call);
  if (op.device.fn_arg == ops::FnArg::Differentiates && !t.is_error())
    if (const FnInfo* f = find_fn(diff_fn); f && !f->result_no_vjp.empty()) {
      const FnInfo* ext = find_fn(f->result_no_vjp);
      auto& d = error(Code::E0310,
                      call.span,
                      "`" + diff_fn +
                          "` is differentiated here, but its "
                          "result is computed through the extern fn `" +
                          f->result_no_vjp + "`, which registered no VJP",
                      "gradient through `" + f->result_no_vjp + "`");
      if (ext)
        d.note("`" + ext->name + "` is declared here", ext->decl->name_span);
      d.help(
          "wrap that part in stop_grad(...) (a straight-through "
          "estimator) or register a VJP for it");
    }
  return t;
}

Type Checker::axis_arg(const ast::Expr& e, FnCtx& c) {
  std::optional<Axis> a;
  if (e.kind == EK::AxisRef && e.axis) {
    a = resolve_axis(*e.axis, c.axes, false);
  } else if (e.kind == EK::Name) {
    a = lookup_axis(e.name, c.axes);
    if (!a)
      error(Code::E0201,
            e.span,
            "unknown axis `" + e.name + "`",
            "not a dim or an axis in scope");
  } else {
    error(Code::E0303, e.span, "expected an axis name here", "not an axis");
  }
  if (!a) return record(e, Type::error());
  Type t = Type::of(TK::AxisArg);
  t.shape = {*a};
  return record(e, t);
}

Type Checker::check_call(const ast::Expr& e, FnCtx& c) {
  if (!e.callee) return record(e, Type::error());
  const ast::Expr& callee = *e.callee;
  Resolution r;
  auto user_args = [&](const FnInfo& f, const ast::Expr* base) {
    std::vector<CallArg> args;
    if (base) args.push_back({"", check_expr(*base, c), base->span, base});
    size_t pos = base ? 1 : 0;
    for (const ast::Arg& a : e.args) {
      // An `Axis[d]` parameter takes an axis by name, not a value.
      const ParamInfo* p = nullptr;
      if (a.keyword.empty()) {
        if (pos < f.params.size()) p = &f.params[pos];
        ++pos;
      } else {
        for (const ParamInfo& q : f.params)
          if (q.name == a.keyword) p = &q;
      }
      Type t = p && p->type.kind == TK::AxisArg ? axis_arg(*a.value, c)
                                                : check_expr(*a.value, c);
      args.push_back({a.keyword, t, a.span, a.value.get()});
    }
    if (e.pattern)
      error(Code::E0306,
            e.pattern->span,
            "only rearrange, split and einsum take a pattern",
            "pattern given to a fn");
    return args;
  };
  auto call_named = [&](const std::string& name,
                        const ast::Expr* base,
                        diag::Span name_span) -> Type {
    if (const FnInfo* f = find_fn(name)) {
      r.kind = Resolution::Kind::Fn;
      auto args = user_args(*f, base);
      std::vector<int> mapping;
      const FnInfo* chosen = f;
      Type t = call_user(*f, args, e.span, &c, &mapping, &chosen);
      r.fn = chosen;  // an instance of a generic fn: Note [Dtype variables]
      r.name = chosen->name;
      if (c.fn) c.fn->callees.insert(chosen->name);
      prog_->exprs_[&e].arg_params = std::move(mapping);
      return record(e, t, r);
    }
    if (const ops::OpDef* op = ops::find_op(name)) {
      r.kind = Resolution::Kind::Builtin;
      r.op = op;
      r.name = name;
      // Note [A draw's site]: rand(T, seed=) and randn(T, seed=) draw
      // (seed, site, element index), and the site is the fn's name and
      // the call's position among that fn's draws in source order
      // ("main#0", "init_w#2"): what an edit that changes nothing leaves
      // as it was. The file's name and the call's line were the site
      // before, so a renamed copy of the file, or a comment line above
      // the call, drew other values. A fn's draws are the same on any
      // device count, and in the repl a loaded file's fns draw what `ss
      // run` draws; code typed at the prompt counts from 0 in each entry.
      if (op->draws_at_site)
        prog_->exprs_[&e].draw_site =
            (c.fn ? c.fn->source_name() : std::string("<prompt>")) + "#" +
            std::to_string(c.draws++);
      return record(e, call_builtin(*op, e, base, c), r);
    }
    std::vector<std::string> cands = value_names(&c);
    auto& d = error(Code::E0201,
                    name_span,
                    base ? "no fn or builtin `" + name +
                               "` to call as a "
                               "method"
                         : "unknown function `" + name + "`",
                    "not a fn or builtin");
    std::string s = suggest(name, cands);
    if (!s.empty()) did_you_mean(d, s, name_span);
    if (base) check_expr(*base, c);
    for (const ast::Arg& a : e.args) check_expr(*a.value, c);
    return record(e, Type::error());
  };

  if (callee.kind == EK::Field && callee.lhs) {
    // `x.f(...)` is `f(x, ...)`, unless x is a module-like namespace.
    return call_named(callee.name, callee.lhs.get(), callee.name_span);
  }
  if (callee.kind == EK::Name) {
    if (Local* l = c.values.find(callee.name)) {
      // A local bound to a function value: a direct call of that fn.
      if (l->type.kind == TK::Fn && !l->type.fn_name.empty())
        return call_named(l->type.fn_name, nullptr, callee.span);
      if (!l->type.is_error())
        error(Code::E0303,
              callee.span,
              "`" + callee.name + "` is " + l->type.str() + ", not a function",
              "called here");
      for (const ast::Arg& a : e.args) check_expr(*a.value, c);
      return record(e, Type::error());
    }
    if (prog_->model(callee.name) || prog_->record(callee.name)) {
      error(Code::E0303,
            callee.span,
            "`" + callee.name + "` is a type and cannot be called",
            "not a function")
          .help(prog_->model(callee.name)
                    ? callee.name + ".init(seed=0) makes a model"
                    : "records come from datasets");
      return record(e, Type::error());
    }
    return call_named(callee.name, nullptr, callee.span);
  }
  Type ft = check_expr(callee, c);
  if (ft.kind == TK::Fn && !ft.fn_name.empty())
    return call_named(ft.fn_name, nullptr, callee.span);
  if (!ft.is_error())
    error(Code::E0303,
          callee.span,
          ft.str() + " is not a function",
          "called here");
  return record(e, Type::error());
}

namespace {
// `x`, or `(x y)` for a split over several mesh axes.
std::string mesh_axes_text(const types::MeshSplit& split) {
  std::string s;
  for (const std::string& m : split) s += (s.empty() ? "" : " ") + m;
  return split.size() > 1 ? "(" + s + ")" : s;
}
}  // namespace

// E2003: called from ordinary code, an spmd fn cuts each whole argument
// into blocks by its parameter's type (spmd.md): an axis split over mesh
// axes must be a multiple of their sizes' product, every block the same.
// A model spec splits each field's first axis (`m: Net/x`): every such
// field's whole size must divide too, or each instance would get a cut
// block (a [6 F] field over x = 4 ran as four blocks of 1).
bool Checker::check_model_blocks_divide(const ParamInfo& p,
                                        const CallArg& arg,
                                        const Type& pm,
                                        const Type& am,
                                        const std::string& path) {
  if (pm.model != am.model || !pm.model) return true;
  for (const types::FieldInfo& f : pm.model->fields) {
    Type pf = types::model_field_type(pm, f);
    Type af = types::model_field_type(am, f);
    const std::string at = path + "." + f.name;
    if (pf.kind == TK::Model && af.kind == TK::Model) {
      if (!check_model_blocks_divide(p, arg, pf, af, at)) return false;
      continue;
    }
    if (pf.kind != TK::Tensor || pf.shape.empty() || af.shape.empty() ||
        pf.shape[0].split.empty())
      continue;
    const int64_t blocks = pf.shape[0].split.ways().value_or(1);
    const std::string over = mesh_axes_text(pf.shape[0].split);
    std::optional<int64_t> n = af.shape[0].whole_size();
    if (!n || blocks <= 1 || *n % blocks == 0) continue;
    error(Code::E2003,
          arg.span,
          "field " + at + " is split over " + over + " (" +
              std::to_string(blocks) + "), but its first axis is " +
              af.shape[0].str_sized() + ", not a multiple of " +
              std::to_string(blocks),
          arg.type.str())
        .note("`" + text(p.decl->span) + "` is declared here", p.decl->span);
    return false;
  }
  return true;
}

bool Checker::check_blocks_divide(const ParamInfo& p,
                                  const CallArg& arg,
                                  const Binding& b) {
  if (p.type.kind == TK::Model && arg.type.kind == TK::Model && p.decl)
    return check_model_blocks_divide(p, arg, p.type, arg.type, p.name);
  if (p.type.kind != TK::Tensor || arg.type.kind != TK::Tensor) return true;
  for (const Axis& ax : p.type.shape) {
    if (ax.split.empty()) continue;
    const int64_t blocks = ax.split.ways().value_or(1);
    const std::string over = mesh_axes_text(ax.split);
    // The whole axis the argument gave: a size variable's binding, or the
    // parameter's own dim or literal.
    Axis whole = ax;
    if (ax.kind == Axis::Kind::Var)
      if (auto it = b.vars.find(ax.var); it != b.vars.end()) whole = it->second;
    std::optional<int64_t> n = whole.whole_size();
    if (!n || blocks <= 1 || *n % blocks == 0) continue;
    Axis named = ax;
    named.split.clear();
    auto& d =
        error(Code::E2003,
              arg.span,
              "axis " + named.str() + " of `" + p.name + "` is split over " +
                  over + " (" + std::to_string(blocks) + "), but it is " +
                  (whole.kind == Axis::Kind::Dim
                       ? whole.name + " = " + std::to_string(*n)
                       : std::to_string(*n)) +
                  ", not a multiple of " + std::to_string(blocks),
              arg.type.str());
    if (p.decl)
      d.note("`" + text(p.decl->span) + "` is declared here", p.decl->span);
    return false;
  }
  return true;
}

}  // namespace ss::check
