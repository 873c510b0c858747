// value_and_grad, grad, clip_norm, remat, and the Grads forms of norm and
// zeros_like. Gradients come from the API's tape (ops/autodiff).
#include <algorithm>
#include <cmath>

#include "interp/eval/device_hooks.h"
#include "interp/eval/runtime_lib.h"
#include "interp/eval/tensor_values.h"
#include "ops/api.h"

namespace ss::eval {

using VK = Value::Kind;

namespace {

// The mesh axes the checker found the loss invariant over at this call
// (none outside an spmd fn's body).
std::vector<std::string> invariant_axes(BuiltinCall& c) {
  std::vector<std::string> invariant;
  if (!c.info || !c.info->loss_varying) return invariant;
  const std::vector<std::string>& varying = *c.info->loss_varying;
  for (const check::MeshAxis& a : c.in.program().mesh())
    if (std::find(varying.begin(), varying.end(), a.name) == varying.end())
      invariant.push_back(a.name);
  return invariant;
}

// Inside an instance of an spmd fn: how many instances' seeds of the loss
// its backward pass sums (Note [A gradient inside an instance] in
// ops/registry/mesh_comm.h), when f ran collectives ([ran]).
double invariant_copies(BuiltinCall& c, bool ran) {
  ops::MeshComm* mesh = c.in.mesh();
  if (!mesh || !ran || !c.info || !c.info->loss_varying) return 1.0;
  return mesh->copies_summed(invariant_axes(c));
}

// A loss invariant over mesh axes S with a term that reaches a leaf
// outside the collectives over S would get a wrong gradient in either mode
// (Note [Local terms of an invariant loss] in ops/autodiff/tape.cpp): a
// ValueError at the call, naming what to write instead.
void refuse_local_terms(BuiltinCall& c,
                        bool ran,
                        const ops::Tensor& loss,
                        const std::vector<ops::Tensor>& leaves) {
  if (!c.in.mesh() || !ran) return;
  const std::vector<std::string> axes = invariant_axes(c);
  const std::vector<std::string> skipped =
      ops::axes_skipped(loss, leaves, axes);
  if (skipped.empty()) return;
  auto listed = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& a : v) s += (s.empty() ? "" : ", ") + a;
    return (v.size() > 1 ? "mesh axes " : "mesh axis ") + s;
  };
  const std::string& first = skipped[0];
  c.fail("ValueError",
         std::string(c.op.name) + ": the loss is the same on every " +
             "instance along " + listed(axes) + ", but a term of it " +
             "reaches the differentiated value through no psum, pmean, " +
             "pmax or pmin over " + listed(skipped) + ", so its gradient " +
             "inside the spmd fn would not be the loss's; put the term " +
             "inside the collective, divided by the axis size " +
             "(psum(local + term / axis_size(" + first + "), " + first +
             ")), or differentiate the spmd fn from ordinary code");
}

// Whether f ran a collective since [before] (collectives_run()).
bool ran_collectives(BuiltinCall& c, uint64_t before) {
  return c.in.mesh() && c.in.mesh()->collectives_run() != before;
}

uint64_t collectives_now(BuiltinCall& c) {
  return c.in.mesh() ? c.in.mesh()->collectives_run() : 0;
}

// The backward pass of [loss] to [leaves]. On several devices every rank
// holds the whole loss and the gradients are summed across the ranks
// (DeviceHooks::gradients; Note [Same result as one device] in
// interp/devices/lower/lowering.cpp).
std::vector<ops::Tensor> gradients(BuiltinCall& c,
                                   bool ran,
                                   const ops::Tensor& loss,
                                   const std::vector<ops::Tensor>& leaves,
                                   const std::vector<bool>& pieces) {
  Interpreter& in = c.in;
  refuse_local_terms(c, ran, loss, leaves);
  if (DeviceHooks* d = in.device_hooks())
    if (auto g = d->gradients(loss, leaves, pieces, c.span))
      return std::move(*g);
  return ops::backward(loss, leaves, {}, 1.0 / invariant_copies(c, ran));
}

Value detach_value(const Value& v) {
  return v.kind == VK::Tensor ? Value::tensor(v.t.detach()) : v;
}

// f's result without its history, as value_and_grad returns it: the tape
// goes with it (unless aux holds more than a tensor).
Value released(const Value& r, bool aux) {
  if (!aux) return detach_value(r);
  return Value::tuple(
      {detach_value((*r.items)[0]), detach_value((*r.items)[1])});
}

struct Differentiated {
  Value result;  // f's result (loss, or (loss, aux))
  Value grads;   // Grads or a tensor
};

// Calls f(m, extras...) with m's params as leaves and differentiates.
Differentiated differentiate(BuiltinCall& c, bool aux) {
  const Value& f = c.arg(0);
  const Value& m = c.arg(1);
  std::vector<Value> args{Value()};
  for (const Value& v : c.extras) args.push_back(v);
  // The arguments' types, so that a split value passed on keeps its split
  // through f's size variables (Note [Size variables carry the split]).
  std::vector<types::Type> types{c.arg_type(1)};
  for (const ast::Expr* e : c.extra_exprs)
    types.push_back(e ? c.in.program().type_of(e) : types::Type());
  ops::GradMode::Guard on(true);
  if (m.kind == VK::Tensor) {
    ops::Tensor leaf = ops::requires_grad(m.t);
    args[0] = Value::tensor(leaf);
    const uint64_t before = collectives_now(c);
    Value r = c.in.call_value(f, std::move(args), c.span, &types);
    const Value& loss = aux ? (*r.items)[0] : r;
    auto g = gradients(c, ran_collectives(c, before), loss.t, {leaf}, {false});
    return {r, Value::tensor(g[0])};
  }
  if (m.kind != VK::Model)
    c.fail("ValueError",
           std::string(c.op.name) +
               " differentiates with respect to a model or a "
               "tensor");
  auto* ref = m.as<ModelRef>();
  // A private store whose params are leaves; buffers are shared values
  // copied back afterwards (batch_norm updates its running statistics).
  auto store = std::make_shared<ModelStore>();
  store->info = ref->type.model;
  store->args = ref->type.model_args;
  // `shard params`: the leaves are this rank's pieces, gathered where f
  // reads them (Note [Sharded params] in interp/devices/lower/shards.cpp).
  store->whole = ref->whole_shapes();
  store->heads = ref->heads_axes();  // `split H`: a rank's heads
  std::vector<std::string> params = ref->paths(true);
  std::vector<ops::Tensor> leaves;
  std::vector<bool> pieces;
  for (const std::string& p : ref->paths(false)) {
    bool buffer = ref->store->is_buffer[ref->prefix + p];
    ops::Tensor t = ref->get(p);
    if (!buffer) {
      const bool piece = store->whole.count(p) > 0;
      t = ops::requires_grad(t);
      // Every rank holds the whole model, or its own pieces (tape.cpp,
      // Note [Replicated cotangents]).
      if (!piece) t = ops::mark_replicated(t);
      leaves.push_back(t);
      pieces.push_back(piece);
    }
    store->tensors[p] = t;
    store->order.push_back(p);
    store->is_buffer[p] = buffer;
  }
  auto leaf_ref = std::make_shared<ModelRef>();
  leaf_ref->store = store;
  leaf_ref->type = ref->type;
  args[0] = Value::object(VK::Model, leaf_ref);
  const uint64_t before = collectives_now(c);
  Value r = c.in.call_value(f, std::move(args), c.span, &types);
  for (const std::string& p : ref->paths(false))
    if (store->is_buffer[p]) ref->set(p, store->tensors[p]);
  const Value& loss = aux ? (*r.items)[0] : r;
  if (loss.kind != VK::Tensor)
    c.fail("ValueError", std::string(c.op.name) + ": the loss is not a tensor");
  std::vector<ops::Tensor> g =
      gradients(c, ran_collectives(c, before), loss.t, leaves, pieces);
  std::map<std::string, ops::Tensor> by_path;
  for (size_t i = 0; i < params.size(); ++i) by_path[params[i]] = g[i];
  ModelRef like = *leaf_ref;
  Value grads = make_grads(like, by_path, store->whole, store->heads);
  r = released(r, aux);
  if (DeviceHooks* d = c.in.device_hooks()) d->tape_released();
  return {r, grads};
}

Value value_and_grad(BuiltinCall& c) {
  bool aux = c.flag(2, false);
  Differentiated d = differentiate(c, aux);
  if (aux)
    return Value::tuple({detach_value((*d.result.items)[0]),
                         detach_value((*d.result.items)[1]),
                         d.grads});
  return Value::tuple({detach_value(d.result), d.grads});
}

Value grad(BuiltinCall& c) {
  bool aux = c.flag(2, false);
  Differentiated d = differentiate(c, aux);
  if (aux) return Value::tuple({detach_value((*d.result.items)[1]), d.grads});
  return d.grads;
}

// The global L2 norm of every gradient, accumulated in f64. With `shard
// params` a rank holds pieces of the gradients (their padding is zero):
// the squares of its pieces are summed over the ranks, one number.
double global_norm(BuiltinCall& c, const Value& g) {
  auto* m = g.as<ModelRef>();
  const std::map<std::string, ops::Shape> whole = m->whole_shapes();
  // `split H`: a rank's heads of a gradient are a piece of it too.
  const std::map<std::string, int> heads = m->heads_axes();
  double ss = 0, pieces = 0;
  for (const std::string& p : m->paths(true)) {
    ops::Tensor t = ops::cast(m->get(p), types::DType::F64);
    (whole.count(p) || heads.count(p) ? pieces : ss) +=
        ops::sum(ops::mul(t, t)).item();
  }
  // The entry's device rule says it sums the pieces (ops/registry/
  // device_rule.h), which `ss explain` counts too.
  if ((!whole.empty() || !heads.empty()) && c.op.device.sums_grad_pieces)
    if (DeviceHooks* d = c.in.device_hooks())
      pieces = d->sum_over_pieces(pieces);
  return std::sqrt(ss + pieces);
}

Value grads_norm(BuiltinCall& c) {
  // f64 when the checker says so (a model with f64 params), else f32.
  const types::Type& r = c.result_type();
  return Value::tensor(ops::Tensor::scalar(
      global_norm(c, c.arg(0)), r.is_tensor() ? r.dtype : types::DType::F32));
}

// torch.nn.utils.clip_grad_norm_: scale by max / (norm + 1e-6) when < 1.
Value clip_norm(BuiltinCall& c) {
  double max = c.number(1, 1.0);
  if (!(max > 0)) c.fail("ValueError", "clip_norm needs max > 0");
  double coef = max / (global_norm(c, c.arg(0)) + 1e-6);
  if (coef >= 1.0) return c.arg(0);
  return grads_map(c.arg(0), [&](const ops::Tensor& t) {
    return ops::mul(t, ops::scalar_like(coef, t));
  });
}

Value grads_zeros_like(BuiltinCall& c) {
  return grads_map(c.arg(0),
                   [](const ops::Tensor& t) { return ops::zeros_like(t); });
}

// psum(g, batch) and its kin on gradients (the tutorial's DP with grad
// inside the spmd fn): the collective on each gradient tensor, in the
// Grads' path order, which every instance shares.
Value grads_collective(BuiltinCall& c) {
  return grads_map(c.arg(0), [&](const ops::Tensor& t) {
    BuiltinCall one = c;
    one.args[0] = Value::tensor(t);
    return c.in.call_builtin_forward(one).t;
  });
}

Value remat(BuiltinCall& c) {
  // Recomputing in the backward pass changes memory, not values: on the
  // reference interpreter the fn runs as it is.
  Value f = c.arg(0);
  f.b = true;
  return f;
}

}  // namespace

std::vector<RuntimeEntry> lib_autodiff() {
  return {{"value_and_grad", value_and_grad},
          {"grad", grad},
          {"clip_norm", clip_norm},
          {"remat", remat},
          {"grads.norm", grads_norm},
          {"grads.zeros_like", grads_zeros_like},
          {"grads.psum", grads_collective},
          {"grads.pmean", grads_collective},
          {"grads.pmax", grads_collective},
          {"grads.pmin", grads_collective},
          {"grads.pvary", grads_collective},
          {"grads.ppermute", grads_collective},
          {"model.zeros_like", grads_zeros_like}};
}

}  // namespace ss::eval
