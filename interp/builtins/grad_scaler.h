#pragma once
// Dynamic loss scaling for f16 mixed precision, torch's GradScaler carried
// by an optimizer (Note [Loss scaling] in grad_scaler.cpp): grad_scaler
// makes one, value_and_grad's scaler= scales the loss and unscales the
// gradients, update steps or skips.

#include <vector>

#include "interp/eval/objects.h"
#include "interp/eval/runtime_lib.h"
#include "ops/core/tensor.h"

namespace ss::builtins {

/// grad_scaler(opt, init_scale=, growth_factor=, backoff_factor=,
/// growth_interval=): a copy of opt that carries a GradScaler.
eval::Value grad_scaler(eval::BuiltinCall& c);

/// The optimizer that [c]'s argument [i] (scaler=) names, checked to carry
/// a grad scaler and to be usable here.
eval::OptimState& scaler_of(eval::BuiltinCall& c, size_t i);

/// The gradients of a scaled loss divided by the scale, in place, as
/// scaler.unscale_(opt); records in [o] whether any element on any device
/// is inf or nan. [pieces]: some of them are this device's pieces of a
/// param (`shard params`, `split H`), so the finding is summed over the
/// devices.
void unscale(eval::BuiltinCall& c,
             eval::OptimState& o,
             std::vector<ops::Tensor>& grads,
             bool pieces);

/// In update, for an optimizer with a grad scaler: whether this step runs
/// (no inf or nan found since the last update); the scale moves as
/// scaler.update() moves it either way.
bool scaler_allows_step(eval::BuiltinCall& c, eval::OptimState& o);

}  // namespace ss::builtins
