// Several devices, statically (devices.md; seeds/several-devices.md):
//
//  1. Placement. Every fn is placed in the controller, on the workers, or
//     anywhere, from what it does and what it calls (FnInfo::placement),
//     on any device list: the evaluator and Train's call counter read it.
//  2. The batch axis. A `[b] R` param's leading axis, a loop batch's, and
//     every axis that calls bind to one are the batch axis of their fn
//     (FnInfo::batch_vars); a value whose type has one is split across the
//     devices (ExprInfo::split). The split follows the data through calls,
//     to a fixpoint.
//  3. Checks, against the device list in effect, reported only with more
//     than one device: E1803 (device work in a controller fn; also with a
//     mesh), and, without a mesh, E1804 (a fn called both split and whole),
//     E1802 (the batch axis fixed, grouped, doubled or used as a number),
//     E1801 (an operation across the batch axis with no distributed
//     lowering, a tensor condition computed from split data) and E1901
//     (a host call given split data). Lowered operations across the batch
//     axis are marked on their ExprInfo (allreduce) for `ss explain`.
#include <algorithm>
#include <functional>

#include "interp/check/checker_impl.h"

namespace ss::check {

const char* placement_words(FnInfo::Placement p) {
  switch (p) {
    case FnInfo::Placement::Controller:
      return "in the controller";
    case FnInfo::Placement::Workers:
      return "on the workers";
    case FnInfo::Placement::Anywhere:
      return "anywhere";
  }
  return "anywhere";
}

namespace {

using diag::Code;
using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;
using Placement = FnInfo::Placement;
using Vars = std::set<uint32_t>;

// ------------------------------------------------------------ the batch axis

bool axis_is(const Axis& a, const Vars& v) {
  return a.kind == Axis::Kind::Var && v.count(a.var);
}

// How many times batch axes occur in [a], groups included.
int axis_count(const Axis& a, const Vars& v) {
  int n = axis_is(a, v) ? 1 : 0;
  for (const Axis& i : a.items) n += axis_count(i, v);
  return n;
}

// The first batch axis in [a], groups included.
const Axis* axis_find(const Axis& a, const Vars& v) {
  if (axis_is(a, v)) return &a;
  for (const Axis& i : a.items)
    if (const Axis* f = axis_find(i, v)) return f;
  return nullptr;
}

const Axis* find_batch(const Type& t, const Vars& v) {
  if (v.empty()) return nullptr;
  switch (t.kind) {
    case TK::Tensor:
    case TK::Batch:
      for (const Axis& a : t.shape)
        if (const Axis* f = axis_find(a, v)) return f;
      return nullptr;
    case TK::Tuple:
    case TK::List:
      for (const Type& e : t.elems)
        if (const Axis* f = find_batch(e, v)) return f;
      return nullptr;
    case TK::Logs:
      for (const auto& [_, ft] : t.fields)
        if (const Axis* f = find_batch(ft, v)) return f;
      return nullptr;
    default:
      return nullptr;
  }
}

bool has_batch(const Type& t, const Vars& v) {
  return find_batch(t, v) != nullptr;
}

// The batch axis inside a group of a tensor's shape: `(b n)`.
const Axis* grouped_batch(const Type& t, const Vars& v) {
  if (t.kind != TK::Tensor && t.kind != TK::Batch) return nullptr;
  for (const Axis& a : t.shape)
    if (a.kind == Axis::Kind::Group)
      if (const Axis* f = axis_find(a, v)) return f;
  return nullptr;
}

int batch_count(const Type& t, const Vars& v) {
  if (t.kind != TK::Tensor && t.kind != TK::Batch) return 0;
  int n = 0;
  for (const Axis& a : t.shape) n += axis_count(a, v);
  return n;
}

std::string axis_name(const Axis& a) {
  if (!a.label.empty()) return a.label;
  return a.name.empty() ? a.str() : a.name;
}

// ------------------------------------------------------------ walking

// Every sub-expression of [e], [e] last (post-order).
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

// The direct sub-expressions of [e].
std::vector<const ast::Expr*> children(const ast::Expr& e) {
  std::vector<const ast::Expr*> v;
  auto sub = [&](const ast::ExprPtr& x) {
    if (x) v.push_back(x.get());
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
  return v;
}

// The arguments of a call as the checker matched them: a method's receiver
// first, then the arguments as written (ExprInfo::arg_params's order).
std::vector<const ast::Expr*> given_args(const ast::Expr& call) {
  std::vector<const ast::Expr*> g;
  if (call.callee && call.callee->kind == EK::Field && call.callee->lhs)
    g.push_back(call.callee->lhs.get());
  for (const ast::Arg& a : call.args) g.push_back(a.value.get());
  return g;
}

// The argument that fills param [k], or null.
const ast::Expr* param_arg(const ast::Expr& call,
                           const ExprInfo& info,
                           int k) {
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

bool is_reduction(const std::string& n) {
  static const std::set<std::string> kNames = {
      "sum",  "mean",      "max",  "min",    "prod",   "std", "var",
      "logsumexp", "norm", "argmax", "argmin", "any", "all", "reduce"};
  return kNames.count(n) > 0;
}

bool is_along_op(const std::string& n) {
  // Reductions say "over"; ops along an axis say "along".
  return !is_reduction(n);
}

// Shape ops that index or move data along their over= axis: across the
// batch axis they have no lowering (library.md: indexing or slicing it).
bool is_indexing_op(const std::string& n) {
  return n == "take" || n == "put" || n == "roll" || n == "pad" ||
         n == "concat";
}

const char* kLowered =
    "sum, mean, cross_entropy, mse, batch_norm and reduce(with=sum) are "
    "lowered to an all-reduce";

// ------------------------------------------------------------ facts

struct CallSite {
  FnInfo* caller = nullptr;
  FnInfo* callee = nullptr;
  const ast::Expr* call = nullptr;
  /// callee param -> the argument given for it (null: a batch that a
  /// builtin makes, as mean_logs's, always split).
  std::vector<std::pair<size_t, const ast::Expr*>> args;
  std::pair<size_t, uint32_t> order;  // (module, offset)
};

struct Reason {
  std::string why;
  diag::Span at;
};

struct Facts {
  std::vector<Reason> host;        // in the body
  std::vector<Reason> host_param;  // takes a dataset or a sink
  std::vector<Reason> device_work; // what, where
  bool uses_device = false;
  std::vector<size_t> calls;       // indices into the call sites
};

bool device_kind(const Type& t) {
  switch (t.kind) {
    case TK::Tensor:
    case TK::Model:
    case TK::Batch:
    case TK::Grads:
    case TK::Optim:
      return true;
    case TK::Tuple:
      for (const Type& e : t.elems)
        if (device_kind(e)) return true;
      return false;
    default:
      return false;
  }
}

}  // namespace

void Checker::check_devices() {
  Program& P = *prog_;
  const size_t ndev = P.devices_.count();
  const bool several = ndev > 1;
  const bool mesh = !P.mesh_.empty();
  const std::string N = std::to_string(ndev);

  // Source order: modules in order (stdlib, imports, main), then offset.
  std::map<uint32_t, size_t> module_of;
  for (size_t i = 0; i < P.modules_.size(); ++i)
    module_of[P.modules_[i].file] = i;
  auto order_of = [&](diag::Span s) {
    auto it = module_of.find(s.file);
    return std::make_pair(it == module_of.end() ? SIZE_MAX : it->second,
                          s.begin);
  };

  // Fns in source order.
  std::vector<FnInfo*> fns;
  for (const ast::Module& m : P.modules_)
    for (const ast::FnDecl& d : m.fns) {
      auto it = P.fns_.find(d.name);
      if (it != P.fns_.end() && it->second.decl == &d)
        fns.push_back(&it->second);
    }

  // ---- 1. Facts of each fn body.
  std::vector<CallSite> sites;
  std::map<const FnInfo*, Facts> facts;
  auto type_of = [&](const ast::Expr* e) -> const Type& {
    return P.type_of(e);
  };
  for (FnInfo* fn : fns) {
    Facts& f = facts[fn];
    const ast::FnDecl& d = *fn->decl;
    for (size_t k = 0; k < fn->params.size(); ++k) {
      const ParamInfo& p = fn->params[k];
      diag::Span at = p.decl && p.decl->type ? p.decl->type->span
                                             : d.name_span;
      if (p.type.kind == TK::Dataset || p.type.kind == TK::Batches)
        f.host_param.push_back({"it takes a dataset", at});
      else if (p.type.kind == TK::Sink)
        f.host_param.push_back({"it takes a sink", at});
      if (device_kind(p.type)) f.uses_device = true;
    }
    if (d.is_extern) continue;  // works on each example: see placement
    auto on_expr = [&](const ast::Expr& e) {
      const ExprInfo* info = P.info(&e);
      if (!info) return;
      if (device_kind(info->type)) f.uses_device = true;
      if (e.kind == EK::Field && e.lhs &&
          type_of(e.lhs.get()).kind == TK::Logs &&
          info->type.kind == TK::Tensor)
        f.host.push_back({"it reads `" + text(e.span) +
                              "` as a host number",
                          e.span});
      if (e.kind != EK::Call) return;
      const Resolution& r = info->resolution;
      std::vector<const ast::Expr*> given = given_args(e);
      if (r.kind == Resolution::Kind::Fn && r.fn) {
        FnInfo* callee = &P.fns_.at(r.fn->name);
        CallSite cs;
        cs.caller = fn;
        cs.callee = callee;
        cs.call = &e;
        cs.order = order_of(e.span);
        for (size_t g = 0; g < given.size() && g < info->arg_params.size();
             ++g)
          if (info->arg_params[g] >= 0)
            cs.args.push_back({static_cast<size_t>(info->arg_params[g]),
                               given[g]});
        f.calls.push_back(sites.size());
        sites.push_back(std::move(cs));
        return;
      }
      if (r.kind != Resolution::Kind::Builtin || !r.op) return;
      const ops::OpDef& op = *r.op;
      const std::string n = op.name;
      if (n == "value_and_grad" || n == "grad" || n == "update")
        f.device_work.push_back({"`" + n + "`", e.span});
      // A fn value given to a builtin is called from here.
      if ((n == "value_and_grad" || n == "grad" || n == "mean_logs") &&
          !given.empty()) {
        const Type& ft = type_of(given[0]);
        auto it = ft.kind == TK::Fn ? P.fns_.find(ft.fn_name)
                                    : P.fns_.end();
        if (it != P.fns_.end()) {
          CallSite cs;
          cs.caller = fn;
          cs.callee = &it->second;
          cs.call = &e;
          cs.order = order_of(e.span);
          if (n == "mean_logs") {
            // f(m, batch) for each batch of the third argument.
            if (const ast::Expr* m = param_arg(e, *info, 1))
              cs.args.push_back({0, m});
            cs.args.push_back({1, nullptr});
          } else {
            // f(m, args...): m, then the extra positional arguments.
            size_t off = given.size() - e.args.size();  // a receiver
            size_t k = 0;
            for (size_t g = 0; g < given.size() && g < info->arg_params.size();
                 ++g) {
              int pk = info->arg_params[g];
              bool positional = g < off || e.args[g - off].keyword.empty();
              if (pk == 1 || (pk == -1 && positional))
                cs.args.push_back({k++, given[g]});
            }
          }
          f.calls.push_back(sites.size());
          sites.push_back(std::move(cs));
        }
      }
      // Host calls.
      std::string why;
      if (n == "print") why = "it prints";
      else if (n == "save") why = "it saves a checkpoint";
      else if (n == "load" || n == "load_into") why = "it loads a checkpoint";
      else if (n == "write") why = "it writes to a sink";
      else if (n == "stdout" || n == "csv" || n == "jsonl" || n == "tee")
        why = "it makes a sink";
      else if (n == "dataset" || n == "mnist" || n == "synthetic_digits")
        why = "it makes a dataset";
      else if (n == "mean_logs") why = "it loops over a dataset";
      else if (n == "progress") why = "it shows progress";
      else if (n == "collective_timeout") why = "it sets the collective timeout";
      else if ((n == "float" || n == "int" || n == "str") && !given.empty() &&
               type_of(given[0]).kind == TK::Tensor)
        why = "it reads a value as a host number (`" + n + "`)";
      if (why.empty())
        for (const ast::Expr* g : given) {
          TK k = type_of(g).kind;
          if (k == TK::Dataset || k == TK::Batches) why = "it uses a dataset";
          else if (k == TK::Sink) why = "it uses a sink";
          if (!why.empty()) break;
        }
      if (!why.empty()) f.host.push_back({why, e.span});
    };
    std::function<void(const ast::Block&)> walk =
        [&](const ast::Block& b) {
          for (const ast::StmtPtr& sp : b) {
            if (!sp) continue;
            const ast::Stmt& s = *sp;
            if (s.kind == SK::For && s.iter) {
              TK k = type_of(s.iter.get()).kind;
              if (k == TK::Batches || k == TK::Dataset)
                f.host.push_back({"it loops over a dataset", s.span});
            }
            if ((s.kind == SK::Assign || s.kind == SK::AugAssign) &&
                s.target && s.target->kind == EK::Field && s.target->lhs &&
                type_of(s.target->lhs.get()).kind == TK::Model)
              f.device_work.push_back(
                  {"changing the model field `" + text(s.target->span) + "`",
                   s.span});
            for (const ast::ExprPtr* x :
                 {&s.value, &s.target, &s.iter, &s.cond})
              if (*x) each_expr(**x, on_expr);
            for (const ast::IfBranch& br : s.branches) {
              if (br.cond) each_expr(*br.cond, on_expr);
              walk(br.body);
            }
            walk(s.body);
          }
        };
    for (const ast::Param& p : d.params)
      if (p.default_value) each_expr(*p.default_value, on_expr);
    if (d.expr_body) each_expr(*d.expr_body, on_expr);
    walk(d.body);
    auto by_place = [](const Reason& a, const Reason& b) {
      return a.at.begin < b.at.begin;
    };
    std::stable_sort(f.host.begin(), f.host.end(), by_place);
    std::stable_sort(f.device_work.begin(), f.device_work.end(), by_place);
  }

  // ---- 2. Placement: the controller wins, through calls; then workers.
  for (FnInfo* fn : fns) {
    Facts& f = facts[fn];
    fn->placement = Placement::Anywhere;
    fn->placement_reason.clear();
    fn->placement_at.reset();
    const Reason* r = !f.host.empty()        ? &f.host.front()
                      : !f.host_param.empty() ? &f.host_param.front()
                                              : nullptr;
    if (r) {
      fn->placement = Placement::Controller;
      fn->placement_reason = r->why;
      fn->placement_at = r->at;
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (FnInfo* fn : fns) {
      if (fn->placement == Placement::Controller) continue;
      Facts& f = facts[fn];
      // The first call (in source order) of a fn that runs there.
      const CallSite* first = nullptr;
      for (size_t i : f.calls) {
        const CallSite& cs = sites[i];
        if (cs.callee->placement == Placement::Controller &&
            (!first || cs.order < first->order))
          first = &cs;
      }
      if (!first) continue;
      fn->placement = Placement::Controller;
      fn->placement_reason = "it calls `" + first->callee->name +
                             "`, which runs in the controller";
      fn->placement_at = first->call->span;
      changed = true;
    }
  }
  for (FnInfo* fn : fns)
    if (fn->placement != Placement::Controller && fn->decl->is_extern) {
      bool tensors = device_kind(fn->result);
      for (const ParamInfo& p : fn->params) tensors |= device_kind(p.type);
      if (tensors) fn->placement = Placement::Workers;
    }
  for (FnInfo* fn : fns)
    if (fn->placement == Placement::Anywhere && facts[fn].uses_device)
      fn->placement = Placement::Workers;
  for (bool changed = true; changed;) {
    changed = false;
    for (FnInfo* fn : fns) {
      if (fn->placement != Placement::Anywhere) continue;
      for (size_t i : facts[fn].calls)
        if (sites[i].callee->placement == Placement::Workers) {
          fn->placement = Placement::Workers;
          changed = true;
          break;
        }
    }
  }

  // ---- E1803: device work in a controller fn (several devices; a mesh
  // program places its fns too).
  if (several)
    for (FnInfo* fn : fns) {
      if (fn->placement != Placement::Controller || fn->is_stdlib) continue;
      for (const Reason& w : facts[fn].device_work) {
        auto& d = error(Code::E1803, w.at,
                        w.why + " is device work, but `" + fn->name +
                            "` runs in the controller",
                        "device work");
        d.note("`" + fn->name + "` runs in the controller because " +
                   fn->placement_reason,
               fn->placement_at);
        d.help("move the step into a fn of its own (as `train_step`) and "
               "call it from the loop");
      }
    }

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
    if (fn->placement != Placement::Controller || fn->decl->is_extern)
      return;
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
        if (s.kind == SK::Assign && s.target && s.target->kind == EK::Name &&
            s.value && is_split(fn, *s.value))
          out.insert(s.target->name);
        for (const ast::IfBranch& br : s.branches) walk(br.body);
        walk(s.body);
      }
    };
    walk(fn->decl->body);
  };
  // Is the argument of [cs] split, in the caller's terms?
  auto arg_split = [&](const CallSite& cs, const ast::Expr* a) {
    return !a || is_split(cs.caller, *a);
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
                             a.shape[a.shape.size() - tail + i], from, to);
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
          changed |= map_type(cs.callee->params[k].type, type_of(a),
                              cs.caller->batch_vars, cs.callee->batch_vars);
      }
  }

  // Record the layout of every value (for `ss explain`) and, below, check.
  for (FnInfo* fn : fns) {
    if (fn->decl->is_extern) continue;
    auto mark = [&](const ast::Expr& e) {
      ExprInfo& in = info_for(&e);
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
    std::stable_sort(ordered.begin(), ordered.end(),
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
              const Axis* ax = a ? find_batch(type_of(a),
                                              cs->caller->batch_vars)
                                 : nullptr;
              label = (a ? type_of(a).str() + ", " : std::string()) +
                      "split along " + (ax ? axis_name(*ax) : "the batch");
            } else {
              label = "whole: it has no batch axis";
            }
            auto& d = error(Code::E1804, at, msg, label);
            d.note("`" + p.name + "` is " +
                       (first_split ? "split" : "whole") + " in this call",
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
      diag::Span at = p.decl && p.decl->type ? p.decl->type->span
                                             : fn->decl->name_span;
      if (a.kind != Axis::Kind::Var) {
        error(Code::E1802, at,
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
        error(Code::E1802, at,
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

  // ---- E1801, E1802, E1901 in the bodies.
  for (FnInfo* fn : fns) {
    if (fn->is_stdlib || fn->decl->is_extern) continue;
    const Vars& bv = fn->batch_vars;
    const bool controller = fn->placement == Placement::Controller;
    std::set<std::string> tainted;  // locals computed from split data
    auto split_text = [&](const Axis& a) {
      return "`" + axis_name(a) + "` is split across the " + N + " devices";
    };
    // Grouping and doubling are reported where they are introduced: not
    // at a user fn's call, whose body reports it.
    auto S = [&](const ast::Expr* x) { return x && is_split(fn, *x); };
    auto check_layout = [&](const ast::Expr& e) {
      const Type& t = type_of(&e);
      if (!S(&e)) return;
      if (e.kind == EK::Call) {
        const ExprInfo* ci = P.info(&e);
        if (ci && ci->resolution.kind == Resolution::Kind::Fn) return;
      }
      if (e.kind == EK::Call || e.kind == EK::Binary) {
        std::vector<const ast::Expr*> ch = children(e);
        diag::Span at =
            e.kind == EK::Call && e.pattern ? e.pattern->output.span : e.span;
        if (const Axis* g = grouped_batch(t, bv)) {
          bool before = false;
          for (const ast::Expr* c : ch)
            before |= grouped_batch(type_of(c), bv) != nullptr;
          if (!before) {
            std::string grp;
            for (const Axis& a : t.shape)
              if (a.kind == Axis::Kind::Group && axis_find(a, bv))
                grp = a.str();
            error(Code::E1802, at,
                  "the batch axis `" + axis_name(*g) +
                      "` grouped with another axis: " + grp,
                  "grouped here")
                .help("the batch is split across the " + N +
                      " devices by examples: keep `" + axis_name(*g) +
                      "` an axis of its own");
          }
        } else if (batch_count(t, bv) >= 2) {
          bool before = false;
          for (const ast::Expr* c : ch)
            before |= batch_count(type_of(c), bv) >= 2;
          if (!before)
            error(Code::E1802, at,
                  "a value with two batch axes: " + t.str(),
                  "the batch axis twice")
                .help("each worker holds only its part of the batch, along "
                      "one axis: a value may have the batch axis once");
        }
      }
    };
    auto check_expr_dev = [&](const ast::Expr& e) {
      ExprInfo& in = info_for(&e);
      const Type& t = in.type;
      if (t.is_error()) return;
      if (e.kind == EK::Index && e.lhs) {
        const Type& base = type_of(e.lhs.get());
        if (base.kind == TK::Tensor && S(e.lhs.get()))
          for (size_t i = 0; i < e.indices.size() && i < base.shape.size();
               ++i) {
            const ast::IndexItem& it = e.indices[i];
            if (!axis_is(base.shape[i], bv)) continue;
            if (it.is_slice && !it.lo && !it.hi) continue;
            error(Code::E1801, e.span,
                  std::string(it.is_slice ? "slicing" : "indexing") +
                      " the batch axis `" + axis_name(base.shape[i]) +
                      "` has no distributed lowering",
                  split_text(base.shape[i]))
                .help("each worker holds only its part of the batch: work "
                      "per example, or index another axis");
            break;
          }
        return;
      }
      if (e.kind == EK::Binary && e.binary_op == ast::BinaryOp::MatMul &&
          e.lhs && e.rhs && t.kind == TK::Tensor) {
        for (const ast::Expr* o : {e.lhs.get(), e.rhs.get()}) {
          const Axis* ax = S(o) ? find_batch(type_of(o), bv) : nullptr;
          if (!ax) continue;
          Vars one{ax->var};
          if (has_batch(t, one)) continue;
          error(Code::E1801, e.span,
                "`@` contracts the batch axis `" + axis_name(*ax) +
                    "`, which has no distributed lowering",
                split_text(*ax))
              .help(std::string(kLowered) +
                    "; write the contraction as sum(a * b, over=" +
                    axis_name(*ax) + ")");
          break;
        }
        return;
      }
      if (e.kind != EK::Call) return;
      const Resolution& r = in.resolution;
      std::vector<const ast::Expr*> given = given_args(e);
      if (r.kind == Resolution::Kind::Fn && r.fn) {
        // An extern fn given the batch axis as an Axis[...] argument.
        if (!r.fn->decl->is_extern) return;
        for (size_t g = 0; g < given.size() && g < in.arg_params.size();
             ++g) {
          const Type& at = type_of(given[g]);
          if (at.kind != TK::AxisArg || at.shape.empty() ||
              !axis_is(at.shape[0], bv))
            continue;
          error(Code::E1801, e.span,
                "`" + r.fn->name + "` along the batch axis `" +
                    axis_name(at.shape[0]) + "` has no distributed lowering",
                split_text(at.shape[0]))
              .help("an extern fn works on each example by itself, along "
                    "every axis it isn't given as an Axis[...] argument: "
                    "give it another axis");
          break;
        }
        return;
      }
      if (r.kind != Resolution::Kind::Builtin || !r.op) return;
      const ops::OpDef& op = *r.op;
      const std::string n = op.name;
      // einsum: an operand's batch axis missing from the result.
      if (op.intrinsic == ops::Intrinsic::Einsum) {
        for (const ast::Expr* o : given) {
          const Axis* ax = S(o) ? find_batch(type_of(o), bv) : nullptr;
          if (!ax) continue;
          Vars one{ax->var};
          if (has_batch(t, one) || t.is_error()) continue;
          error(Code::E1801, e.span,
                "einsum contracting the batch axis `" + axis_name(*ax) +
                    "` has no distributed lowering",
                split_text(*ax))
              .help(std::string(kLowered) +
                    "; keep the batch axis in the output and reduce it "
                    "with sum(..., over=" + axis_name(*ax) + ")");
          break;
        }
        return;
      }
      // The size of the batch axis used as a number.
      if (n == "size" || n == "len") {
        const Axis* ax = nullptr;
        if (given.empty() || !S(given[0])) return;
        if (n == "size") {
          auto it = in.axis_args.find(1);
          if (it != in.axis_args.end() && axis_is(it->second, bv))
            ax = &it->second;
        } else {
          const Type& x = type_of(given[0]);
          if ((x.kind == TK::Tensor || x.kind == TK::Batch) &&
              !x.shape.empty() && axis_is(x.shape[0], bv))
            ax = &x.shape[0];
        }
        if (ax)
          error(Code::E1802, e.span,
                "the size of the batch axis `" + axis_name(*ax) +
                    "` used as a number",
                "on each worker this would be its part's size")
              .help("the batch is split across the " + N +
                    " devices; use mean(...), which all-reduces a sum and a "
                    "count");
        return;
      }
      // Host calls given split data.
      bool host_call = op.batch == ops::BatchRule::Host || n == "print" ||
                       n == "write" || n == "float" || n == "int" ||
                       n == "str";
      if (host_call && n != "mean_logs" && n != "typeof" &&
          n != "progress" && n != "batches") {
        for (const ast::Expr* g : given) {
          const Type& at = type_of(g);
          const Axis* ax = S(g) ? find_batch(at, bv) : nullptr;
          if (!ax) continue;
          error(Code::E1901, g->span,
                "`" + n + "` is a host call, but `" + text(g->span) +
                    "` is split across the " + N + " devices",
                at.str() + ", split along " + axis_name(*ax))
              .help("compute what you need on the workers (a mean or a sum "
                    "over " + axis_name(*ax) + " is all-reduced) and log it");
          break;
        }
        return;
      }
      if (n == "causal") {
        for (const auto& [k, ax] : in.axis_args)
          if (axis_is(ax, bv)) {
            error(Code::E1801, e.span,
                  "causal with the batch axis `" + axis_name(ax) +
                      "` has no distributed lowering",
                  split_text(ax))
                .help("causal masks positions within each example: give it "
                      "the sequence axes");
            break;
          }
        return;
      }
      // Across the batch axis: an over= naming it, or a reduction of
      // every axis.
      const ast::Expr* x = param_arg(e, in, 0);
      const Type xt = S(x) ? type_of(x) : Type::error();
      const Axis* across = nullptr;
      bool all_axes = false;
      int over = param_index(op, "over");
      if (over >= 0) {
        auto it = in.axes.find(over);
        if (it != in.axes.end()) {
          const std::vector<Axis>* shape = nullptr;
          if (xt.kind == TK::Tensor) shape = &xt.shape;
          else if (xt.kind == TK::List && !xt.elems.empty())
            shape = &xt.elems[0].shape;
          if (shape)
            for (int pos : it->second)
              if (pos >= 0 && static_cast<size_t>(pos) < shape->size() &&
                  axis_find((*shape)[pos], bv)) {
                across = axis_find((*shape)[pos], bv);
                break;
              }
        } else if (!param_arg(e, in, over) && is_reduction(n) &&
                   !((n == "max" || n == "min") &&
                     param_arg(e, in, param_index(op, "y")))) {
          across = find_batch(xt, bv);
          all_axes = across != nullptr;
        }
      }
      if (n == "cross_entropy" || n == "mse" || n == "batch_norm") {
        for (const ast::Expr* g : given)
          if (const Axis* ax = S(g) ? find_batch(type_of(g), bv) : nullptr) {
            across = ax;
            break;
          }
      }
      if (!across) return;
      bool lowered = op.batch == ops::BatchRule::AllReduce;
      std::string what = n;
      if (n == "reduce") {
        const ast::Expr* w = param_arg(e, in, param_index(op, "with"));
        if (w && !(w->kind == EK::Name && w->name == "sum")) {
          lowered = false;
          what = "reduce(with=" + text(w->span) + ")";
        }
      }
      if (lowered) {
        in.allreduce = true;
        if (n == "mean") in.allreduce_payload = "its result's values and a count";
        else if (n == "cross_entropy" || n == "mse")
          in.allreduce_payload = "2 values: a sum and a count";
        else if (n == "batch_norm")
          in.allreduce_payload = "2·C + 1 values in f64";
        else in.allreduce_payload = "its result's values";
        return;
      }
      std::string how = all_axes ? " over every axis, the batch axis `" +
                                       axis_name(*across) + "` included,"
                        : is_along_op(n) && !is_indexing_op(n)
                            ? " along the batch axis `" + axis_name(*across) +
                                  "`"
                            : " over the batch axis `" + axis_name(*across) +
                                  "`";
      auto& d = error(Code::E1801, e.span,
                      what + how + " has no distributed lowering",
                      split_text(*across));
      if (is_indexing_op(n))
        d.help("each worker holds only its part of the batch: " + n +
               " along another axis, or per example");
      else
        d.help(std::string(kLowered) + "; " + what + " is not");
    };
    auto check_one = [&](const ast::Expr& e) {
      size_t before = diags_.size();
      check_expr_dev(e);
      if (diags_.size() == before) check_layout(e);
    };
    // Does [e] read split data (a value with the batch axis, or a local
    // computed from one)?
    std::function<bool(const ast::Expr&)> reads_split =
        [&](const ast::Expr& e) -> bool {
      if (is_split(fn, e)) return true;
      if (e.kind == EK::Name && tainted.count(e.name)) return true;
      if (e.kind == EK::Call && controller) {
        const ExprInfo* in = P.info(&e);
        // A call from the controller gives the workers' whole result.
        if (in && in->resolution.kind == Resolution::Kind::Fn) return false;
      }
      for (const ast::Expr* c : children(e))
        if (reads_split(*c)) return true;
      return false;
    };
    auto check_cond = [&](const ast::Expr& c) {
      size_t before = diags_.size();
      each_expr(c, check_one);
      bool inner = false;
      for (size_t i = before; i < diags_.size(); ++i)
        inner |= diags_.list()[i].code == Code::E1801;
      const Type& t = type_of(&c);
      if (inner || t.kind != TK::Tensor || !reads_split(c)) return;
      error(Code::E1801, c.span,
            "a condition computed from data split across the " + N +
                " devices",
            "each worker would read this from its own part of the batch")
          .help("each worker holds only its part of the batch: decide in "
                "the controller, from a value the step logs (there `r.loss` "
                "is a host float)");
    };
    auto taint = [&](const std::vector<ast::NameTarget>& ts,
                     const ast::Expr* v) {
      if (!v || !reads_split(*v)) return;
      for (const ast::NameTarget& t : ts) tainted.insert(t.name);
    };
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        const ast::Stmt& s = *sp;
        switch (s.kind) {
          case SK::If:
            for (const ast::IfBranch& br : s.branches) {
              if (br.cond) check_cond(*br.cond);
              walk(br.body);
            }
            break;
          case SK::While:
            if (s.cond) check_cond(*s.cond);
            walk(s.body);
            break;
          case SK::For:
            if (s.iter) {
              each_expr(*s.iter, check_one);
              taint(s.targets, s.iter.get());
            }
            walk(s.body);
            break;
          case SK::Let:
            if (s.value) {
              each_expr(*s.value, check_one);
              taint(s.targets, s.value.get());
            }
            break;
          case SK::Assign:
          case SK::AugAssign:
            if (s.value) each_expr(*s.value, check_one);
            if (s.target) each_expr(*s.target, check_one);
            if (s.target && s.target->kind == EK::Name && s.value &&
                reads_split(*s.value))
              tainted.insert(s.target->name);
            break;
          default:
            if (s.value) each_expr(*s.value, check_one);
            break;
        }
      }
    };
    if (fn->decl->expr_body) each_expr(*fn->decl->expr_body, check_one);
    walk(fn->decl->body);
  }
}

}  // namespace ss::check
