#pragma once
// The tensors of a call's arguments that need a gradient, each replaced
// through a function: remat(f)'s fresh leaves (remat.cpp), and a worker's
// cut of a whole argument whose cotangent is summed over the ranks
// (interp/devices/lower/rank_spmd.cpp).

#include <vector>

#include "interp/eval/objects.h"
#include "interp/eval/value.h"
#include "ops/autodiff/tape.h"

namespace ss::eval {

/// The tensors of [args] that need a gradient, in order, into [found], and
/// [args] with each replaced through [swap] (a model by a private store).
template <class Swap>
std::vector<Value> swap_grad_inputs(const std::vector<Value>& args,
                                    std::vector<ops::Tensor>& found,
                                    Swap&& swap) {
  using VK = Value::Kind;
  std::vector<Value> out;
  for (const Value& v : args) {
    if (v.kind == VK::Tensor && ops::needs_grad(v.t)) {
      found.push_back(v.t);
      out.push_back(Value::tensor(swap(v.t)));
    } else if (v.kind == VK::Model) {
      auto* m = v.as<ModelRef>();
      auto store = std::make_shared<ModelStore>(*m->store);
      // Every tensor of the handle as it sees it (a stack's slice), so
      // that the copy needs no index.
      for (const std::string& p : m->paths(false)) {
        ops::Tensor t = m->get(p);
        if (ops::needs_grad(t)) {
          found.push_back(t);
          t = swap(t);
        }
        store->tensors[m->prefix + p] = t;
      }
      auto r = std::make_shared<ModelRef>(*m);
      r->store = store;
      r->index.clear();  // the store holds this handle's own slices
      out.push_back(Value::object(VK::Model, r));
    } else {
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace ss::eval
