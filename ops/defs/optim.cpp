// Optimizers and models: sgd adamw adam rmsprop adagrad adadelta lion
// add_param_group update grad_scaler set_lr cosine_lr step_lr linear_lr
// init Train.

#include <string_view>
#include <utility>

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

bool host_number(RuleCtx& ctx, size_t i) {
  if (!ctx.has(i)) return true;
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  if (t.kind == K::Int || t.kind == K::Float) return true;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + " needs a host number for " +
                ctx.text(i) + ", but it is " + t.str(),
            describe(ctx, i));
  return false;
}

bool nonnegative(RuleCtx& ctx, size_t i, const char* what) {
  if (!ctx.has(i)) return true;
  auto v = ctx.const_float(i);
  if (!v || *v >= 0) return true;
  ctx.error(Code::E0303,
            ctx.span(i),
            std::string(ctx.op_name()) + "'s " + what +
                " must not be negative, but is " + ctx.text(i),
            describe(ctx, i));
  return false;
}

Type optim_of(const Type& m, types::OptimKind k) {
  Type o = Type::of(K::Optim);
  o.optim_kind = k;
  o.model = m.model;
  o.model_args = m.model_args;
  o.model_dtype = m.model_dtype;
  o.stack = m.stack;
  return o;
}

bool same_model(const Type& a, const Type& b) {
  return a.model == b.model && a.model_args == b.model_args &&
         a.model_dtype == b.model_dtype && a.stack == b.stack;
}

// What an optimizer builtin's param after m and lr holds.
enum class Hyper { Number, Betas, Flag };

struct HyperParam {
  const char* name;
  Hyper hyper;
};

// An optimizer builtin's signature: m, lr, then its hyperparameters by
// torch.optim's names and in its order. Its run-time half (the defaults,
// torch's checks of the values, the update rule) is its row in
// interp/builtins/optimizers.cpp (Note [An optimizer's table entry]).
struct OptimizerSig {
  types::OptimKind kind;
  bool lr_required;  // as torch: SGD's lr has no default
  std::vector<HyperParam> hypers;
  const char* summary;
  const char* torch;
};

constexpr Hyper N = Hyper::Number, B = Hyper::Betas, F = Hyper::Flag;
using OK = types::OptimKind;

const std::vector<OptimizerSig>& optimizer_sigs() {
  static const std::vector<OptimizerSig> sigs = {
      {OK::SGD,
       true,
       {{"momentum", N}, {"weight_decay", N}, {"nesterov", F}},
       "SGD[M] state for m (torch.optim.SGD): momentum=0, weight_decay=0, "
       "nesterov=false",
       "torch.optim.SGD(m.parameters(), lr, momentum, weight_decay=, "
       "nesterov=)"},
      {OK::AdamW,
       true,
       {{"betas", B}, {"eps", N}, {"weight_decay", N}, {"amsgrad", F}},
       "AdamW[M] state for m (torch.optim.AdamW): betas=(0.9, 0.999), "
       "eps=1e-8, weight_decay=0.01 (decoupled), amsgrad=false",
       "torch.optim.AdamW(m.parameters(), lr, betas, eps, weight_decay=0.01, "
       "amsgrad=)"},
      {OK::Adam,
       false,
       {{"betas", B}, {"eps", N}, {"weight_decay", N}, {"amsgrad", F}},
       "Adam[M] state for m (torch.optim.Adam): lr=1e-3, betas=(0.9, "
       "0.999), eps=1e-8, weight_decay=0 (an L2 term in the gradient), "
       "amsgrad=false",
       "torch.optim.Adam(m.parameters(), lr=1e-3, betas, eps, weight_decay=, "
       "amsgrad=)"},
      {OK::RMSprop,
       false,
       {{"alpha", N},
        {"eps", N},
        {"weight_decay", N},
        {"momentum", N},
        {"centered", F}},
       "RMSprop[M] state for m (torch.optim.RMSprop): lr=0.01, alpha=0.99, "
       "eps=1e-8, weight_decay=0, momentum=0, centered=false",
       "torch.optim.RMSprop(m.parameters(), lr=0.01, alpha, eps, "
       "weight_decay, momentum, centered)"},
      {OK::Adagrad,
       false,
       {{"lr_decay", N},
        {"weight_decay", N},
        {"initial_accumulator_value", N},
        {"eps", N}},
       "Adagrad[M] state for m (torch.optim.Adagrad): lr=0.01, lr_decay=0, "
       "weight_decay=0, initial_accumulator_value=0, eps=1e-10",
       "torch.optim.Adagrad(m.parameters(), lr=0.01, lr_decay, weight_decay, "
       "initial_accumulator_value, eps)"},
      {OK::Adadelta,
       false,
       {{"rho", N}, {"eps", N}, {"weight_decay", N}},
       "Adadelta[M] state for m (torch.optim.Adadelta): lr=1.0, rho=0.9, "
       "eps=1e-6, weight_decay=0",
       "torch.optim.Adadelta(m.parameters(), lr=1.0, rho, eps, "
       "weight_decay)"},
      {OK::Lion,
       false,
       {{"betas", B}, {"weight_decay", N}},
       "Lion[M] state for m (Chen et al. 2023, Algorithm 2): lr=1e-4, "
       "betas=(0.9, 0.99), weight_decay=0 (decoupled)",
       "none in torch 1.13: lion-pytorch's Lion(m.parameters(), lr, betas, "
       "weight_decay)"},
  };
  return sigs;
}

// Argument [i], hyperparameter [h]: a host number (a constant one >= 0),
// betas= a pair of numbers, a flag true or false.
bool check_hyper(RuleCtx& ctx, size_t i, const HyperParam& h) {
  const Type& t = ctx.type(i);
  if (t.is_error()) return false;
  const std::string name = std::string(h.name) + "=";
  if (h.hyper == Hyper::Number)
    return host_number(ctx, i) && nonnegative(ctx, i, name.c_str());
  if (h.hyper == Hyper::Flag)
    return require_kind(ctx, i, K::Bool, "true or false");
  bool good = t.kind == K::Tuple && t.elems.size() == 2;
  if (good)
    for (const Type& e : t.elems)
      if (e.kind != K::Int && e.kind != K::Float) good = false;
  if (!good)
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  "'s betas= is a pair of floats, but " + ctx.text(i) + " is " +
                  t.str(),
              describe(ctx, i));
  return good;
}

// sgd, adamw, adam, ...: a model, then lr and the optimizer's
// hyperparameters (check_hyper).
template <types::OptimKind kind>
Type optimizer_rule(RuleCtx& ctx) {
  const OptimizerSig& sig = optimizer_sigs().at(static_cast<size_t>(kind));
  const Type& m = ctx.type(0);
  if (m.is_error()) return Type::error();
  if (!require_kind(ctx, 0, K::Model, "a model")) return Type::error();
  bool ok = host_number(ctx, 1) && nonnegative(ctx, 1, "lr");
  for (size_t h = 0; h < sig.hypers.size(); ++h)
    if (ctx.has(h + 2)) ok = check_hyper(ctx, h + 2, sig.hypers[h]) && ok;
  if (!ok) return Type::error();
  return optim_of(m, kind);
}

// Every hyperparameter any optimizer takes, once each, in the order
// optimizer_sigs first names them: add_param_group's params after lr.
const std::vector<HyperParam>& all_hypers() {
  static const std::vector<HyperParam> all = [] {
    std::vector<HyperParam> out;
    for (const OptimizerSig& sig : optimizer_sigs())
      for (const HyperParam& h : sig.hypers) {
        bool seen = false;
        for (const HyperParam& o : out)
          seen = seen || std::string_view(o.name) == h.name;
        if (!seen) out.push_back(h);
      }
    return out;
  }();
  return all;
}

// add_param_group(mut opt, name, params, lr=, ...): the group's
// hyperparameters are its optimizer's (E0303 for another's: Adam has no
// momentum=), each checked as the optimizer's own.
Type add_param_group_rule(RuleCtx& ctx) {
  const Type& o = ctx.type(0);
  if (any_error({&o, &ctx.type(1), &ctx.type(2)})) return Type::error();
  if (!require_kind(ctx, 0, K::Optim, "an optimizer") ||
      !require_kind(ctx, 1, K::Str, "the group's name, a string"))
    return Type::error();
  const Type& ps = ctx.type(2);
  const bool strs = ps.kind == K::Str ||
                    (ps.kind == K::List && !ps.elems.empty() &&
                     (ps.elems[0].kind == K::Str || ps.elems[0].is_error()));
  if (!strs) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "add_param_group's params are field paths, a string or a list "
              "of strings (\"w1\", \"norm\", \"*.b\"), but " +
                  ctx.text(2) + " is " + ps.str(),
              describe(ctx, 2));
    return Type::error();
  }
  const OptimizerSig& sig =
      optimizer_sigs().at(static_cast<size_t>(o.optim_kind));
  bool ok = host_number(ctx, 3) && nonnegative(ctx, 3, "lr");
  const std::vector<HyperParam>& all = all_hypers();
  for (size_t h = 0; h < all.size(); ++h) {
    const size_t i = h + 4;
    if (!ctx.has(i)) continue;
    const HyperParam* own = nullptr;
    std::string names = "lr";
    for (const HyperParam& x : sig.hypers) {
      if (std::string_view(x.name) == all[h].name) own = &x;
      names += std::string(", ") + x.name;
    }
    if (!own) {
      ctx.error(Code::E0303,
                ctx.span(i),
                std::string(types::optim_names(o.optim_kind).type) +
                    " has no " + all[h].name +
                    "= (its hyperparameters: " + names + ")",
                describe(ctx, i));
      ok = false;
      continue;
    }
    ok = check_hyper(ctx, i, *own) && ok;
  }
  return ok ? Type::of(K::Unit) : Type::error();
}

using Rule = Type (*)(RuleCtx&);

// optimizer_rule<k> for every kind, by kind.
template <size_t... k>
std::vector<Rule> rules_by_kind(std::index_sequence<k...>) {
  return {&optimizer_rule<static_cast<OK>(k)>...};
}

Type update_rule(RuleCtx& ctx) {
  const Type& m = ctx.type(0);
  const Type& o = ctx.type(1);
  const Type& g = ctx.type(2);
  if (any_error({&m, &o, &g})) return Type::error();
  if (!require_kind(ctx, 0, K::Model, "a model") ||
      !require_kind(ctx, 1, K::Optim, "an optimizer (adamw(m), sgd(m), ...)") ||
      !require_kind(ctx, 2, K::Grads, "gradients (Grads[M])"))
    return Type::error();
  std::string label =
      describe(ctx, 0) + ", " + describe(ctx, 1) + ", " + describe(ctx, 2);
  if (!same_model(m, o)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "update of " + m.str() + " with an optimizer of " + o.str(),
              label);
    return Type::error();
  }
  if (!same_model(m, g)) {
    ctx.error(Code::E0303,
              ctx.span(2),
              "update of " + m.str() + " with gradients " + g.str(),
              label);
    return Type::error();
  }
  return Type::of(K::Unit);
}

// grad_scaler(opt, init_scale=, ...): an optimizer of opt's type that
// carries a grad scaler (Note [Loss scaling] in interp/builtins/
// grad_scaler.cpp).
Type grad_scaler_rule(RuleCtx& ctx) {
  const Type& o = ctx.type(0);
  if (o.is_error()) return Type::error();
  if (!require_kind(ctx, 0, K::Optim, "an optimizer (adamw(m), sgd(m), ...)"))
    return Type::error();
  bool ok = true;
  for (size_t i = 1; i <= 4; ++i) ok = host_number(ctx, i) && ok;
  return ok ? o : Type::error();
}

// set_params(mut m, p): p a Grads of m's type (Note [Arithmetic over
// params] in interp/check/exprs.cpp).
Type set_params_rule(RuleCtx& ctx) {
  const Type& m = ctx.type(0);
  const Type& p = ctx.type(1);
  if (any_error({&m, &p})) return Type::error();
  if (!require_kind(ctx, 0, K::Model, "a model") ||
      !require_kind(ctx, 1, K::Grads, "params (Grads[M]: m * 0.9 + n * 0.1)"))
    return Type::error();
  if (!same_model(m, p)) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "set_params of " + m.str() + " with " + p.str(),
              describe(ctx, 0) + ", " + describe(ctx, 1));
    return Type::error();
  }
  return Type::of(K::Unit);
}

Type set_lr_rule(RuleCtx& ctx) {
  const Type& o = ctx.type(0);
  if (any_error({&o, &ctx.type(1)})) return Type::error();
  if (!require_kind(ctx, 0, K::Optim, "an optimizer")) return Type::error();
  if (!host_number(ctx, 1) || !nonnegative(ctx, 1, "lr")) return Type::error();
  if (ctx.has(2) &&
      !require_kind(ctx, 2, K::Str, "a param group's name, a string"))
    return Type::error();
  return Type::of(K::Unit);
}

// cosine_lr, step_lr, linear_lr: [n] host numbers in (the optional ones
// when given), the lr out.
template <size_t n>
Type schedule_rule(RuleCtx& ctx) {
  bool ok = true;
  for (size_t i = 0; i < n; ++i)
    if (ctx.has(i)) ok = host_number(ctx, i) && ok;
  return ok ? Type::of(K::Float) : Type::error();
}

Type init_rule(RuleCtx& ctx) {
  Type t = ctx.type_arg(0);
  if (t.is_error()) return Type::error();
  if (t.kind != K::Model) {
    ctx.error(Code::E0303,
              ctx.span(0),
              "init makes a model, but " + ctx.text(0) + " is " + t.str(),
              ctx.text(0));
    return Type::error();
  }
  if (ctx.has(1)) {
    const Type& s = ctx.type(1);
    if (s.is_error()) return Type::error();
    if (!require_kind(ctx, 1, K::Int, "an int seed")) return Type::error();
  }
  if (ctx.has(2)) {  // Note [Dtype variables] in interp/check/generics.cpp
    Type d = ctx.type_arg(2);
    if (d.is_error()) return Type::error();
    if (t.model->dtype_param.empty()) {
      ctx.error(Code::E0303,
                ctx.span(2),
                "model `" + t.model->name + "` takes no dtype",
                "its fields' dtypes are written in its declaration")
          .help("declare it generic over its dtype: `model " + t.model->name +
                " T:`, with fields `[...] T`");
      return Type::error();
    }
    if (!d.is_tensor() || !d.shape.empty() || !types::is_float(d.dtype)) {
      ctx.error(Code::E0304,
                ctx.span(2),
                "dtype= is a float dtype: f32 f64 bf16 f16",
                ctx.text(2));
      return Type::error();
    }
    t.model_dtype = d.dtype;
  }
  return t;
}

Type train_rule(RuleCtx& ctx) {
  if (ctx.has(0)) {
    const Type& s = ctx.type(0);
    if (s.is_error()) return Type::error();
    if (!require_kind(ctx, 0, K::Int, "an int seed")) return Type::error();
  }
  return Type::of(K::Mode);
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          DeviceRule device = per_example()) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  d.device = device;
  return d;
}

}  // namespace

std::vector<OpDef> ops_optim() {
  constexpr ParamKind V = ParamKind::Value;
  const std::vector<Rule> rules =
      rules_by_kind(std::make_index_sequence<types::kOptimKinds>());
  std::vector<OpDef> out;
  for (const OptimizerSig& sig : optimizer_sigs()) {
    if (&sig - optimizer_sigs().data() != static_cast<ptrdiff_t>(sig.kind))
      throw std::logic_error("optimizer_sigs is not in OptimKind's order");
    std::vector<ParamSpec> params = {{"m"}, {"lr", V, sig.lr_required}};
    for (const HyperParam& h : sig.hypers) params.push_back({h.name, V, false});
    out.push_back(def(types::optim_names(sig.kind).fn,
                      std::move(params),
                      rules.at(static_cast<size_t>(sig.kind)),
                      sig.summary)
                      .with_torch(sig.torch));
  }
  std::vector<ParamSpec> group_params = {
      {"opt", V, true, true}, {"name"}, {"params"}, {"lr", V, false}};
  for (const HyperParam& h : all_hypers())
    group_params.push_back({h.name, V, false});
  out.push_back(
      def("add_param_group",
          std::move(group_params),
          add_param_group_rule,
          "a param group of opt with hyperparameters of its own: params "
          "names fields (\"w1\"), sub-models (\"norm\") or patterns "
          "(\"*.b\"); the rest keep opt's (nanoGPT's no-decay group)",
          host())
          .with_torch("opt.add_param_group({\"params\": [...], "
                      "\"weight_decay\": 0.0}), or param_groups given to "
                      "the optimizer"));
  for (OpDef& d : std::vector<OpDef>{
           def("update",
               {{"m", V, true, true}, {"opt", V, true, true}, {"g"}},
               update_rule,
               "one optimizer step: m and opt change",
               [] {
                 DeviceRule r;
                 r.device_work = true;  // E1803 in a controller fn
                 return r;
               }())
               .with_torch("opt.step() (the gradients are an argument here, "
                           "not p.grad)"),
           def("grad_scaler",
               {{"opt"},
                {"init_scale", V, false},
                {"growth_factor", V, false},
                {"backoff_factor", V, false},
                {"growth_interval", V, false}},
               grad_scaler_rule,
               "opt with torch's GradScaler for f16 mixed precision: "
               "value_and_grad(..., scaler=opt) scales the loss, update "
               "skips a step whose gradients hold an inf or a nan and moves "
               "the scale (init_scale=65536, growth_factor=2, "
               "backoff_factor=0.5, growth_interval=2000); opt.loss_scale "
               "reads it",
               host())
               .with_torch("scaler = torch.cuda.amp.GradScaler(); "
                           "scaler.scale(loss).backward(); "
                           "scaler.step(opt); scaler.update()"),
           def("set_params",
               {{"m", V, true, true}, {"p"}},
               set_params_rule,
               "writes every param of m from p, values shaped as m's params "
               "(m * 0.999 + n * 0.001: an EMA)")
               .with_torch("for q, v in zip(m.parameters(), p): "
                           "q.data.copy_(v)"),
           def("set_lr",
               {{"opt", V, true, true}, {"lr"}, {"group", V, false}},
               set_lr_rule,
               "sets opt's learning rate for the next updates: every "
               "group's, or group=\"name\"'s only (\"default\": the "
               "params no add_param_group took)",
               host())
               .with_torch("for g in opt.param_groups: g[\"lr\"] = lr; "
                           "opt.param_groups[i][\"lr\"] = lr"),
           def("cosine_lr",
               {{"step"}, {"total"}, {"lr"}, {"warmup", V, false}},
               schedule_rule<4>,
               "the lr at step: linear warm-up over warmup= steps, then cosine "
               "decay to 0 at total",
               host())
               .with_torch("none built in: transformers' "
                           "get_cosine_schedule_with_warmup, "
                           "or LambdaLR with that formula (docs/porting.md)"),
           def("step_lr",
               {{"step"}, {"lr"}, {"step_size"}, {"gamma", V, false}},
               schedule_rule<4>,
               "the lr at step: lr times gamma= (0.1) every step_size steps",
               host())
               .with_torch("torch.optim.lr_scheduler.StepLR(opt, step_size, "
                           "gamma): its lr after `step` calls of sched.step()"),
           def("linear_lr",
               {{"step"},
                {"lr"},
                {"start_factor", V, false},
                {"end_factor", V, false},
                {"total_iters", V, false}},
               schedule_rule<5>,
               "the lr at step: lr times a factor going linearly from "
               "start_factor= (1/3) to end_factor= (1.0) over total_iters= (5) "
               "steps, then kept: a linear warm-up",
               host())
               .with_torch(
                   "torch.optim.lr_scheduler.LinearLR(opt, start_factor, "
                   "end_factor, total_iters): its lr after `step` calls "
                   "of sched.step()"),
           def("init",
               {{"model", ParamKind::TypeArg},
                {"seed", V, false},
                {"dtype", ParamKind::TypeArg, false}},
               init_rule,
               "Model.init(seed=): a model with fresh params; dtype= makes "
               "a model generic over its dtype (`model Net T:`, the "
               "standard library's) in that dtype, f32 by default",
               host())
               .with_torch(
                   "Mlp() after torch.manual_seed(s) (other values: draws "
                   "keyed by seed and field path); dtype=: Mlp().to(dtype)"),
           def("Train",
               {{"seed", V, false}},
               train_rule,
               "the training Mode; dropout draws keyed by seed=",
               host())
               .with_torch(
                   "m.train() and torch.manual_seed(s); Eval: m.eval()"),
       })
    out.push_back(std::move(d));
  return out;
}

}  // namespace ss::ops
