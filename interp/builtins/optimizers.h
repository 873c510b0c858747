#pragma once
// Each optimizer's table entry: its hyperparameters, its per-param state
// and torch.optim's update rule (Note [An optimizer's table entry] in
// optimizers.cpp). `update` (optim.cpp), checkpoints (checkpoint.cpp) and
// the builtins that make an optimizer all read it.

#include <map>
#include <string>
#include <vector>

#include "interp/eval/objects.h"
#include "interp/eval/runtime_lib.h"
#include "ops/core/tensor.h"

namespace ss::builtins {

using ParamState = std::map<std::string, ops::Tensor>;

struct OptimizerRule {
  types::OptimKind kind;
  /// The hyperparameters a checkpoint's metadata holds, by torch's names
  /// (OptimHyper's, with "betas" for the pair beta1, beta2).
  std::vector<std::string> hypers;
  /// Each param's state, by torch's names.
  std::vector<std::string> state;
  /// One step of torch's rule for one param with its group's
  /// hyperparameters [o]: its new value. [st] is the param's state (empty
  /// before the first step); [step] counts this step.
  ops::Tensor (*step)(const eval::OptimHyper& o,
                      int64_t step,
                      ParamState& st,
                      ops::Tensor p,
                      ops::Tensor g);
  /// The same step in place on a whole param by one backend kernel, where
  /// there is one for these hyperparameters; else null.
  bool (*fused)(const eval::OptimHyper& o,
                int64_t step,
                ParamState& st,
                ops::Tensor& p,
                const ops::Tensor& g) = nullptr;
};

const OptimizerRule& optimizer_rule(types::OptimKind kind);

/// While one lives on a thread, a fused step takes each tensor as it is,
/// never a copy of one another value holds: a replay's patch of a recorded
/// step, whose kernels write the tensors the recording gave them (Note
/// [Recorded steps] in interp/devices/recorded_calls.cpp).
class AsRecorded {
 public:
  AsRecorded();
  ~AsRecorded();
  AsRecorded(const AsRecorded&) = delete;
  AsRecorded& operator=(const AsRecorded&) = delete;
  static bool active();

 private:
  bool prev_;
};

/// [kind]'s hyperparameters when its builtin is given none but the model
/// (torch.optim's defaults; Lion's its paper's).
eval::OptimHyper optimizer_defaults(types::OptimKind kind);

/// The builtin that makes any optimizer (sgd, adamw, adam, ...): its kind
/// is the builtin's name.
eval::Value make_optimizer(eval::BuiltinCall& c);

/// add_param_group(mut opt, name, params, lr=, ...) (Note [Param groups]).
eval::Value add_param_group(eval::BuiltinCall& c);

/// The paths of the params of [o]'s model, relative to it.
std::vector<std::string> param_paths(const eval::OptimState& o);

}  // namespace ss::builtins
