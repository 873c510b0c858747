// grad_scaler and the loss scaling value_and_grad's scaler= and update do
// with it (Note [Loss scaling]).
#include "interp/builtins/grad_scaler.h"

#include <cmath>

#include "interp/eval/device_hooks.h"
#include "interp/eval/format.h"
#include "interp/eval/interpreter.h"
#include "ops/api.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

// Note [Loss scaling]
// f16 keeps 5 exponent bits: a gradient below 6e-8 is 0 and one above
// 65504 is inf. torch's GradScaler multiplies the loss by a scale (2^16 at
// first) so that the backward's f16 gradients stay in range, divides the
// f32 gradients by it, skips the optimizer step when any is inf or nan,
// and moves the scale: backoff_factor (0.5) at once on such a step,
// growth_factor (2) after growth_interval (2000) good steps in a row. Here
// the optimizer carries the scaler (as Keras's LossScaleOptimizer and
// DeepSpeed's fp16 optimizer do), so that it travels to the workers, into
// a checkpoint and back with the step it governs:
//
//   let opt = grad_scaler(adamw(m, lr=1e-3))          # GradScaler()
//   let l, g = value_and_grad(autocast(loss, f16), m, batch, scaler=opt)
//   update(m, opt, clip_norm(g, 1.0))                 # scaler.step(opt)
//
// value_and_grad's scaler= is scaler.scale(loss).backward() followed by
// scaler.unscale_(opt): the backward pass starts from the scale at the
// loss (the cotangent torch's product with the scale hands the loss; on
// several devices, Note [A scaled loss is seeded at the root] in
// interp/devices/lower/rank_context.cpp), the loss it returns is the
// unscaled one, the
// gradients are unscaled (so clip_norm and norm see true values), and the
// optimizer records whether any element was inf or nan (LossScale::
// found_inf; several calls before one update, gradient accumulation, add
// up as torch's scaled .grad do). update then is scaler.step(opt) and
// scaler.update(): it skips the step (no change to the params, the state or
// opt.step) or takes it, and moves the scale as torch's
// _amp_update_scale_ kernel does, in f32. opt.loss_scale is
// scaler.get_scale().
//
// On several devices every device decides alike: with data parallel the
// gradients are summed before they are unscaled, so each device holds the
// same ones; with `shard params` or `split H` each device holds pieces, so
// the count of devices that found an inf or a nan is summed over them (one
// f64, as norm's squares, and `ss explain` counts it). Each device's own
// backward runs on its share of the batch, so an f16 product over the batch
// (a weight's gradient) sums fewer rows and overflows later than on one
// device: N devices may skip other steps than one does, as torch's DDP
// does; the torch programs test both against torch computing the same
// shares (tests/torch/programs, MlpF16).

namespace {

// torch keeps the scale in an f32 tensor.
double as_f32(double x) {
  return static_cast<double>(static_cast<float>(x));
}

}  // namespace

Value grad_scaler(BuiltinCall& c) {
  if (c.arg(0).kind != VK::Optim)
    c.fail("ValueError", "grad_scaler takes an optimizer: adamw(m, ...)");
  auto* from = c.arg(0).as<OptimState>();
  sync(*from);  // the workers' step and state, if newer
  if (from->loss_scale.enabled)
    c.fail("ValueError",
           "this optimizer carries a grad scaler already (one scaler a "
           "training, as torch's GradScaler)");
  LossScale l;
  l.enabled = true;
  l.scale = as_f32(c.number(1, 65536.0));
  l.growth_factor = c.number(2, 2.0);
  l.backoff_factor = c.number(3, 0.5);
  const double interval = c.number(4, 2000);
  if (!(l.scale > 0) || !std::isfinite(l.scale))
    c.fail("ValueError",
           "grad_scaler's init_scale must be a positive f32, not " +
               format_number(c.number(1, 0)));
  // torch's GradScaler checks these two.
  if (!(l.growth_factor > 1.0) || !std::isfinite(l.growth_factor))
    c.fail("ValueError", "grad_scaler's growth_factor must be > 1.0");
  if (!(l.backoff_factor > 0.0 && l.backoff_factor < 1.0))
    c.fail("ValueError", "grad_scaler's backoff_factor must be in (0, 1)");
  if (!(interval >= 1) || interval != std::floor(interval) || interval > 9e15)
    c.fail("ValueError",
           "grad_scaler's growth_interval is a number of steps, at least 1, "
           "not " +
               format_number(interval));
  l.growth_interval = static_cast<int64_t>(interval);
  // A new optimizer, not the old one changed: the workers may hold the old
  // one under its id, and a fresh object is sent whole on its first use.
  auto o = std::make_shared<OptimState>(*from);
  o->remote_id = 0;
  o->newer_on = nullptr;
  o->hyper_newer = false;
  for (auto& [path, st] : o->state)  // fused steps write state in place
    for (auto& [name, t] : st)
      if (t.defined()) t = t.clone();
  o->loss_scale = l;
  return Value::object(VK::Optim, o);
}

OptimState& scaler_of(BuiltinCall& c, size_t i) {
  const Value& v = c.arg(i);
  auto* o = v.kind == VK::Optim ? v.as<OptimState>() : nullptr;
  if (!o || !o->loss_scale.enabled)
    c.fail("ValueError",
           "scaler= takes an optimizer that carries a grad scaler, made by "
           "grad_scaler",
           {"write `let opt = grad_scaler(adamw(m, lr=1e-3))`, then "
            "`value_and_grad(f, m, x, scaler=opt)` and `update(m, opt, g)`"});
  if (c.in.mesh())
    c.fail("ValueError",
           "scaler= inside an spmd fn: each instance holds its own "
           "gradients, and which are inf cannot be agreed on here",
           {"take the gradients with scaler= outside the spmd fn, or check "
            "them with psum of isfinite"});
  return *o;
}

void unscale(BuiltinCall& c,
             OptimState& o,
             std::vector<ops::Tensor>& grads,
             bool pieces) {
  ops::GradMode::Guard off(false);
  // torch: scale.double().reciprocal().float(), multiplied in.
  const double inv = as_f32(1.0 / o.loss_scale.scale);
  bool found = false;
  for (ops::Tensor& g : grads) {
    if (!g.defined()) continue;
    found = found || !ops::all(ops::isfinite(g)).item();
    g = ops::mul(g, ops::scalar_like(inv, g));
  }
  double devices = found ? 1.0 : 0.0;
  if (pieces && c.op.device.sums_grad_pieces)
    if (DeviceHooks* d = c.in.device_hooks())
      devices =
          d->sum_over_pieces(ops::Tensor::scalar(devices, types::DType::F64))
              .item();
  o.loss_scale.found_inf = o.loss_scale.found_inf || devices > 0;
  ++o.loss_scale.unscaled;
}

bool scaler_allows_step(BuiltinCall& c, OptimState& o) {
  LossScale& l = o.loss_scale;
  if (l.unscaled == 0)
    c.fail("ValueError",
           "update: this optimizer carries a grad scaler, but no "
           "value_and_grad(..., scaler=opt) took gradients since its last "
           "update, so these were never scaled",
           {"take them with `value_and_grad(f, m, x, scaler=opt)`"});
  const bool step = !l.found_inf;
  if (!step) {
    l.scale = as_f32(l.scale * l.backoff_factor);
    l.growth_tracker = 0;
  } else if (l.growth_tracker + 1 == l.growth_interval) {
    const double grown = as_f32(l.scale * l.growth_factor);
    if (std::isfinite(grown)) l.scale = grown;
    l.growth_tracker = 0;
  } else {
    ++l.growth_tracker;
  }
  l.unscaled = 0;
  l.found_inf = false;
  return step;
}

}  // namespace ss::builtins
