// Every optimizer's table entry, with torch.optim's update rules step by
// step: SGD (momentum, nesterov, weight decay), AdamW and Adam (amsgrad),
// RMSprop (momentum, centered), Adagrad, Adadelta, and Lion as its paper
// writes it.
#include "interp/builtins/optimizers.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "interp/eval/format.h"
#include "ops/api.h"
#include "ops/backend/backend.h"

namespace ss::builtins {

using namespace ss::eval;
using types::OptimKind;
using VK = Value::Kind;

// Note [An optimizer's table entry]: an optimizer is one row of kRules:
// which hyperparameters it reads (OptimHyper holds every kind's, by
// torch's names, so the wire and the controller's copy need no case per
// kind), which state each param carries (by torch's names: a checkpoint
// writes them as `opt.<state>.<path>`, as torch's state_dict names them),
// how its builtin's arguments set them, and torch.optim's step written
// with ops/api.h on one param. The step is elementwise, so it runs as it
// is on a whole param, on a stack's one model, on a split H rank's heads
// and on a shard params rank's flat piece (the state is cut the same way:
// devices/lower/shards.h, heads.h). Each rule's ops follow torch 1.13's
// single-tensor code in its order (torch/optim/<name>.py), so that f64
// agrees to rounding over hundreds of steps (tests/torch/op_rows_optim.py).
// Its type names live in types::optim_names (ops/core/type.cpp) and its
// signature in ops/defs/optim.cpp.

namespace {
thread_local bool as_recorded = false;
}

AsRecorded::AsRecorded() : prev_(as_recorded) {
  as_recorded = true;
}
AsRecorded::~AsRecorded() {
  as_recorded = prev_;
}
bool AsRecorded::active() {
  return as_recorded;
}

namespace {

ops::Tensor scal(double v, const ops::Tensor& like) {
  return ops::scalar_like(v, like);
}

// [a]·[wa] + [b]·[wb]: torch's `a.mul_(wa).add_(b, alpha=wb)`.
ops::Tensor blend(const ops::Tensor& a,
                  double wa,
                  const ops::Tensor& b,
                  double wb) {
  return ops::add(ops::mul(a, scal(wa, a)), ops::mul(scal(wb, a), b));
}

// ATen's pointwise forms, whose order of roundings torch's steps have:
// addcmul(x, a, b, v) = x + (v·a)·b and addcdiv(x, a, b, v) = x + (v·a)/b.
ops::Tensor addcmul(const ops::Tensor& x,
                    const ops::Tensor& a,
                    const ops::Tensor& b,
                    double v) {
  return ops::add(x, ops::mul(ops::mul(scal(v, a), a), b));
}

ops::Tensor addcdiv(const ops::Tensor& x,
                    const ops::Tensor& a,
                    const ops::Tensor& b,
                    double v) {
  return ops::add(x, ops::div(ops::mul(scal(v, a), a), b));
}

// The state [name] of a param, made as [init] (zeros unless given) on the
// first step.
ops::Tensor& state(ParamState& st,
                   const char* name,
                   const ops::Tensor& p,
                   double init = 0) {
  auto it = st.find(name);
  if (it == st.end())
    it = st.emplace(name,
                    ops::Tensor::full(p.shape(), init, p.dtype(), p.device()))
             .first;
  return it->second;
}

// [a] with storage nobody else sees: the fused steps write in place, and
// values are immutable, so a tensor another value still holds is copied.
ops::Tensor& own(ops::Tensor& t) {
  if (!t.unique_storage() && !AsRecorded::active()) t = t.clone();
  return t;
}

// torch's L2 penalty (every optimizer here but AdamW's and Lion's
// decoupled one): grad + weight_decay · param.
ops::Tensor with_l2(const OptimHyper& o,
                    const ops::Tensor& p,
                    const ops::Tensor& g) {
  return o.weight_decay != 0 ? ops::add(g, ops::mul(scal(o.weight_decay, p), p))
                             : g;
}

// ------------------------------------------------------------------ SGD

ops::Tensor sgd_step(const OptimHyper& o,
                     int64_t step,
                     ParamState& st,
                     ops::Tensor p,
                     ops::Tensor g) {
  g = with_l2(o, p, g);
  if (o.momentum != 0) {
    auto it = st.find("momentum_buffer");
    ops::Tensor buf =
        it == st.end() ? g.clone()  // the first step copies the gradient
                       : ops::add(ops::mul(scal(o.momentum, p), it->second), g);
    st["momentum_buffer"] = buf;
    g = o.nesterov ? ops::add(g, ops::mul(scal(o.momentum, buf), buf)) : buf;
  }
  return ops::sub(p, ops::mul(scal(o.lr, g), g));
}

bool sgd_fused(const OptimHyper& o,
               int64_t step,
               ParamState& st,
               ops::Tensor& p,
               const ops::Tensor& g) {
  ops::Backend& be = ops::backend_for(p.device());
  if (o.momentum == 0) {
    be.sgd_update(p, g, nullptr, o.lr, 0, o.weight_decay, false, false);
    return true;
  }
  const bool first = !st.count("momentum_buffer");
  be.sgd_update(p,
                g,
                &own(state(st, "momentum_buffer", p)),
                o.lr,
                o.momentum,
                o.weight_decay,
                o.nesterov,
                first);
  return true;
}

// ---------------------------------------------------------- Adam, AdamW

// torch.optim.Adam's and AdamW's step after the weight decay (which the
// two apply differently).
ops::Tensor adam_moments_step(const OptimHyper& o,
                              int64_t step,
                              ParamState& st,
                              const ops::Tensor& p,
                              const ops::Tensor& g) {
  ops::Tensor& m = state(st, "exp_avg", p);
  ops::Tensor& v = state(st, "exp_avg_sq", p);
  m = blend(m, o.beta1, g, 1.0 - o.beta1);
  v = addcmul(ops::mul(v, scal(o.beta2, p)), g, g, 1.0 - o.beta2);
  const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(step));
  ops::Tensor second = v;
  if (o.amsgrad) {
    ops::Tensor& vmax = state(st, "max_exp_avg_sq", p);
    vmax = ops::maximum(vmax, v);
    second = vmax;
  }
  ops::Tensor denom = ops::add(
      ops::div(ops::sqrt(second), scal(std::sqrt(bc2), p)), scal(o.eps, p));
  return addcdiv(p, m, denom, -(o.lr / bc1));
}

ops::Tensor adamw_step(const OptimHyper& o,
                       int64_t step,
                       ParamState& st,
                       ops::Tensor p,
                       ops::Tensor g) {
  p = ops::mul(p, scal(1.0 - o.lr * o.weight_decay, p));
  return adam_moments_step(o, step, st, p, g);
}

ops::Tensor adam_step(const OptimHyper& o,
                      int64_t step,
                      ParamState& st,
                      ops::Tensor p,
                      ops::Tensor g) {
  return adam_moments_step(o, step, st, p, with_l2(o, p, g));
}

bool adamw_fused(const OptimHyper& o,
                 int64_t step,
                 ParamState& st,
                 ops::Tensor& p,
                 const ops::Tensor& g) {
  if (o.amsgrad) return false;  // the kernel keeps no running maximum
  ops::backend_for(p.device())
      .adamw_update(p,
                    g,
                    own(state(st, "exp_avg", p)),
                    own(state(st, "exp_avg_sq", p)),
                    o.lr,
                    o.beta1,
                    o.beta2,
                    o.eps,
                    o.weight_decay,
                    step);
  return true;
}

// -------------------------------------------------------------- RMSprop

ops::Tensor rmsprop_step(const OptimHyper& o,
                         int64_t step,
                         ParamState& st,
                         ops::Tensor p,
                         ops::Tensor g) {
  g = with_l2(o, p, g);
  ops::Tensor& sq = state(st, "square_avg", p);
  sq = addcmul(ops::mul(sq, scal(o.alpha, p)), g, g, 1.0 - o.alpha);
  ops::Tensor avg;
  if (o.centered) {
    ops::Tensor& ga = state(st, "grad_avg", p);
    ga = blend(ga, o.alpha, g, 1.0 - o.alpha);
    avg = ops::sqrt(ops::sub(sq, ops::mul(ga, ga)));
  } else {
    avg = ops::sqrt(sq);
  }
  avg = ops::add(avg, scal(o.eps, p));
  if (o.momentum > 0) {
    ops::Tensor& buf = state(st, "momentum_buffer", p);
    buf = addcdiv(ops::mul(buf, scal(o.momentum, p)), g, avg, 1.0);
    return ops::sub(p, ops::mul(scal(o.lr, p), buf));
  }
  return addcdiv(p, g, avg, -o.lr);
}

// -------------------------------------------------------------- Adagrad

ops::Tensor adagrad_step(const OptimHyper& o,
                         int64_t step,
                         ParamState& st,
                         ops::Tensor p,
                         ops::Tensor g) {
  g = with_l2(o, p, g);
  const double clr = o.lr / (1.0 + static_cast<double>(step - 1) * o.lr_decay);
  ops::Tensor& sum = state(st, "sum", p, o.initial_accumulator_value);
  sum = addcmul(sum, g, g, 1.0);
  ops::Tensor std = ops::add(ops::sqrt(sum), scal(o.eps, p));
  return addcdiv(p, g, std, -clr);
}

// ------------------------------------------------------------- Adadelta

ops::Tensor adadelta_step(const OptimHyper& o,
                          int64_t step,
                          ParamState& st,
                          ops::Tensor p,
                          ops::Tensor g) {
  g = with_l2(o, p, g);
  ops::Tensor& sq = state(st, "square_avg", p);
  ops::Tensor& acc = state(st, "acc_delta", p);
  sq = addcmul(ops::mul(sq, scal(o.rho, p)), g, g, 1.0 - o.rho);
  ops::Tensor std = ops::sqrt(ops::add(sq, scal(o.eps, p)));
  ops::Tensor delta =
      ops::mul(ops::div(ops::sqrt(ops::add(acc, scal(o.eps, p))), std), g);
  acc = addcmul(ops::mul(acc, scal(o.rho, p)), delta, delta, 1.0 - o.rho);
  return ops::sub(p, ops::mul(scal(o.lr, p), delta));
}

// ----------------------------------------------------------------- Lion

// Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms",
// Algorithm 2 (torch has no Lion): decoupled decay, the sign of an
// interpolation as the update, then the momentum moves with beta2.
ops::Tensor lion_step(const OptimHyper& o,
                      int64_t step,
                      ParamState& st,
                      ops::Tensor p,
                      ops::Tensor g) {
  p = ops::mul(p, scal(1.0 - o.lr * o.weight_decay, p));
  ops::Tensor& m = state(st, "exp_avg", p);
  ops::Tensor update = ops::sign(blend(m, o.beta1, g, 1.0 - o.beta1));
  m = blend(m, o.beta2, g, 1.0 - o.beta2);
  return ops::sub(p, ops::mul(scal(o.lr, p), update));
}

// ---------------------------------------------------------------- table

// One argument of an optimizer's builtin after m and lr: a number (>= 0,
// and <= at_most), a flag, or betas= (a pair in [0, 1)), and its default.
struct Arg {
  const char* name;
  double OptimHyper::*number = nullptr;
  bool OptimHyper::*flag = nullptr;
  double dflt = 0;
  double at_most = INFINITY;
};

Arg number(const char* name, double OptimHyper::*field, double dflt) {
  return {name, field, nullptr, dflt};
}

Arg flag(const char* name, bool OptimHyper::*field) {
  return {name, nullptr, field};
}

// betas= with the default (beta1, [beta2]).
Arg betas(double beta2) {
  return {"betas", nullptr, nullptr, beta2};
}

struct Row {
  OptimizerRule rule;
  double default_lr;
  std::vector<Arg> args;  // the builtin's params from index 2 (ops/defs)
};

using H = OptimHyper;

const Row kRules[] = {
    {{OptimKind::SGD,
      {"lr", "weight_decay", "momentum", "nesterov"},
      {"momentum_buffer"},
      sgd_step,
      sgd_fused},
     1e-3,
     {number("momentum", &H::momentum, 0),
      number("weight_decay", &H::weight_decay, 0),
      flag("nesterov", &H::nesterov)}},
    {{OptimKind::AdamW,
      {"lr", "weight_decay", "betas", "eps", "amsgrad"},
      {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
      adamw_step,
      adamw_fused},
     1e-3,
     {betas(0.999),
      number("eps", &H::eps, 1e-8),
      number("weight_decay", &H::weight_decay, 0.01),
      flag("amsgrad", &H::amsgrad)}},
    {{OptimKind::Adam,
      {"lr", "weight_decay", "betas", "eps", "amsgrad"},
      {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
      adam_step},
     1e-3,
     {betas(0.999),
      number("eps", &H::eps, 1e-8),
      number("weight_decay", &H::weight_decay, 0),
      flag("amsgrad", &H::amsgrad)}},
    {{OptimKind::RMSprop,
      {"lr", "weight_decay", "alpha", "eps", "momentum", "centered"},
      {"square_avg", "momentum_buffer", "grad_avg"},
      rmsprop_step},
     1e-2,
     {number("alpha", &H::alpha, 0.99),
      number("eps", &H::eps, 1e-8),
      number("weight_decay", &H::weight_decay, 0),
      number("momentum", &H::momentum, 0),
      flag("centered", &H::centered)}},
    {{OptimKind::Adagrad,
      {"lr", "weight_decay", "lr_decay", "initial_accumulator_value", "eps"},
      {"sum"},
      adagrad_step},
     1e-2,
     {number("lr_decay", &H::lr_decay, 0),
      number("weight_decay", &H::weight_decay, 0),
      number("initial_accumulator_value", &H::initial_accumulator_value, 0),
      number("eps", &H::eps, 1e-10)}},
    {{OptimKind::Adadelta,
      {"lr", "weight_decay", "rho", "eps"},
      {"square_avg", "acc_delta"},
      adadelta_step},
     1.0,
     {{"rho", &H::rho, nullptr, 0.9, 1.0},
      number("eps", &H::eps, 1e-6),
      number("weight_decay", &H::weight_decay, 0)}},
    // Lion's betas default to the paper's (0.9, 0.99), not Adam's.
    {{OptimKind::Lion, {"lr", "weight_decay", "betas"}, {"exp_avg"}, lion_step},
     1e-4,
     {betas(0.99), number("weight_decay", &H::weight_decay, 0)}},
};

// The index of [c]'s param [name] (the builtins name their params by
// torch's names: ops/defs/optim.cpp).
std::optional<size_t> param_index(const BuiltinCall& c, const char* name) {
  for (size_t i = 0; i < c.op.params.size(); ++i)
    if (std::string_view(c.op.params[i].name) == name) return i;
  return std::nullopt;
}

// [r]'s args, lr first.
std::vector<Arg> args_of(const Row& r) {
  std::vector<Arg> args = r.args;
  args.insert(args.begin(), number("lr", &H::lr, r.default_lr));
  return args;
}

// A fresh optimizer's hyperparameters: every arg's default.
OptimHyper defaults_of(const Row& r) {
  OptimHyper h;
  for (const Arg& a : args_of(r)) {
    if (a.flag) {
      h.*a.flag = false;
    } else if (a.number) {
      h.*a.number = a.dflt;
    } else {
      h.beta1 = 0.9;
      h.beta2 = a.dflt;
    }
  }
  return h;
}

// Sets [o]'s hyperparameters from the arguments [c] gives, by name, as
// [r]'s args say, checked as torch.optim checks them; the others stay as
// they are (defaults_of for a new optimizer, the default group's for a
// new group).
void configure(const Row& r, BuiltinCall& c, OptimHyper& o) {
  const std::string op = c.op.name;
  auto out_of = [&](const std::string& name, double v, const char* range) {
    c.fail("ValueError",
           op + "'s " + name + " must be in " + range + ", not " +
               format_number(v));
  };
  for (const Arg& a : args_of(r)) {
    const std::optional<size_t> at = param_index(c, a.name);
    const size_t i = at.value_or(c.op.params.size());
    if (!c.has(i)) continue;
    if (a.flag) {
      o.*a.flag = c.flag(i, false);
    } else if (a.number) {
      double v = c.number(i, a.dflt);
      if (!(v >= 0 && v <= a.at_most) || !std::isfinite(v))
        out_of(a.name, v, std::isinf(a.at_most) ? "[0, inf)" : "[0, 1]");
      o.*a.number = v;
    } else {
      const Value& b = c.arg(i);
      if ((b.kind != VK::Tuple && b.kind != VK::List) || b.items->size() != 2)
        c.fail("ValueError", "betas= is a pair (b1, b2)");
      o.beta1 = (*b.items)[0].number();
      o.beta2 = (*b.items)[1].number();
      for (double beta : {o.beta1, o.beta2})
        if (!(beta >= 0 && beta < 1)) out_of("betas", beta, "[0, 1)");
    }
  }
  if (r.rule.kind == OptimKind::SGD && o.nesterov && o.momentum <= 0)
    c.fail("ValueError", "nesterov needs momentum > 0 (as torch.optim.SGD)");
}

const Row& row(OptimKind kind) {
  for (const Row& r : kRules)
    if (r.rule.kind == kind) return r;
  throw std::logic_error("an optimizer kind without a table entry");
}

}  // namespace

const OptimizerRule& optimizer_rule(OptimKind kind) {
  return row(kind).rule;
}

OptimHyper optimizer_defaults(OptimKind kind) {
  return defaults_of(row(kind));
}

Value make_optimizer(BuiltinCall& c) {
  const types::OptimNames* names = types::optim_named(c.op.name, false);
  if (!names)
    c.fail("ValueError", std::string("no optimizer is named ") + c.op.name);
  const Row& r = row(names->kind);
  const Value& m = c.arg(0);
  if (m.kind != VK::Model) c.fail("ValueError", "an optimizer needs a model");
  auto o = std::make_shared<OptimState>();
  o->kind = names->kind;
  o->model = m.as<ModelRef>()->store;
  o->prefix = m.as<ModelRef>()->prefix;
  static_cast<OptimHyper&>(*o) = defaults_of(r);
  configure(r, c, *o);
  return Value::object(VK::Optim, o);
}

namespace {

// Whether [pattern] names the param at [path]: the path itself, a
// sub-model above it ("norm" names "norm.g"), or a pattern with `*`
// (fnmatch's: "*.b" names every field b of a sub-model).
bool names_param(const std::string& pattern, const std::string& path) {
  if (path == pattern || path.rfind(pattern + ".", 0) == 0) return true;
  return pattern.find_first_of("*?[") != std::string::npos &&
         fnmatch(pattern.c_str(), path.c_str(), 0) == 0;
}

}  // namespace

std::vector<std::string> param_paths(const OptimState& o) {
  std::vector<std::string> out;
  for (const std::string& key : o.model->order)
    if (key.rfind(o.prefix, 0) == 0 && !o.model->is_buffer.at(key))
      out.push_back(key.substr(o.prefix.size()));
  return out;
}

// Note [Param groups]: torch's optimizers take a list of param groups,
// each with hyperparameters of its own (nanoGPT's configure_optimizers:
// weight decay on matrices only). Here the optimizer is made for its
// whole model, whose params form the default group; add_param_group moves
// the params it names into a new group, which starts from the default
// group's hyperparameters and takes the ones given. A param is in one
// group (torch raises for a param in two); the state stays by param, so
// moving one after steps keeps its moments. The groups travel with the
// hyperparameters (OptimSettings: the wire, the controller's copy) and a
// checkpoint keeps them as group<k>.* metadata.
Value add_param_group(BuiltinCall& c) {
  auto* o = c.arg(0).as<OptimState>();
  sync(*o);  // the workers' hyperparameters, if set there
  const std::string name = c.arg(1).s;
  if (name.empty() || name == "default")
    c.fail("ValueError",
           "a param group's name is a word other than \"default\" (the "
           "group of every param no add_param_group took)");
  for (const ParamGroup& g : o->groups)
    if (g.name == name)
      c.fail("ValueError",
             "this optimizer has a group \"" + name + "\" already");
  std::vector<std::string> patterns;
  const Value& ps = c.arg(2);
  if (ps.kind == VK::Str) {
    patterns.push_back(ps.s);
  } else {
    for (const Value& p : *ps.items) patterns.push_back(p.s);
  }
  const std::vector<std::string> paths = param_paths(*o);
  ParamGroup g;
  g.name = name;
  for (const std::string& pattern : patterns) {
    bool any = false;
    for (const std::string& path : paths) {
      if (!names_param(pattern, path)) continue;
      any = true;
      const std::string key = o->prefix + path;
      for (const ParamGroup& other : o->groups)
        for (const std::string& k : other.paths)
          if (k == key)
            c.fail("ValueError",
                   "`" + path + "` is in param group \"" + other.name +
                       "\" already: a param is in one group (as torch's)");
      if (std::find(g.paths.begin(), g.paths.end(), key) == g.paths.end())
        g.paths.push_back(key);
    }
    if (!any) {
      std::string list;
      for (const std::string& p : paths) list += (list.empty() ? "" : ", ") + p;
      c.fail("ValueError",
             "\"" + pattern + "\" names no param of this optimizer's model",
             {"its params: " + list});
    }
  }
  g.hyper = *o;  // the default group's, then the ones given
  configure(row(o->kind), c, g.hyper);
  o->groups.push_back(std::move(g));
  o->hyper_newer = true;  // in the controller: for the workers' copy
  return Value::unit();
}

}  // namespace ss::builtins
