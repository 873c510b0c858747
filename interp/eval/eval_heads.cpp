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

std::optional<Value> Interpreter::on_heads(check::HeadsSite site,
                                           std::vector<ops::Tensor*> operands,
                                           const std::function<Value()>& run,
                                           diag::Span at) {
  return hooks_->split_heads(*this, site, operands, run, at);
}

std::optional<Value> Interpreter::heads_builtin(BuiltinCall& c) {
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
