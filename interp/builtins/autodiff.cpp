// value_and_grad, grad, clip_norm, remat, and the Grads forms of norm and
// zeros_like. Gradients come from the API's tape (ops/autodiff).
#include <algorithm>
#include <cmath>
#include <optional>

#include "interp/builtins/grad_scaler.h"
#include "interp/eval/device_hooks.h"
#include "interp/eval/runtime_table.h"
#include "interp/eval/tensor_values.h"
#include "ops/api.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

// A value_and_grad in an ordinary fn that an spmd fn called runs per
// instance, but the checker typed that body without varying sets, so which
// leaves are replicated (and so summed over their copies: Note [A gradient
// inside an instance] in ops/registry/mesh_comm.h) is unknown there. Giving
// each instance its own copy's gradient would differ from JAX's for a
// replicated leaf with no error, so it is refused, naming the way that is
// exact. Otherwise: the loss's varying set.
const std::vector<std::string>& loss_varying_or_refuse(BuiltinCall& c) {
  if (c.info && c.info->loss_varying) return *c.info->loss_varying;
  c.fail("ValueError",
         std::string(c.op.name) +
             " runs here inside an instance of an spmd fn, but in an " +
             "ordinary fn, whose values carry no varying sets, so the " +
             "gradient of a replicated leaf cannot be summed over its " +
             "copies as JAX does; call " + c.op.name +
             " in the spmd fn itself, where the checker knows them");
}

// The mesh axes a value that varies over [varying] is the same along: the
// rest, in mesh order (a leaf's are the axes its gradient is summed over).
std::vector<std::string> same_along(BuiltinCall& c,
                                    const std::vector<std::string>& varying) {
  std::vector<std::string> same;
  for (const check::MeshAxis& a : c.in.program().mesh())
    if (std::find(varying.begin(), varying.end(), a.name) == varying.end())
      same.push_back(a.name);
  return same;
}

// 1 when this instance holds the representative copy of a loss that is
// the same along [same] (index 0 along each of them), else 0.
double instance_seed(BuiltinCall& c, const std::vector<std::string>& same) {
  for (const std::string& a : same)
    if (c.in.mesh()->axis_index(a) != 0) return 0.0;
  return 1.0;
}

// The mesh axes model param [path] (a leaf of [rank] axes) varies over in
// an spmd fn: its model's spec on its top field (types::field_split, the
// rule model_field_type types it by), none for a 0-d param.
std::vector<std::string> param_varying(const types::Type& m,
                                       const std::string& path,
                                       size_t rank) {
  if (rank == 0) return {};
  std::vector<std::string> split =
      types::field_split(m, path.substr(0, path.find('.'))).axes;
  std::sort(split.begin(), split.end());
  return split;
}

// The backward pass of [scale] x [loss] to [leaves]; [varying][i]: the mesh
// axes leaf i varies over, inside an spmd fn. On several devices every rank
// holds the whole loss and the gradients are summed across the ranks
// (DeviceHooks::gradients; Note [Same result as one device] in
// interp/devices/lower/lowering.cpp).
std::vector<ops::Tensor> gradients(
    BuiltinCall& c,
    const ops::Tensor& loss,
    const std::vector<ops::Tensor>& leaves,
    const std::vector<bool>& pieces,
    const std::vector<std::vector<std::string>>& varying,
    std::optional<double> scale = std::nullopt) {
  Interpreter& in = c.in;
  if (ops::MeshComm* mesh = in.mesh()) {
    const double seed =
        instance_seed(c, same_along(c, loss_varying_or_refuse(c)));
    std::vector<std::vector<std::string>> tied;
    for (const std::vector<std::string>& v : varying)
      tied.push_back(same_along(c, v));
    return mesh->instance_gradients(loss, seed, leaves, tied);
  }
  if (DeviceHooks* d = in.device_hooks())
    if (auto g = d->gradients(loss, leaves, pieces, c.span, scale))
      return std::move(*g);
  return ops::backward(loss, leaves, nullptr, 1.0, scale.value_or(1.0));
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

// scaler=opt: the optimizer whose grad scaler scales the loss and
// unscales the gradients (Note [Loss scaling] in grad_scaler.cpp).
constexpr size_t kScaler = 3;

// The backward pass of [loss], scaled by [scaler]'s grad scaler, if any,
// and its gradients unscaled. [pieces]: some leaves are this device's
// pieces of a param.
std::vector<ops::Tensor> scaled_gradients(
    BuiltinCall& c,
    OptimState* scaler,
    const ops::Tensor& loss,
    const std::vector<ops::Tensor>& leaves,
    const std::vector<bool>& pieces,
    const std::vector<std::vector<std::string>>& varying,
    bool some_pieces) {
  if (!scaler) return gradients(c, loss, leaves, pieces, varying);
  // scaler.scale(loss).backward(): the pass starts from the scale.
  std::vector<ops::Tensor> g =
      gradients(c, loss, leaves, pieces, varying, scaler->loss_scale.scale);
  unscale(c, *scaler, g, some_pieces);
  return g;
}

// Calls f(m, extras...) with m's params as leaves and differentiates.
Differentiated differentiate(BuiltinCall& c, bool aux) {
  const Value& f = c.arg(0);
  const Value& m = c.arg(1);
  OptimState* scaler = c.has(kScaler) ? &scaler_of(c, kScaler) : nullptr;
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
    Value r = c.in.call_value(f, std::move(args), c.span, &types);
    const Value& loss = aux ? (*r.items)[0] : r;
    auto g = scaled_gradients(
        c, scaler, loss.t, {leaf}, {false}, {c.arg_type(1).varying}, false);
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
  std::vector<std::vector<std::string>> varying;  // inside an spmd fn
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
      varying.push_back(param_varying(c.arg_type(1), p, t.shape().size()));
    }
    store->tensors[p] = t;
    store->order.push_back(p);
    store->is_buffer[p] = buffer;
  }
  auto leaf_ref = std::make_shared<ModelRef>();
  leaf_ref->store = store;
  leaf_ref->type = ref->type;
  args[0] = Value::object(VK::Model, leaf_ref);
  Value r = c.in.call_value(f, std::move(args), c.span, &types);
  for (const std::string& p : ref->paths(false))
    if (store->is_buffer[p]) ref->set(p, store->tensors[p]);
  const Value& loss = aux ? (*r.items)[0] : r;
  if (loss.kind != VK::Tensor)
    c.fail("ValueError", std::string(c.op.name) + ": the loss is not a tensor");
  std::vector<ops::Tensor> g =
      scaled_gradients(c,
                       scaler,
                       loss.t,
                       leaves,
                       pieces,
                       varying,
                       !store->whole.empty() || !store->heads.empty());
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
//
// Note [Norms stay on the device]
// The norm is a 0-d f64 tensor on the gradients' device, never read on
// the host: the squares add in the same order as the host's doubles did
// (param by param, the pieces apart), so its bits are the same, and a
// step that logs norm(g) or clips its gradients can be recorded on a GPU
// (Note [Recorded steps] in interp/devices/recorded_calls.cpp). clip_norm
// multiplies by its coefficient clamped to 1, as torch's
// clip_grad_norm_ does, instead of asking the host whether to: x * 1 is
// x, so an unclipped gradient keeps its bits.
ops::Tensor global_norm(BuiltinCall& c, const Value& g) {
  // One tensor (clip_norm's rule takes one, as torch's clip_grad_norm_
  // does): its own L2 norm. It was read as a model, a null one (issue 32's
  // runtime fuzzer: `clip_norm(tensor([1.0, 2.0]), 0.5)` crashed).
  if (g.kind == Value::Kind::Tensor) {
    ops::Tensor t = ops::cast(g.t, types::DType::F64);
    return ops::sqrt(ops::sum(ops::mul(t, t)));
  }
  auto* m = g.as<ModelRef>();
  const std::map<std::string, ops::Shape> whole = m->whole_shapes();
  // `split H`: a rank's heads of a gradient are a piece of it too.
  const std::map<std::string, int> heads = m->heads_axes();
  ops::Tensor ss, pieces;  // undefined: nothing added yet (0)
  auto add_to = [](ops::Tensor& total, const ops::Tensor& x) {
    total = total.defined() ? ops::add(total, x) : x;
  };
  ops::Device device;
  DeviceHooks* hooks = c.in.device_hooks();
  for (const std::string& p : m->paths(true)) {
    ops::Tensor t = m->get(p);
    bool piece = whole.count(p) || heads.count(p);
    // Deterministic mode: a sharded gradient gathered whole, so that its
    // squares add as one device adds them.
    if (piece && hooks && !heads.count(p))
      if (std::optional<ops::Tensor> w = hooks->whole_for_sums(*m, p)) {
        t = *w;
        piece = false;
      }
    device = t.device();
    t = ops::cast(t, types::DType::F64);
    add_to(piece ? pieces : ss, ops::sum(ops::mul(t, t)));
  }
  auto zero = [&] { return ops::Tensor::zeros({}, types::DType::F64, device); };
  // The entry's device rule says it sums the pieces (ops/registry/
  // device_rule.h), which `ss explain` counts too.
  if ((!whole.empty() || !heads.empty()) && c.op.device.sums_grad_pieces)
    if (DeviceHooks* d = c.in.device_hooks())
      pieces = d->sum_over_pieces(pieces.defined() ? pieces : zero());
  if (pieces.defined()) add_to(ss, pieces);
  return ops::sqrt(ss.defined() ? ss : zero());
}

Value grads_norm(BuiltinCall& c) {
  // f64 when the checker says so (a model with f64 params), else f32.
  const types::Type& r = c.result_type();
  return Value::tensor(ops::cast(global_norm(c, c.arg(0)),
                                 r.is_tensor() ? r.dtype : types::DType::F32));
}

// torch.nn.utils.clip_grad_norm_: scaled by max / (norm + 1e-6), clamped
// to 1 (Note [Norms stay on the device]).
Value clip_norm(BuiltinCall& c) {
  double max = c.number(1, 1.0);
  if (!(max > 0)) c.fail("ValueError", "clip_norm needs max > 0");
  const Value& g = c.arg(0);
  if (g.kind == Value::Kind::Tensor && !types::is_float(g.t.dtype())) {
    // Scaled in its own dtype, an integer tensor would round the scale:
    // refused where it would be scaled (its norm read here).
    if (max / (global_norm(c, g).item() + 1e-6) >= 1.0) return g;
    c.fail("ValueError",
           "clip_norm scales float gradients, but this is a " +
               std::string(types::dtype_name(g.t.dtype())) + " tensor");
  }
  ops::Tensor norm = global_norm(c, g);
  ops::Tensor coef =
      ops::minimum(ops::div(ops::scalar_like(max, norm),
                            ops::add(norm, ops::scalar_like(1e-6, norm))),
                   ops::scalar_like(1.0, norm));
  auto scaled = [&](const ops::Tensor& t) {
    return ops::mul(t, ops::cast(coef, t.dtype()));
  };
  if (g.kind == Value::Kind::Tensor) return Value::tensor(scaled(g.t));
  return grads_map(g, scaled);
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
    return call_builtin_forward(one).t;
  });
}

// Note [Autocast] (interp/eval/autocast.cpp): the checker named the
// instance that runs f under autocast.
Value autocast(BuiltinCall& c) {
  Value f = c.arg(0);
  const types::Type& r = c.result_type();
  if (r.kind == types::Type::Kind::Fn && !r.fn_name.empty()) f.s = r.fn_name;
  return f;
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
          {"autocast", autocast},
          {"norm", grads_norm, Overload::OnGrads},
          {"zeros_like", grads_zeros_like, Overload::OnGrads},
          {"psum", grads_collective, Overload::OnGrads},
          {"pmean", grads_collective, Overload::OnGrads},
          {"pmax", grads_collective, Overload::OnGrads},
          {"pmin", grads_collective, Overload::OnGrads},
          {"pvary", grads_collective, Overload::OnGrads},
          {"ppermute", grads_collective, Overload::OnGrads},
          {"zeros_like", grads_zeros_like, Overload::OnModel}};
}

}  // namespace ss::builtins
