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
//
// This file: placement (1) and E1803; the batch axis (2) and its checks
// are in batch_axis.cpp and batch_checks.cpp.
#include <algorithm>
#include <functional>

#include "interp/check/checker_impl.h"
#include "interp/check/plan/placement_impl.h"

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
using SK = ast::Stmt::Kind;
using Placement = FnInfo::Placement;
using namespace placement_detail;

// ------------------------------------------------------------ facts

struct Reason {
  std::string why;
  diag::Span at;
};

struct Facts {
  std::vector<Reason> host;         // in the body
  std::vector<Reason> host_param;   // takes a dataset or a sink
  std::vector<Reason> device_work;  // what, where
  bool uses_device = false;
  std::vector<size_t> calls;  // indices into the call sites
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

// Why a host call places its fn in the controller (the entry's HostEffect).
std::string host_words(ops::HostEffect h, const std::string& op) {
  using H = ops::HostEffect;
  switch (h) {
    case H::None:
      return "";
    case H::Prints:
      return "it prints";
    case H::SavesCheckpoint:
      return "it saves a checkpoint";
    case H::LoadsCheckpoint:
      return "it loads a checkpoint";
    case H::WritesSink:
      return "it writes to a sink";
    case H::MakesSink:
    case H::MakesFileSink:
      return "it makes a sink";
    case H::MakesDataset:
      return "it makes a dataset";
    case H::LoopsOverDataset:
      return "it loops over a dataset";
    case H::ShowsProgress:
      return "it shows progress";
    case H::SetsTimeout:
      return "it sets the collective timeout";
    case H::ReadsHostNumber:
      return "it reads a value as a host number (`" + op + "`)";
  }
  return "";
}

}  // namespace

void Checker::check_devices() {
  Program& P = *prog_;
  const size_t ndev = P.devices_.count();
  // Deterministic mode checks one device as several: its bits are the
  // reference the others match (Note [Deterministic mode] in
  // interp/devices/lower/chunks.h), so its reductions are lowered alike.
  const bool several = ndev > 1 || P.devices_.deterministic;
  const bool mesh = !P.mesh_.empty();
  const std::string N = std::to_string(ndev);

  // Source order: modules in order (stdlib, imports, main), then offset.
  std::map<uint32_t, size_t> module_of;
  for (size_t i = 0; i < P.modules_.size(); ++i)
    module_of[P.modules_[i]->file] = i;
  auto order_of = [&](diag::Span s) {
    auto it = module_of.find(s.file);
    return std::make_pair(it == module_of.end() ? SIZE_MAX : it->second,
                          s.begin);
  };

  // Fns in source order.
  std::vector<FnInfo*> fns;
  for (const ast::Module& m : P.modules())
    for (const ast::FnDecl& d : m.fns) {
      auto it = P.fns_.find(d.name);
      if (it == P.fns_.end() || it->second.decl != &d) continue;
      // A generic fn's other instances (Note [Dtype variables]) and every
      // autocast instance (Note [Autocast]) beside it, each its own fn.
      std::function<void(FnInfo&)> add = [&](FnInfo& f) {
        fns.push_back(&f);
        for (const auto& [key, name] : f.instances) add(P.fns_.at(name));
        for (const auto& [key, name] : f.autocast_instances)
          add(P.fns_.at(name));
      };
      add(it->second);
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
      diag::Span at = p.decl && p.decl->type ? p.decl->type->span : d.name_span;
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
        f.host.push_back(
            {"it reads `" + text(e.span) + "` as a host number", e.span});
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
        for (size_t g = 0; g < given.size() && g < info->arg_params.size(); ++g)
          if (info->arg_params[g] >= 0)
            cs.args.push_back(
                {static_cast<size_t>(info->arg_params[g]), given[g]});
        f.calls.push_back(sites.size());
        sites.push_back(std::move(cs));
        return;
      }
      if (r.kind != Resolution::Kind::Builtin || !r.op) return;
      const ops::OpDef& op = *r.op;
      const std::string n = op.name;
      const ops::DeviceRule& rule = op.device;
      if (rule.device_work) f.device_work.push_back({"`" + n + "`", e.span});
      // A fn value given to a builtin is called from here.
      if (rule.fn_arg != ops::FnArg::None && !given.empty()) {
        const Type& ft = type_of(given[0]);
        auto it = ft.kind == TK::Fn ? P.fns_.find(ft.fn_name) : P.fns_.end();
        if (it != P.fns_.end()) {
          CallSite cs;
          cs.caller = fn;
          cs.callee = &it->second;
          cs.call = &e;
          cs.order = order_of(e.span);
          if (rule.fn_arg == ops::FnArg::PerBatch) {
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
      std::string why = host_words(rule.host, n);
      if (rule.host == ops::HostEffect::ReadsHostNumber &&
          (given.empty() || type_of(given[0]).kind != TK::Tensor))
        why.clear();
      if (why.empty())
        for (const ast::Expr* g : given) {
          TK k = type_of(g).kind;
          if (k == TK::Dataset || k == TK::Batches)
            why = "it uses a dataset";
          else if (k == TK::Sink)
            why = "it uses a sink";
          if (!why.empty()) break;
        }
      if (!why.empty()) f.host.push_back({why, e.span});
    };
    std::function<void(const ast::Block&)> walk = [&](const ast::Block& b) {
      for (const ast::StmtPtr& sp : b) {
        if (!sp) continue;
        const ast::Stmt& s = *sp;
        if (s.kind == SK::For && s.iter) {
          TK k = type_of(s.iter.get()).kind;
          if (k == TK::Batches || k == TK::Dataset)
            f.host.push_back({"it loops over a dataset", s.span});
        }
        if (s.kind == SK::Assign || s.kind == SK::AugAssign)
          for (const ast::Expr* t : ast::assigned_places(s))
            if (t->kind == EK::Field && t->lhs &&
                type_of(t->lhs.get()).kind == TK::Model)
              f.device_work.push_back(
                  {"changing the model field `" + text(t->span) + "`", s.span});
        for (const ast::ExprPtr* x : {&s.value, &s.target, &s.iter, &s.cond})
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
    const Reason* r = !f.host.empty()         ? &f.host.front()
                      : !f.host_param.empty() ? &f.host_param.front()
                                              : nullptr;
    if (fn->name == opts_.prompt_fn) {
      fn->placement = Placement::Controller;
      fn->placement_reason = "the repl runs what is typed at its prompt";
    } else if (r) {
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
  // program places its fns too). Not in an spmd fn: its instances run on
  // the workers, on the blocks its types cut, wherever it is called from;
  // a print there places it in the controller only because that is where
  // the instances' prints are gathered (Note [Spmd fns on workers] in
  // interp/devices/lower/worker_mesh.h).
  if (several)
    for (FnInfo* fn : fns) {
      if (fn->placement != Placement::Controller || fn->is_stdlib ||
          fn->decl->is_spmd)
        continue;
      const std::string who = fn->name == opts_.prompt_fn
                                  ? std::string("this input")
                                  : "`" + fn->name + "`";
      for (const Reason& w : facts[fn].device_work) {
        auto& d = error(
            Code::E1803,
            w.at,
            w.why + " is device work, but " + who + " runs in the controller",
            "device work");
        d.note(who + " runs in the controller because " + fn->placement_reason,
               fn->placement_at);
        d.help(
            "move the step into a fn of its own (as `train_step`) and "
            "call it from the loop");
      }
    }

  // `split H`: every device has the whole batch (devices.md item 9), so
  // nothing works across a split batch axis: no E1801, E1802, E1804.
  const bool batch_split = several && P.devices_.split_dim.empty();
  placement_detail::check_batch_axis(*this, fns, sites, batch_split, mesh, N);
}

}  // namespace ss::check
