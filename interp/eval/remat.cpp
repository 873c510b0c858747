// Note [Remat]
// remat(f) trades compute for memory: while gradients are recorded, a call
// through it runs f with recording off, so none of f's intermediates stay
// alive on the tape, and records one node for the whole call, with f's
// tensor inputs (tensor arguments, models' params) as its inputs. That
// node's VJP runs f again on fresh leaves with recording on and
// backpropagates the cotangent through the second run: f's intermediates
// exist only inside the backward pass (the FSDP example's policy, gathered
// params gathered again). The values are f's either way.
//
// It applies for a tensor result only (another result: f as it is).
// Inside an instance of an spmd fn, f's collectives need every instance
// again when f runs again: the instance's mesh says how (InstanceRemat,
// Note [Remat in instances]).
#include "interp/eval/remat.h"

#include "interp/eval/device_hooks.h"
#include "interp/eval/grad_inputs.h"
#include "interp/eval/objects.h"
#include "ops/api.h"

namespace ss::eval {

using VK = Value::Kind;

Value call_remat(Interpreter& in,
                 const check::FnInfo& fn,
                 std::vector<Value> args,
                 diag::Span site,
                 const std::vector<types::Type>* arg_types) {
  // The backward pass runs fn again from its values alone: a device mode
  // whose values' layout follows their types refuses here what it cannot
  // carry (split H's heads: heads_sites.cpp).
  if (DeviceHooks* d = in.device_hooks(); d && arg_types) {
    Frame scratch;
    std::vector<ParamShare> shares;
    d->bind_call(in, fn, scratch, site, arg_types, /*remat=*/true, shares);
  }
  if (in.mesh()) {
    if (auto* r = dynamic_cast<InstanceRemat*>(in.mesh()))
      return r->call_remat(in, fn, std::move(args), site);
    return in.call(fn, std::move(args), site);
  }
  return call_remat_here(in, fn, std::move(args), site);
}

Value call_remat_here(Interpreter& in,
                      const check::FnInfo& fn,
                      std::vector<Value> args,
                      diag::Span site,
                      RunAgain again) {
  if (!ops::GradMode::enabled() || fn.result.kind != types::Type::Kind::Tensor)
    return in.call(fn, std::move(args), site);
  if (!again) {
    const check::FnInfo* f = &fn;
    again = [&in, f, site](std::vector<Value> a) {
      return in.call(*f, std::move(a), site);
    };
  }
  std::vector<ops::Tensor> inputs;
  // The forward run sees the inputs themselves; a model's handle is kept
  // as it is (the identity swap needs no private store).
  std::vector<Value> plain;
  for (const Value& v : args) plain.push_back(v);
  swap_grad_inputs(args, inputs, [](const ops::Tensor& t) { return t; });
  if (inputs.empty()) return in.call(fn, std::move(args), site);
  Value r;
  {
    ops::GradMode::Guard off(false);
    r = in.call(fn, std::move(plain), site);
  }
  if (r.kind != VK::Tensor) return r;
  auto vjp = [again, args](const ops::Tensor& gy) {
    std::vector<ops::Tensor> found, leaves;
    std::vector<Value> fresh =
        swap_grad_inputs(args, found, [&](const ops::Tensor& t) {
          leaves.push_back(ops::requires_grad(t.detach()));
          return leaves.back();
        });
    ops::GradMode::Guard on(true);
    Value y = again(std::move(fresh));
    ops::Tensor root = ops::sum(ops::mul(y.t, gy.detach()));
    return ops::backward(root, leaves);
  };
  return Value::tensor(ops::record("remat", r.t, inputs, vjp));
}

}  // namespace ss::eval
