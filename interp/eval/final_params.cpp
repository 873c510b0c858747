#include "interp/eval/final_params.h"

#include <algorithm>

#include "interp/eval/interpreter.h"

namespace ss::eval {

FinalParams final_params_of(const Frame& f) {
  using VK = Value::Kind;
  FinalParams out;
  for (const auto& scope : f.scopes)
    for (const auto& [name, v] : scope) {
      if (v.kind == VK::Optim)
        out.steps = std::max(out.steps, v.as<OptimState>()->step);
      if (v.kind != VK::Model) continue;
      auto* m = v.as<ModelRef>();
      for (const std::string& p : m->paths(true))
        out.params[name + "." + p] = m->get(p);
    }
  return out;
}

}  // namespace ss::eval
