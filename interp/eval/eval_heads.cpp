// `split H` in the walk (Note [Split heads] in
// interp/devices/plan/heads_plan.cpp): each op whose operands or result
// have the split dim goes through the device hooks' plan, with its
// operands and a closure that computes it from them. One device, or a run
// without `split H`, never gets here.
#include "interp/eval/device_hooks.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_lib.h"

namespace ss::eval {

std::optional<int64_t> Interpreter::dim_size(const std::string& name) const {
  if (!local_dim_.empty() && name == local_dim_) return local_dim_size_;
  auto d = prog_.dims().find(name);
  if (d == prog_.dims().end()) return std::nullopt;
  return d->second;
}

// Note [Size variables carry the split]
// A value's layout under `split H` follows from its type (Note [Split
// heads]), but a fn checked once for every call names its axes by size
// variables: `fn attend(q: [b h n d])` given q: [b H n Dh], split along H,
// would see in its body a type with no H and take the worker's heads for
// the whole value (a sum over h covering 1/N of them, with no error). So
// a call records, per size variable bound to an axis of an argument's type
// that has H (`h` -> H, `m` -> (H Dh), `g` -> (3 H Dh)), that axis, and
// the plan of every op in the body reads its types with them put in: the
// body runs as if typed with H, and a value with H after another axis of
// a group stays whole, as it does there. The axis is pinned to dims and
// literals (the caller's other size variables by their sizes), so it means
// the same in the callee's frame; its size is read through it (axis_size),
// so the variable counts the local heads while an op runs on them. The
// binding and the types with it put in are check::bind_heads_vars and
// put_heads_vars (heads_plan.h), which `ss explain` walks a fn's body with
// too, as the first call it finds binds them (explain.cpp).
types::Type Interpreter::heads_type(const types::Type& t,
                                    const Frame& f,
                                    bool pin) const {
  return check::put_heads_vars(t, f.heads_vars, pin ? &f.sizes : nullptr);
}

void Interpreter::bind_heads_vars(const types::Type& param,
                                  const types::Type& arg,
                                  Frame& f) const {
  check::bind_heads_vars(param, arg, prog_.devices().split_dim, f.heads_vars);
}

void Interpreter::refuse_heads_remat(const check::FnInfo& fn,
                                     const std::vector<types::Type>& arg_types,
                                     diag::Span at) {
  // The backward pass runs fn again from its values alone (remat.cpp):
  // with no types there to carry the split, it would take the heads for
  // the whole value, so the call is refused rather than run wrong.
  for (size_t i = 0; i < fn.params.size() && i < arg_types.size(); ++i) {
    Frame scratch;
    bind_heads_vars(fn.params[i].type, arg_types[i], scratch);
    if (scratch.heads_vars.empty()) continue;
    const std::string& dim = prog_.devices().split_dim;
    fail("ValueError",
         at,
         "argument `" + fn.params[i].name + "` of remat(" + fn.name +
             ") is split along " + dim + ", and `" + fn.name + "` types it " +
             fn.params[i].type.str() + " with a size variable for " + dim +
             ": remat cannot carry the split",
         {"help: name the heads axis of `" + fn.params[i].name +
          "` by the dim " + dim + ", or call `" + fn.name + "` without remat"});
  }
}

std::optional<Value> Interpreter::on_heads(check::HeadsSite site,
                                           std::vector<ops::Tensor*> operands,
                                           const std::function<Value()>& run,
                                           diag::Span at) {
  // Note [Size variables carry the split]: in a fn typed by them.
  if (const Frame* f = current_frame(); f && !f->heads_vars.empty()) {
    for (types::Type& t : site.operands) t = heads_type(t, *f);
    site.result = heads_type(site.result, *f);
  }
  return hooks_->split_heads(*this, site, operands, run, at);
}

std::optional<Value> Interpreter::heads_builtin(BuiltinCall& c) {
  // Run in parts: each part is planned as it comes (heads_part).
  if (c.op.device.heads_parts) return std::nullopt;
  check::HeadsSite site;
  site.rule = c.op.device.heads;
  site.result = c.result_type();
  std::vector<ops::Tensor*> operands;
  bool over_given = false;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i < c.op.params.size() &&
        (c.op.params[i].kind == ops::ParamKind::Axes ||
         c.op.params[i].kind == ops::ParamKind::Axis) &&
        c.has(i))
      over_given = true;
    if (!c.has(i) || c.args[i].kind != Value::Kind::Tensor) continue;
    operands.push_back(&c.args[i].t);
    site.operands.push_back(c.arg_type(i));
  }
  if (c.info)
    for (const auto& [param, axes] : c.info->axes)
      site.over.insert(site.over.end(), axes.begin(), axes.end());
  site.reduces_all =
      !over_given && c.op.device.across == ops::Across::Reduction;
  // A tensor op given a model (linear(m.l1, x)) reads its params itself:
  // it runs whole, on them gathered (read_param), and on its other split
  // operands gathered.
  bool reads_model = false;
  for (size_t i = 0; i < c.args.size(); ++i)
    reads_model |= c.has(i) && c.args[i].kind == Value::Kind::Model;
  if (!c.op.forward) reads_model = false;
  if (reads_model) site.rule = ops::DeviceRule::Heads::Gathers;
  struct WholeParams {
    bool& flag;
    bool was;
    ~WholeParams() { flag = was; }
  } whole{whole_params_, whole_params_};
  whole_params_ = whole_params_ || reads_model;
  return on_heads(
      std::move(site),
      operands,
      [&] { return call_builtin_forward(c); },
      c.span);
}

ops::Tensor Interpreter::heads_part(
    BuiltinCall& c,
    size_t k,
    std::vector<ops::Tensor> operands,
    const std::function<ops::Tensor(std::vector<ops::Tensor>&)>& run) {
  if (!hooks_ || !hooks_->splits_heads() || !c.op.device.heads_parts)
    return run(operands);
  std::vector<types::Type> arg_types;
  for (size_t i = 0; i < c.op.params.size(); ++i)
    arg_types.push_back(c.arg_type(i));
  std::vector<ops::HeadsPart> parts =
      c.op.device.heads_parts(arg_types, c.result_type());
  if (k >= parts.size() || parts[k].operands.size() != operands.size())
    throw std::logic_error(std::string(c.op.name) + ": part " +
                           std::to_string(k) + " is not in its heads_parts");
  check::HeadsSite site;
  site.rule = parts[k].rule;
  site.operands = std::move(parts[k].operands);
  site.result = std::move(parts[k].result);
  std::vector<ops::Tensor*> ptrs;
  for (ops::Tensor& t : operands) ptrs.push_back(&t);
  std::optional<Value> v = on_heads(
      std::move(site),
      ptrs,
      [&] { return Value::tensor(run(operands)); },
      c.span);
  return v ? v->t : run(operands);
}

std::optional<ops::Tensor> Interpreter::gather_heads_param(
    const ModelRef& m, const std::string& path, diag::Span at) {
  const std::string full = m.prefix + path;
  auto h = m.store->heads.find(full);
  if (!whole_params_ || h == m.store->heads.end()) return std::nullopt;
  // The param as an operand split along its axis, gathered (its VJP
  // takes this rank's block), and nothing cut from the result.
  ops::Tensor t = m.get(path);
  types::Type split;
  split.kind = types::Type::Kind::Tensor;
  split.shape.assign(t.rank(), types::Axis::lit(1));
  split.shape[h->second - m.index.size()] =
      types::Axis::dim(prog_.devices().split_dim, -1);
  check::HeadsSite site;
  site.operands = {split};
  site.result.kind = types::Type::Kind::Unit;
  std::vector<ops::Tensor*> operands = {&t};
  std::optional<Value> v = on_heads(
      std::move(site), operands, [&] { return Value::tensor(t); }, at);
  return v ? std::optional<ops::Tensor>(v->t) : std::nullopt;
}

std::optional<ops::Tensor> Interpreter::read_heads_param(
    const ModelRef& m, const std::string& path, diag::Span at) {
  if (m.store->heads.count(m.prefix + path)) return std::nullopt;  // ours
  types::Type t = m.type;
  for (size_t start = 0; t.model && start <= path.size();) {
    size_t dot = std::min(path.find('.', start), path.size());
    const types::FieldInfo* fi =
        t.model->field(path.substr(start, dot - start));
    if (!fi) return std::nullopt;
    t = types::model_field_type(t, *fi);
    start = dot + 1;
  }
  if (t.kind != types::Type::Kind::Tensor) return std::nullopt;
  check::HeadsSite site;
  site.result = t;
  std::vector<ops::Tensor*> none;
  std::optional<Value> v = on_heads(
      std::move(site), none, [&] { return Value::tensor(m.get(path)); }, at);
  if (!v) return std::nullopt;
  return v->t;
}

}  // namespace ss::eval
