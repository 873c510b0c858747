#pragma once
// What the entry fn's body holds when it returns: every param of each model
// bound there ("m.w1"), and its optimizers' largest step count. `ss
// conformance` compares them across device counts (devices.md 1); the
// devices layer keeps them (devices::Context, through
// DeviceHooks::entry_done).

#include <cstdint>
#include <map>
#include <string>

#include "ops/core/tensor.h"

namespace ss::eval {

struct Frame;

struct FinalParams {
  std::map<std::string, ops::Tensor> params;
  int64_t steps = 0;
};

/// The models' params and the optimizers' steps bound in [f].
FinalParams final_params_of(const Frame& f);

}  // namespace ss::eval
