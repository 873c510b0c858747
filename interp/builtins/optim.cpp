// update (one step of an optimizer's rule: optimizers.cpp; a grad
// scaler's skip: grad_scaler.cpp), set_lr,
// cosine_lr, step_lr, linear_lr, Train.
#include <cmath>

#include "interp/builtins/grad_scaler.h"
#include "interp/builtins/optimizers.h"
#include "interp/eval/format.h"
#include "interp/eval/runtime_table.h"
#include "interp/eval/step_recording.h"
#include "ops/api.h"
#include "ops/backend/backend.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

// One step of [o]'s rule on every param of [m], in place: by the rule's
// backend kernel where it has one, else by its ops (Note [An optimizer's
// table entry]).
// Whether every param took the rule's kernel.
bool update_whole(ModelRef& m, OptimState& o, ModelRef& g) {
  const OptimizerRule& rule = optimizer_rule(o.kind);
  bool fused = true;
  for (const std::string& path : m.paths(true)) {
    std::string key = m.prefix + path;
    ops::Tensor& p = m.store->tensors.at(key);
    ops::Tensor grad = ops::cast(g.get(path), p.dtype());
    ParamState& st = o.state[key];
    if (rule.fused) {
      // values are immutable
      if (!p.unique_storage() && !AsRecorded::active()) p = p.clone();
      if (rule.fused(o.hyper_of(key), o.step, st, p, grad)) continue;
    }
    fused = false;
    p = rule.step(o.hyper_of(key), o.step, st, p, grad);
  }
  return fused;
}

Value update(BuiltinCall& c) {
  auto* m = c.arg(0).as<ModelRef>();
  auto* o = c.arg(1).as<OptimState>();
  auto* g = c.arg(2).as<ModelRef>();
  if (o->model != m->store)
    c.fail("ValueError",
           "update: this optimizer was made for another model (make it with "
           "adamw(m, ...) or sgd(m, ...) of the model it updates)");
  ops::GradMode::Guard off(false);
  StepRecording* rec = StepRecording::current();
  // scaler.step(opt); scaler.update() (Note [Loss scaling]).
  if (o->loss_scale.enabled) {
    if (rec)
      rec->refuse(
          "update with a grad scaler decides on the host whether to "
          "step");
    if (!scaler_allows_step(c, *o)) return Value::unit();
  }
  ++o->step;
  if (m->index.empty()) {
    const bool fused = update_whole(*m, *o, *g);
    // Note [Recorded steps] (interp/devices/recorded_calls.cpp): a replay
    // counts the step and patches the kernels' constants, which depend on
    // it and on the learning rate.
    if (rec && !fused)
      rec->refuse(
          "update runs this optimizer's rule as separate ops, whose "
          "constants change each step");
    else if (rec)
      rec->on_replay([mv = c.arg(0), ov = c.arg(1), gv = c.arg(2)] {
        ops::GradMode::Guard off(false);
        AsRecorded patch;
        auto* o = ov.as<OptimState>();
        ++o->step;
        update_whole(*mv.as<ModelRef>(), *o, *gv.as<ModelRef>());
      });
    return Value::unit();
  }
  if (rec)
    rec->refuse("update of a selected block runs its rule as separate ops");
  const OptimizerRule& rule = optimizer_rule(o->kind);
  for (const std::string& path : m->paths(true)) {
    ops::Tensor p = m->get(path);
    ops::Tensor grad = ops::cast(g->get(path), p.dtype());
    const std::string key = m->prefix + path;
    m->set(path, rule.step(o->hyper_of(key), o->step, o->state[key], p, grad));
  }
  return Value::unit();
}

// Every group's lr (torch's `for g in opt.param_groups`), or group=
// "name"'s only (Note [Param groups]).
Value set_lr(BuiltinCall& c) {
  double lr = c.number(1, 0);
  if (!(lr >= 0) || !std::isfinite(lr))
    c.fail("ValueError", "set_lr: the learning rate must be >= 0");
  auto* o = c.arg(0).as<OptimState>();
  if (!c.has(2)) {
    o->lr = lr;
    for (ParamGroup& g : o->groups) g.hyper.lr = lr;
  } else if (c.arg(2).s == "default") {
    o->lr = lr;
  } else {
    ParamGroup* group = nullptr;
    std::string names = "\"default\"";
    for (ParamGroup& g : o->groups) {
      if (g.name == c.arg(2).s) group = &g;
      names += ", \"" + g.name + "\"";
    }
    if (!group)
      c.fail("ValueError",
             "this optimizer has no param group \"" + c.arg(2).s + "\"",
             {"its groups: " + names});
    group->hyper.lr = lr;
  }
  o->hyper_newer = true;  // in the controller: for the workers' copy
  return Value::unit();
}

// Linear warm-up, then cosine decay to 0 (as transformers'
// get_cosine_schedule_with_warmup).
Value cosine_lr(BuiltinCall& c) {
  double step = c.number(0, 0), total = c.number(1, 1), lr = c.number(2, 0);
  double warmup = c.number(3, 0);
  if (step < warmup) return Value::floating(lr * step / std::max(1.0, warmup));
  double progress = (step - warmup) / std::max(1.0, total - warmup);
  return Value::floating(
      lr *
      std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * std::min(progress, 1.0)))));
}

// torch's StepLR: lr · gamma^⌊step / step_size⌋.
Value step_lr(BuiltinCall& c) {
  double step = c.number(0, 0), lr = c.number(1, 0);
  double size = c.number(2, 1), gamma = c.number(3, 0.1);
  if (!(size >= 1))
    c.fail("ValueError",
           "step_lr's step_size is a number of steps, at least 1, not " +
               format_number(size));
  return Value::floating(lr * std::pow(gamma, std::floor(step / size)));
}

// torch's LinearLR: the factor goes from start to end over total steps.
Value linear_lr(BuiltinCall& c) {
  double step = c.number(0, 0), lr = c.number(1, 0);
  double start = c.number(2, 1.0 / 3), end = c.number(3, 1.0);
  double total = c.number(4, 5);
  if (!(start > 0 && start <= 1) || !(end >= 0 && end <= 1))
    c.fail("ValueError",
           "linear_lr's start_factor is in (0, 1] and its end_factor in "
           "[0, 1] (torch's LinearLR)");
  const double t =
      total > 0 ? std::min(std::max(step, 0.0), total) / total : 1.0;
  return Value::floating(lr * (start + (end - start) * t));
}

Value train(BuiltinCall& c) {
  auto m = std::make_shared<ModeState>();
  m->train = true;
  m->seed = static_cast<uint64_t>(c.integer(0, 0));
  return Value::object(VK::Mode, m);
}

}  // namespace

std::vector<RuntimeEntry> lib_optim() {
  std::vector<RuntimeEntry> out;
  for (const types::OptimNames& o : types::optim_names())
    out.push_back({o.fn, make_optimizer});
  for (RuntimeEntry e :
       std::vector<RuntimeEntry>{{"update", update},
                                 {"set_lr", set_lr},
                                 {"add_param_group", add_param_group},
                                 {"grad_scaler", grad_scaler},
                                 {"cosine_lr", cosine_lr},
                                 {"step_lr", step_lr},
                                 {"linear_lr", linear_lr},
                                 {"Train", train}})
    out.push_back(e);
  return out;
}

}  // namespace ss::builtins
