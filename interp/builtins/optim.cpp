// Optimizers with torch.optim's update rules, step by step (SGD with
// momentum, nesterov and weight decay; AdamW), set_lr, cosine_lr, step_lr,
// linear_lr, Train.
#include <cmath>

#include "interp/eval/format.h"
#include "interp/eval/runtime_table.h"
#include "ops/api.h"
#include "ops/backend/backend.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

std::shared_ptr<OptimState> make(BuiltinCall& c, types::OptimKind kind) {
  const Value& m = c.arg(0);
  if (m.kind != VK::Model) c.fail("ValueError", "an optimizer needs a model");
  auto o = std::make_shared<OptimState>();
  o->kind = kind;
  o->model = m.as<ModelRef>()->store;
  o->prefix = m.as<ModelRef>()->prefix;
  o->lr = c.number(1, 1e-3);
  if (!(o->lr >= 0) || !std::isfinite(o->lr))
    c.fail("ValueError",
           "the learning rate must be >= 0, got " + std::to_string(o->lr));
  return o;
}

Value sgd(BuiltinCall& c) {
  auto o = make(c, types::OptimKind::SGD);
  o->momentum = c.number(2, 0.0);
  o->weight_decay = c.number(3, 0.0);
  o->nesterov = c.flag(4, false);
  if (o->momentum < 0) c.fail("ValueError", "momentum must be >= 0");
  if (o->weight_decay < 0) c.fail("ValueError", "weight_decay must be >= 0");
  if (o->nesterov && o->momentum <= 0)
    c.fail("ValueError", "nesterov needs momentum > 0 (as torch.optim.SGD)");
  return Value::object(VK::Optim, o);
}

Value adamw(BuiltinCall& c) {
  auto o = make(c, types::OptimKind::AdamW);
  if (c.has(2)) {
    const Value& b = c.arg(2);
    if ((b.kind != VK::Tuple && b.kind != VK::List) || b.items->size() != 2)
      c.fail("ValueError", "betas= is a pair (b1, b2)");
    o->beta1 = (*b.items)[0].number();
    o->beta2 = (*b.items)[1].number();
  }
  o->eps = c.number(3, 1e-8);
  o->weight_decay = c.number(4, 0.01);
  if (!(o->beta1 >= 0 && o->beta1 < 1 && o->beta2 >= 0 && o->beta2 < 1))
    c.fail("ValueError", "betas must be in [0, 1)");
  if (!(o->eps >= 0)) c.fail("ValueError", "eps must be >= 0");
  if (!(o->weight_decay >= 0))
    c.fail("ValueError", "weight_decay must be >= 0");
  return Value::object(VK::Optim, o);
}

ops::Tensor scal(double v, const ops::Tensor& like) {
  return ops::scalar_like(v, like);
}

// One torch.optim.SGD step for one param.
ops::Tensor sgd_step(OptimState& o,
                     const std::string& path,
                     const ops::Tensor& p,
                     ops::Tensor g) {
  if (o.weight_decay != 0)
    g = ops::add(g, ops::mul(scal(o.weight_decay, p), p));
  if (o.momentum != 0) {
    auto& st = o.state[path];
    auto it = st.find("momentum_buffer");
    ops::Tensor buf;
    if (it == st.end()) {
      buf = g.clone();  // the first step copies the gradient
    } else {
      buf = ops::add(ops::mul(scal(o.momentum, it->second), it->second), g);
    }
    st["momentum_buffer"] = buf;
    g = o.nesterov ? ops::add(g, ops::mul(scal(o.momentum, buf), buf)) : buf;
  }
  return ops::sub(p, ops::mul(scal(o.lr, g), g));
}

// One torch.optim.AdamW step (amsgrad=False) for one param; o.step already
// counts this step.
ops::Tensor adamw_step(OptimState& o,
                       const std::string& path,
                       ops::Tensor p,
                       const ops::Tensor& g) {
  p = ops::mul(p, scal(1.0 - o.lr * o.weight_decay, p));
  auto& st = o.state[path];
  if (!st.count("exp_avg")) {
    st["exp_avg"] = ops::zeros_like(p);
    st["exp_avg_sq"] = ops::zeros_like(p);
  }
  ops::Tensor m = ops::add(ops::mul(scal(o.beta1, p), st["exp_avg"]),
                           ops::mul(scal(1.0 - o.beta1, p), g));
  ops::Tensor v = ops::add(ops::mul(scal(o.beta2, p), st["exp_avg_sq"]),
                           ops::mul(scal(1.0 - o.beta2, p), ops::mul(g, g)));
  st["exp_avg"] = m;
  st["exp_avg_sq"] = v;
  double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(o.step));
  double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(o.step));
  double step_size = o.lr / bc1;
  ops::Tensor denom =
      ops::add(ops::div(ops::sqrt(v), scal(std::sqrt(bc2), p)), scal(o.eps, p));
  return ops::sub(p, ops::mul(scal(step_size, p), ops::div(m, denom)));
}

// [t] with storage nobody else sees: the fused steps write in place, and
// values are immutable, so a tensor another value still holds is copied.
ops::Tensor& own(ops::Tensor& t) {
  if (!t.unique_storage()) t = t.clone();
  return t;
}

// The same rules as sgd_step/adamw_step, one fused pass per param on the
// backend (the common case: a whole model, not one of a stack).
void fused_update(ModelRef& m, OptimState& o, ModelRef& g) {
  for (const std::string& path : m.paths(true)) {
    std::string key = m.prefix + path;
    ops::Tensor& p = own(m.store->tensors.at(key));
    ops::Tensor grad = g.get(path);
    ops::Backend& be = ops::backend_for(p.device());
    auto& st = o.state[key];
    if (o.kind == types::OptimKind::AdamW) {
      if (!st.count("exp_avg")) {
        st["exp_avg"] = ops::Tensor::zeros(p.shape(), p.dtype(), p.device());
        st["exp_avg_sq"] = ops::Tensor::zeros(p.shape(), p.dtype(), p.device());
      }
      be.adamw_update(p,
                      grad,
                      own(st["exp_avg"]),
                      own(st["exp_avg_sq"]),
                      o.lr,
                      o.beta1,
                      o.beta2,
                      o.eps,
                      o.weight_decay,
                      o.step);
    } else if (o.momentum != 0) {
      bool first = !st.count("momentum_buffer");
      if (first)
        st["momentum_buffer"] =
            ops::Tensor::zeros(p.shape(), p.dtype(), p.device());
      be.sgd_update(p,
                    grad,
                    &own(st["momentum_buffer"]),
                    o.lr,
                    o.momentum,
                    o.weight_decay,
                    o.nesterov,
                    first);
    } else {
      be.sgd_update(p, grad, nullptr, o.lr, 0, o.weight_decay, false, false);
    }
  }
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
  ++o->step;
  if (m->index.empty()) {
    fused_update(*m, *o, *g);
    return Value::unit();
  }
  for (const std::string& path : m->paths(true)) {
    ops::Tensor p = m->get(path);
    ops::Tensor grad = ops::cast(g->get(path), p.dtype());
    std::string key = m->prefix + path;
    m->set(path,
           o->kind == types::OptimKind::SGD ? sgd_step(*o, key, p, grad)
                                            : adamw_step(*o, key, p, grad));
  }
  return Value::unit();
}

Value set_lr(BuiltinCall& c) {
  double lr = c.number(1, 0);
  if (!(lr >= 0) || !std::isfinite(lr))
    c.fail("ValueError", "set_lr: the learning rate must be >= 0");
  auto* o = c.arg(0).as<OptimState>();
  o->lr = lr;
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
  const double t = total > 0 ? std::min(std::max(step, 0.0), total) / total
                             : 1.0;
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
  return {{"sgd", sgd},
          {"adamw", adamw},
          {"update", update},
          {"set_lr", set_lr},
          {"cosine_lr", cosine_lr},
          {"step_lr", step_lr},
          {"linear_lr", linear_lr},
          {"Train", train}};
}

}  // namespace ss::builtins
